/**
 * The five social sign-in providers in one table: where their endpoints are, what they are
 * asked for, and how their answers map onto the linked-account fields of `types.ts`.
 */
import {
  LatchError,
  OAUTH_PROVIDERS,
  type OAuthAccount,
  type OAuthProvider,
  oauthProviderSchema,
} from '@latch/shared'
import { z } from 'zod'
import type { NewAccount } from '../accounts/service.ts'
import type { EndpointOverrides } from './settings.ts'

// Read from the environment by config.ts, which must not import this file (it would run in a
// circle through the accounts service); they live in settings.ts, below both.
export { endpointsFromEnv, type ServerEndpointOverrides } from './settings.ts'

/** A linked OAuth account as a provider describes it, before it is stored (no verifiedAt). */
export type OAuthAccountInput = NewAccount<OAuthAccount>

export interface ProviderEndpoints {
  authorization: string
  token: string
  /** Where the profile is read with the access token; null when the ID token carries it. */
  userinfo: string | null
  /** GitHub only: the list of the user's e-mail addresses. */
  emails: string | null
  /** The `iss` of the ID token for OIDC providers; an identifier only for the others. */
  issuer: string
  jwks: string | null
}

/** What a provider answered, gathered by the flow before the profile is mapped. */
export interface RawProfile {
  /** Validated claims of the ID token (OIDC providers). */
  idToken: Record<string, unknown> | undefined
  /** Body of the userinfo endpoint, when the provider has one. */
  userinfo: unknown
  /** Body of the e-mails endpoint, when the provider has one. */
  emails: unknown
}

export interface ProviderSpec {
  accountType: OAuthAccount['type']
  endpoints: ProviderEndpoints
  scopes: string[]
  /** PKCE S256 on the authorization request. */
  pkce: boolean
  /** OpenID Connect: an ID token is required, validated, and bound to a nonce. */
  oidc: boolean
  /** How the client secret reaches the token endpoint. */
  clientAuth: 'basic' | 'post'
  /** Apple answers with a form POST when names or e-mail are requested. */
  responseMode: 'query' | 'form_post'
  profile(raw: RawProfile): OAuthAccountInput
}

const id = z.union([z.string().min(1), z.number().int()]).transform(String)
const optionalText = z
  .string()
  .nullish()
  .transform((v) => (v ? v : null))

const oidcClaims = z.object({
  sub: z.string().min(1),
  email: optionalText,
  // Apple sends booleans as strings.
  email_verified: z.union([z.boolean(), z.enum(['true', 'false'])]).optional(),
  name: optionalText,
})

/** Verified e-mail of an OIDC claim set, or null. */
function verifiedEmail(claims: z.infer<typeof oidcClaims>): string | null {
  if (claims.email_verified === false || claims.email_verified === 'false') return null
  return claims.email
}

const twitterUser = z.object({
  data: z.object({ id, username: optionalText, name: optionalText }),
})
const discordUser = z.object({
  id,
  username: optionalText,
  email: optionalText,
  verified: z.boolean().optional(),
})
const githubUser = z.object({ id, login: optionalText, name: optionalText })
const githubEmails = z.array(
  z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }),
)

