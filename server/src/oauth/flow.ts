/**
 * The authorization-code flow with oauth4webapi: start (authorization URL), the provider's
 * return to the API's callback, and the finish that exchanges the code and reads the profile.
 */

import { createHash, timingSafeEqual } from 'node:crypto'
import {
  isLatchError,
  isOAuthDenial,
  LatchError,
  OAUTH_RETURN_PARAM_NAMES,
  type OAuthProvider,
} from '@latch/shared'
import * as oauth from 'oauth4webapi'
import { appleClientSecret } from './apple-client-secret.ts'
import {
  type OAuthAccountInput,
  PROVIDERS,
  type ProviderEndpoints,
  type ProviderSpec,
  resolveEndpoints,
  type ServerEndpointOverrides,
} from './providers.ts'
import { appleKeyOf, type OAuthSettings, type ProviderSettings } from './settings.ts'
import { OAUTH_STATE_TTL_MS, type OAuthStateRecord, type OAuthStateStore } from './state-store.ts'

/** What the flow needs to know about the app a request speaks for. */
export interface OAuthApp {
  id: string
  /** Host page origins the browser may be sent back to. */
  allowedOrigins: readonly string[]
  /** Login methods switched on, e.g. ['email', 'google']. */
  loginMethods: readonly string[]
  settings: OAuthSettings
}

export interface OAuthFlowDeps {
  store: OAuthStateStore
  /** The server's endpoint overrides (config.oauthEndpoints); none by default. */
  endpoints?: ServerEndpointOverrides
  now?: () => Date
  /** Each call to a provider gives up after this long. */
  timeoutMs?: number
  /** Told why a code exchange failed; the caller only sees oauth_invalid_code. */
  onProviderError?: (error: unknown) => void
}

/** Sent as the code to the host page when the provider answered with an error other than denial. */
export const PROVIDER_ERROR_CODE = 'provider_error'
/** Provider error values that mean the person said no. */
const DENIALS = new Set(['access_denied', 'user_cancelled_authorize'])
const DEFAULT_TIMEOUT_MS = 10_000
const USER_AGENT = 'latch'

interface ResolvedProvider {
  spec: ProviderSpec
  settings: ProviderSettings
  endpoints: ProviderEndpoints
  insecure: boolean
  discoverJwks: boolean
  as: oauth.AuthorizationServer
  client: oauth.Client
}

const serverCache = new Map<string, oauth.AuthorizationServer>()

/** One metadata object per set of endpoints, so oauth4webapi's JWKS cache lasts. */
function authorizationServer(endpoints: ProviderEndpoints): oauth.AuthorizationServer {
  const key = JSON.stringify(endpoints)
  let as = serverCache.get(key)
  if (!as) {
    as = {
      issuer: endpoints.issuer,
      authorization_endpoint: endpoints.authorization,
      token_endpoint: endpoints.token,
      ...(endpoints.userinfo ? { userinfo_endpoint: endpoints.userinfo } : {}),
      ...(endpoints.jwks ? { jwks_uri: endpoints.jwks } : {}),
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
    }
    serverCache.set(key, as)
  }
  return as
}

function isEnabled(app: OAuthApp, provider: OAuthProvider): boolean {
  return app.loginMethods.includes(provider)
}

const discoveredJwks = new Map<string, string>()

/** The jwks_uri an issuer publishes in its OIDC discovery document. */
async function discoverJwks(issuer: string, insecure: boolean, timeoutMs: number): Promise<string> {
  const known = discoveredJwks.get(issuer)
  if (known) return known
  const url = new URL(issuer)
  const res = await oauth.discoveryRequest(url, {
    algorithm: 'oidc',
    [oauth.allowInsecureRequests]: insecure,
    signal: AbortSignal.timeout(timeoutMs),
  })
  const metadata = await oauth.processDiscoveryResponse(url, res)
  if (!metadata.jwks_uri) throw new Error(`${issuer} publishes no jwks_uri`)
  discoveredJwks.set(issuer, metadata.jwks_uri)
  return metadata.jwks_uri
}

/** The provider as this app configured it; not enabled or not configured -> method_not_available. */
export function resolveProvider(
  app: OAuthApp,
  provider: OAuthProvider,
  serverOverrides?: ServerEndpointOverrides,
): ResolvedProvider {
  const settings = app.settings[provider]
  if (!isEnabled(app, provider) || !settings?.clientId) throw LatchError.of('method_not_available')
  const spec = PROVIDERS[provider]
  const resolved = resolveEndpoints(provider, settings.endpoints, serverOverrides?.[provider])
  return {
    spec,
    settings,
    ...resolved,
    as: authorizationServer(resolved.endpoints),
    client: { client_id: settings.clientId },
  }
}

