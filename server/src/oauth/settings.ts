/**
 * An app's OAuth settings: per provider, the client id and secret (Apple: the team key that
 * mints the secret) and optional endpoint overrides. Stored as JSON in apps.oauth_sealed,
 * sealed under the server secret; this schema reads and writes that JSON.
 */
import { OAUTH_PROVIDERS, type OAuthProvider } from '@latch/shared'
import { z } from 'zod'

const endpointUrl = z.string().url().max(2048)

export const endpointOverridesSchema = z
  .object({
    authorization: endpointUrl,
    token: endpointUrl,
    userinfo: endpointUrl,
    emails: endpointUrl,
    issuer: z.string().min(1).max(2048),
    jwks: endpointUrl,
  })
  .partial()
  .strict()

export const providerSettingsSchema = z
  .object({
    clientId: z.string().min(1).max(512),
    /** Absent for a public client (PKCE only) and for Apple with a team key. */
    clientSecret: z.string().min(1).max(4096).optional(),
    /** Apple: the team id, key id and .p8 key that mint the client secret. */
    appleTeamId: z.string().min(1).max(64).optional(),
    appleKeyId: z.string().min(1).max(64).optional(),
    applePrivateKey: z.string().min(1).max(4096).optional(),
    endpoints: endpointOverridesSchema.optional(),
  })
  .strict()

export type ProviderSettings = z.infer<typeof providerSettingsSchema>

export const oauthSettingsSchema = z
  .object(
    Object.fromEntries(OAUTH_PROVIDERS.map((p) => [p, providerSettingsSchema.optional()])) as {
      [P in OAuthProvider]: z.ZodOptional<typeof providerSettingsSchema>
    },
  )
  .strict()

export type OAuthSettings = z.infer<typeof oauthSettingsSchema>

/** Reads the settings JSON; anything unreadable counts as no settings at all. */
export function parseOAuthSettings(json: string | null | undefined): OAuthSettings {
  if (!json) return {}
  try {
    const parsed = oauthSettingsSchema.safeParse(JSON.parse(json))
    return parsed.success ? parsed.data : {}
  } catch {
    return {}
  }
}

/** The Apple team key of a provider's settings, when all three parts are there. */
export function appleKeyOf(
  settings: ProviderSettings,
): { teamId: string; keyId: string; privateKey: string } | undefined {
  const { appleTeamId, appleKeyId, applePrivateKey } = settings
  if (!appleTeamId || !appleKeyId || !applePrivateKey) return undefined
  return { teamId: appleTeamId, keyId: appleKeyId, privateKey: applePrivateKey }
}
