/** What the modal shows for each OAuth failure the server answers with. */
import type { ErrorCode } from './catalogue.ts'

/**
 * Keyed by the server's error code; the modal fills `{providerName}` (docs/behaviour.md,
 * "AWAITING_OAUTH_SCREEN").
 */
export const OAUTH_ERROR_DISPLAY = {
  linked_to_another_user: {
    message: 'This account has already been linked to another user.',
    retryable: false,
  },
  oauth_invalid_code: { message: 'Something went wrong. Try again.', retryable: true },
  oauth_user_denied: {
    message: 'Retry and check {providerName} to finish connecting your account.',
    retryable: true,
  },
} as const satisfies Partial<Record<ErrorCode, { message: string; retryable: boolean }>>

/** Fills `{name}` placeholders of a catalogue text. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole)
}
