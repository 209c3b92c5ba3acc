/**
 * Checks of what crosses into the modal from the host page, with the shared shapes
 * (shared/src/shape.ts), whose issues carry their English messages.
 */
import {
  type HostAppConfig,
  hostAppConfigSchema,
  LatchError,
  validateHostConfig,
} from '@latch/shared'

/**
 * Validates what the host sent: the schema, then the input rules (docs/behaviour.md, "Input
 * rules"). Rejects with a LatchError; answers the checked configuration and its warnings.
 */
export async function checkHostConfig(
  input: unknown,
): Promise<{ config: HostAppConfig; warnings: string[] }> {
  const parsed = hostAppConfigSchema.safeParse(input ?? {})
  if (!parsed.success) {
    const [issue] = parsed.error.issues
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : ''
    throw LatchError.of('invalid_data', {
      message: `Invalid Latch configuration: ${where}${issue?.message ?? 'unreadable'}`,
    })
  }
  return validateHostConfig(parsed.data)
}