async function clientAuth(p: ResolvedProvider): Promise<oauth.ClientAuth> {
  const appleKey = appleKeyOf(p.settings)
  const secret = appleKey
    ? await appleClientSecret(p.settings.clientId, appleKey)
    : p.settings.clientSecret?.trim()
  if (!secret) return oauth.None()
  return p.spec.clientAuth === 'basic'
    ? oauth.ClientSecretBasic(secret)
    : oauth.ClientSecretPost(secret)
}

/** True when `redirectTo` is an http(s) URL on one of the app's allowed origins. */
export function isAllowedRedirect(redirectTo: string, allowedOrigins: readonly string[]): boolean {
  let url: URL
  try {
    url = new URL(redirectTo)
  } catch {
    return false
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  return allowedOrigins.some((allowed) => {
    try {
      return new URL(allowed).origin === url.origin
    } catch {
      return false
    }
  })
}

export interface StartInput {
  app: OAuthApp
  provider: OAuthProvider
  redirectTo: string
  /** The API's callback URL for this provider, as the provider will call it. */
  redirectUri: string
  /** The signed-in user, when the flow is a link. */
  userId: string | null
  /** SHA-256 (base64url) of the secret the starting browser keeps to finish the flow. */
  browserHash: string
}

/**
 * Starts a flow: stores a fresh state (with the PKCE verifier and nonce) and answers the
 * provider's authorization URL.
 */
export async function startOAuth(deps: OAuthFlowDeps, input: StartInput): Promise<string> {
  const { app, provider, redirectTo, redirectUri, userId, browserHash } = input
  if (!isAllowedRedirect(redirectTo, app.allowedOrigins)) {
    throw LatchError.of('origin_not_allowed')
  }
  const p = resolveProvider(app, provider, deps.endpoints)
  const state = oauth.generateRandomState()
  const codeVerifier = p.spec.pkce ? oauth.generateRandomCodeVerifier() : null
  const nonce = p.spec.oidc ? oauth.generateRandomNonce() : null
  const now = deps.now?.() ?? new Date()
  await deps.store.put(state, {
    appId: app.id,
    provider,
    redirectTo,
    redirectUri,
    codeVerifier,
    nonce,
    userId,
    isLink: userId !== null,
    browserHash,
    expiresAt: new Date(now.getTime() + OAUTH_STATE_TTL_MS),
  })

  const url = new URL(p.endpoints.authorization)
  url.searchParams.set('client_id', p.settings.clientId)
  url.searchParams.set('redirect_uri', redirectUri)
  url.searchParams.set('response_type', 'code')
  url.searchParams.set('scope', p.spec.scopes.join(' '))
  url.searchParams.set('state', state)
  if (codeVerifier) {
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier))
    url.searchParams.set('code_challenge_method', 'S256')
  }
  if (nonce) url.searchParams.set('nonce', nonce)
  if (p.spec.responseMode === 'form_post') url.searchParams.set('response_mode', 'form_post')
  return url.href
}

/**
 * Where the API's callback sends the browser: the host page of the flow with the
 * latch_oauth_* parameters. A denial becomes the code 'undefined', which the modal reads as
 * `oauth_user_denied`.
 */
export async function callbackRedirect(
  deps: OAuthFlowDeps,
  provider: OAuthProvider,
  params: URLSearchParams,
): Promise<string> {
  const state = params.get('state')
  const record = state ? await deps.store.peek(state) : undefined
  if (!state || !record || record.provider !== provider) throw LatchError.of('oauth_invalid_code')
  const error = params.get('error')
  const code = params.get('code')
  const returned = error
    ? DENIALS.has(error)
      ? 'undefined'
      : PROVIDER_ERROR_CODE
    : code || PROVIDER_ERROR_CODE
  const url = new URL(record.redirectTo)
  url.searchParams.set(OAUTH_RETURN_PARAM_NAMES.code, returned)
  url.searchParams.set(OAUTH_RETURN_PARAM_NAMES.state, state)
  url.searchParams.set(OAUTH_RETURN_PARAM_NAMES.provider, provider)
  return url.href
}

export interface FinishInput {
  app: OAuthApp
  code: string
  state: string
  /** Set for a link (/oauth/link): the signed-in user; null for a sign-in (/oauth/authenticate). */
  userId: string | null
  /** The secret whose hash the starting browser sent to /oauth/init. */
  browserSecret: string
}

export interface FinishResult {
  record: OAuthStateRecord
  account: OAuthAccountInput
}

/** The base64url SHA-256 of a browser secret, as /oauth/init receives it. */
export function browserHashOf(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url')
}

/** Whether `secret` is the one whose hash the flow stored; constant time over the hashes. */
function isStartingBrowser(record: OAuthStateRecord, secret: string): boolean {
  if (!record.browserHash) return false
  const stored = Buffer.from(record.browserHash)
  const presented = Buffer.from(browserHashOf(secret))
  return stored.length === presented.length && timingSafeEqual(stored, presented)
}