export const PROVIDERS: Record<OAuthProvider, ProviderSpec> = {
  google: {
    accountType: 'google_oauth',
    endpoints: {
      authorization: 'https://accounts.google.com/o/oauth2/v2/auth',
      token: 'https://oauth2.googleapis.com/token',
      userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
      emails: null,
      issuer: 'https://accounts.google.com',
      jwks: 'https://www.googleapis.com/oauth2/v3/certs',
    },
    scopes: ['openid', 'email', 'profile'],
    pkce: true,
    oidc: true,
    clientAuth: 'post',
    responseMode: 'query',
    profile: ({ userinfo }) => {
      const claims = oidcClaims.parse(userinfo)
      return {
        type: 'google_oauth',
        subject: claims.sub,
        email: verifiedEmail(claims),
        name: claims.name,
      }
    },
  },
  twitter: {
    accountType: 'twitter_oauth',
    endpoints: {
      authorization: 'https://twitter.com/i/oauth2/authorize',
      token: 'https://api.twitter.com/2/oauth2/token',
      userinfo: 'https://api.twitter.com/2/users/me',
      emails: null,
      issuer: 'https://twitter.com',
      jwks: null,
    },
    scopes: ['users.read', 'tweet.read'],
    pkce: true,
    oidc: false,
    clientAuth: 'basic',
    responseMode: 'query',
    profile: ({ userinfo }) => {
      const { data } = twitterUser.parse(userinfo)
      return { type: 'twitter_oauth', subject: data.id, username: data.username, name: data.name }
    },
  },
  discord: {
    accountType: 'discord_oauth',
    endpoints: {
      authorization: 'https://discord.com/oauth2/authorize',
      token: 'https://discord.com/api/oauth2/token',
      userinfo: 'https://discord.com/api/users/@me',
      emails: null,
      issuer: 'https://discord.com',
      jwks: null,
    },
    scopes: ['identify', 'email'],
    pkce: true,
    oidc: false,
    clientAuth: 'post',
    responseMode: 'query',
    profile: ({ userinfo }) => {
      const user = discordUser.parse(userinfo)
      return {
        type: 'discord_oauth',
        subject: user.id,
        username: user.username,
        email: user.verified === true ? user.email : null,
      }
    },
  },
  github: {
    accountType: 'github_oauth',
    endpoints: {
      authorization: 'https://github.com/login/oauth/authorize',
      token: 'https://github.com/login/oauth/access_token',
      userinfo: 'https://api.github.com/user',
      emails: 'https://api.github.com/user/emails',
      issuer: 'https://github.com',
      jwks: null,
    },
    scopes: ['read:user', 'user:email'],
    pkce: true,
    oidc: false,
    clientAuth: 'post',
    responseMode: 'query',
    profile: ({ userinfo, emails }) => {
      const user = githubUser.parse(userinfo)
      const list = emails === undefined ? [] : githubEmails.parse(emails)
      const primary = list.find((e) => e.primary && e.verified)
      return {
        type: 'github_oauth',
        subject: user.id,
        username: user.login,
        name: user.name,
        email: primary?.email ?? null,
      }
    },
  },
  apple: {
    accountType: 'apple_oauth',
    endpoints: {
      authorization: 'https://appleid.apple.com/auth/authorize',
      token: 'https://appleid.apple.com/auth/token',
      userinfo: null,
      emails: null,
      issuer: 'https://appleid.apple.com',
      jwks: 'https://appleid.apple.com/auth/keys',
    },
    scopes: ['name', 'email'],
    pkce: false,
    oidc: true,
    clientAuth: 'post',
    responseMode: 'form_post',
    profile: ({ idToken }) => {
      const claims = oidcClaims.parse(idToken)
      return { type: 'apple_oauth', subject: claims.sub, email: verifiedEmail(claims) }
    },
  },
}

/** The provider of a linked-account type, e.g. 'google_oauth' -> 'google'. */
export function providerOfAccountType(type: string): OAuthProvider | undefined {
  return OAUTH_PROVIDERS.find((p) => PROVIDERS[p].accountType === type)
}

export function parseProvider(value: unknown): OAuthProvider | undefined {
  const parsed = oauthProviderSchema.safeParse(value)
  return parsed.success ? parsed.data : undefined
}

const OVERRIDE_FIELDS: Record<keyof EndpointOverrides, keyof ProviderEndpoints> = {
  issuer: 'issuer',
  authorizationUrl: 'authorization',
  tokenUrl: 'token',
  userInfoUrl: 'userinfo',
  emailsUrl: 'emails',
  jwksUrl: 'jwks',
}

function isLoopback(url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
}

export interface ResolvedEndpoints {
  endpoints: ProviderEndpoints
  /** Plain http is in use (a loopback stand-in); the HTTP client must allow it. */
  insecure: boolean
  /** The issuer was moved without a JWKS: find it by OIDC discovery. */
  discoverJwks: boolean
}

/**
 * The provider's endpoints with the server's overrides, then the app's, applied.
 * Every endpoint must be https, or http on a loopback host (a local stand-in).
 */
export function resolveEndpoints(
  provider: OAuthProvider,
  appOverrides: EndpointOverrides | undefined,
  serverOverrides: EndpointOverrides = {},
): ResolvedEndpoints {
  const spec = PROVIDERS[provider]
  const overrides: EndpointOverrides = { ...serverOverrides, ...appOverrides }
  const endpoints: ProviderEndpoints = { ...spec.endpoints }
  for (const [field, value] of Object.entries(overrides) as [keyof EndpointOverrides, string][]) {
    if (value) endpoints[OVERRIDE_FIELDS[field]] = value
  }
  // GitHub keeps the e-mails beside the user: /user -> /user/emails.
  if (spec.endpoints.emails && overrides.userInfoUrl && !overrides.emailsUrl) {
    const emails = new URL(overrides.userInfoUrl)
    emails.pathname = `${emails.pathname.replace(/\/+$/, '')}/emails`
    endpoints.emails = emails.href
  }
  const discoverJwks = spec.oidc && Boolean(overrides.issuer) && !overrides.jwksUrl
  if (discoverJwks) endpoints.jwks = null

  let insecure = false
  for (const [field, value] of Object.entries(endpoints)) {
    if (value === null || (field === 'issuer' && !discoverJwks)) continue
    let url: URL
    try {
      url = new URL(value)
    } catch (cause) {
      throw LatchError.of('method_not_available', {
        message: `The ${provider} ${field} endpoint is not a URL`,
        cause,
      })
    }
    if (url.protocol === 'http:' && isLoopback(url)) insecure = true
    else if (url.protocol !== 'https:') {
      throw LatchError.of('method_not_available', {
        message: `The ${provider} ${field} endpoint must use https`,
      })
    }
  }
  return { endpoints, insecure, discoverJwks }
}
