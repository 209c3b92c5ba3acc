/**
 * An app's OAuth settings: per provider, the client id and secret (Apple: the team key that
 * mints the secret) and optional endpoint overrides. Stored as JSON in apps.oauth_sealed,
 * sealed under the server secret; this schema reads and writes that JSON.
 */
import { OAUTH_PROVIDERS, type OAuthProvider } from '@latch/shared'
import { z } from 'zod'

const endpointUrl = z.string().url().max(2048)

/**
 * Endpoint overrides of one provider. When the issuer of
 * an OIDC provider is overridden without `jwksUrl`, the JWKS is found by OIDC discovery; when
 * GitHub's `userInfoUrl` is overridden without `emailsUrl`, the e-mails are at
 * `<userInfoUrl>/emails`, as on GitHub.
 */
export const endpointOverridesSchema = z
  .object({
    issuer: z.string().min(1).max(2048),
    authorizationUrl: endpointUrl,
    tokenUrl: endpointUrl,
    userInfoUrl: endpointUrl,
    emailsUrl: endpointUrl,
    jwksUrl: endpointUrl,
  })
  .partial()
  .strict()

export type EndpointOverrides = z.infer<typeof endpointOverridesSchema>

export const providerSettingsSchema = z
  .object({
    clientId: z.string().min(1).max(512),
    /** Absent or empty for a public client (PKCE only) and for Apple with a team key. */
    clientSecret: z.string().max(4096).optional(),
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

/** Reads an app's stored settings; a provider whose settings do not parse counts as unconfigured. */
export function parseOAuthSettings(value: unknown): OAuthSettings {
  if (typeof value !== 'object' || value === null) return {}
  const out: OAuthSettings = {}
  for (const provider of OAUTH_PROVIDERS) {
    const parsed = providerSettingsSchema.safeParse((value as Record<string, unknown>)[provider])
    if (parsed.success) out[provider] = parsed.data
  }
  return out
}

/** The Apple team key of a provider's settings, when all three parts are there. */
export function appleKeyOf(
  settings: ProviderSettings,
): { teamId: string; keyId: string; privateKey: string } | undefined {
  const { appleTeamId, appleKeyId, applePrivateKey } = settings
  if (!appleTeamId || !appleKeyId || !applePrivateKey) return undefined
  return { teamId: appleTeamId, keyId: appleKeyId, privateKey: applePrivateKey }
}

const ENV_SUFFIXES: Record<keyof EndpointOverrides, string> = {
  issuer: 'ISSUER',
  authorizationUrl: 'AUTHORIZATION_URL',
  tokenUrl: 'TOKEN_URL',
  userInfoUrl: 'USERINFO_URL',
  emailsUrl: 'EMAILS_URL',
  jwksUrl: 'JWKS_URL',
}

/**
 * Endpoint overrides from the environment: `LATCH_OAUTH_<PROVIDER>_<FIELD>`, e.g.
 * `LATCH_OAUTH_GOOGLE_TOKEN_URL`. Fields: ISSUER, AUTHORIZATION_URL, TOKEN_URL, USERINFO_URL,
 * EMAILS_URL, JWKS_URL.
 */
export function endpointsFromEnv(
  provider: OAuthProvider,
  env: Record<string, string | undefined>,
): EndpointOverrides {
  const out: EndpointOverrides = {}
  for (const [field, suffix] of Object.entries(ENV_SUFFIXES) as [
    keyof EndpointOverrides,
    string,
  ][]) {
    const value = env[`LATCH_OAUTH_${provider.toUpperCase()}_${suffix}`]?.trim()
    if (value) out[field] = value
  }
  return out
}

/** The server's endpoint overrides per provider (config.ts reads them from the environment). */
export type ServerEndpointOverrides = Partial<Record<OAuthProvider, EndpointOverrides>>