const refuse = (details: string) => LatchError.of('oauth_invalid_code', { details })

/**
 * Why this request may not finish the flow, or null when it may: only the browser that started
 * it, and a sign-in only by /authenticate, a link only by /link with the starting user's token.
 */
function bindingRefusal(
  record: OAuthStateRecord,
  userId: string | null,
  secret: string,
): LatchError | null {
  if (!isStartingBrowser(record, secret)) {
    return refuse('This OAuth flow was started in another browser')
  }
  if (userId === null) {
    return record.isLink || record.userId !== null
      ? refuse('This OAuth flow links an account: finish it with /oauth/link')
      : null
  }
  if (!record.isLink || record.userId === null) {
    return refuse('This OAuth flow signs in: finish it with /oauth/authenticate')
  }
  return record.userId === userId ? null : refuse('This OAuth flow was started by another user')
}

/**
 * Finishes a flow: uses up the state (a refused attempt too: a state is tried once), checks
 * that this browser and this user started it, exchanges the code, checks the ID token and
 * nonce for OIDC providers and reads the profile. Every provider-side failure is
 * oauth_invalid_code.
 */
export async function finishOAuth(deps: OAuthFlowDeps, input: FinishInput): Promise<FinishResult> {
  const { app, code, state, userId, browserSecret } = input
  const record = await deps.store.take(state)
  if (isOAuthDenial(code)) throw LatchError.of('oauth_user_denied')
  if (!record || record.appId !== app.id) throw LatchError.of('oauth_invalid_code')
  const refusal = bindingRefusal(record, userId, browserSecret)
  if (refusal) throw refusal
  if (code === PROVIDER_ERROR_CODE) throw LatchError.of('oauth_invalid_code')
  const p = resolveProvider(app, record.provider, deps.endpoints)
  try {
    const account = await exchange(deps, p, record, code, state)
    return { record, account }
  } catch (e) {
    if (isLatchError(e)) throw e
    deps.onProviderError?.(e)
    throw LatchError.of('oauth_invalid_code', { cause: e })
  }
}

async function exchange(
  deps: OAuthFlowDeps,
  p: ResolvedProvider,
  record: OAuthStateRecord,
  code: string,
  state: string,
): Promise<OAuthAccountInput> {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const http = () => ({
    [oauth.allowInsecureRequests]: p.insecure,
    signal: AbortSignal.timeout(timeoutMs),
    headers: new Headers({ 'user-agent': USER_AGENT }),
  })
  const params = oauth.validateAuthResponse(
    p.as,
    p.client,
    new URLSearchParams({ code, state }),
    state,
  )
  const response = await oauth.authorizationCodeGrantRequest(
    p.as,
    p.client,
    await clientAuth(p),
    params,
    record.redirectUri,
    record.codeVerifier ?? oauth.nopkce,
    http(),
  )
  const tokens = await oauth.processAuthorizationCodeResponse(
    p.as,
    p.client,
    response,
    p.spec.oidc ? { expectedNonce: record.nonce ?? oauth.expectNoNonce, requireIdToken: true } : {},
  )
  let idToken: Record<string, unknown> | undefined
  if (p.spec.oidc) {
    const as = p.discoverJwks
      ? authorizationServer({
          ...p.endpoints,
          jwks: await discoverJwks(p.endpoints.issuer, p.insecure, timeoutMs),
        })
      : p.as
    // The ID token came over TLS from the token endpoint; its signature is checked anyway.
    await oauth.validateApplicationLevelSignature(as, response, http())
    idToken = oauth.getValidatedIdTokenClaims(tokens)
  }

  let userinfo: unknown
  if (p.endpoints.userinfo) {
    if (p.spec.oidc && idToken) {
      const res = await oauth.userInfoRequest(p.as, p.client, tokens.access_token, http())
      userinfo = await oauth.processUserInfoResponse(p.as, p.client, String(idToken.sub), res)
    } else {
      userinfo = await getJson(tokens.access_token, p.endpoints.userinfo, http())
    }
  }
  const emails = p.endpoints.emails
    ? await getJson(tokens.access_token, p.endpoints.emails, http())
    : undefined
  return p.spec.profile({ idToken, userinfo, emails })
}

async function getJson(
  accessToken: string,
  url: string,
  options: oauth.ProtectedResourceRequestOptions & { headers: Headers },
): Promise<unknown> {
  const { headers, ...rest } = options
  headers.set('accept', 'application/json')
  const res = await oauth.protectedResourceRequest(
    accessToken,
    'GET',
    new URL(url),
    headers,
    null,
    rest,
  )
  if (res.status !== 200) throw new Error(`${url} answered HTTP ${res.status}`)
  return res.json()
}
