/**
 * Verifying a Latch access token on the host's backend: an ES256 JWT signed with the app's key,
 * checked against the app's JWKS (fetched once and cached; a token naming an unknown key makes
 * one refetch at most every 30 s, so a key rotation is picked up without a restart).
 *
 * This checks the signature, issuer, audience (the app id) and expiry. It does not ask Latch
 * whether the session is still live: a token stays valid until it expires (15 minutes) even
 * after its user signed out or was deleted. Call the user API when that matters.
 */
import { type AccessTokenClaims, BaseError } from '@latch/shared/types'
import { createRemoteJWKSet, customFetch, errors, type JWTPayload, jwtVerify } from 'jose'

export type { AccessTokenClaims }

/** Where the API serves each app's keys (the server's API_PREFIX and JWKS route). */
const JWKS_PATH = '/api/v1/apps/{appId}/jwks.json'

export interface VerifyOptions {
  /** The app the token must be for (its `aud`). */
  appId: string
  /** The Latch API's public origin, e.g. `https://api.example.com` (not the modal origin). */
  apiUrl: string
  /** The server's LATCH_ISSUER (default `latch`). */
  issuer?: string
  /** Seconds of clock difference allowed on `exp` and `iat` (default 5). */
  clockToleranceS?: number
  /** How long one JWKS fetch may take, in milliseconds (default 5000). */
  jwksTimeoutMs?: number
  /** The fetch the JWKS is read with (default: the global fetch). */
  fetch?: typeof fetch
}

export type LatchAuthErrorCode =
  | 'missing_token'
  | 'invalid_token'
  | 'token_expired'
  | 'jwks_unavailable'

/** Why a token was refused; `status` is what a middleware answers with (401, or 503 without keys). */
export class LatchAuthError extends BaseError {
  override readonly name = 'LatchAuthError'
  readonly code: LatchAuthErrorCode
  readonly status: 401 | 503
  constructor(code: LatchAuthErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, { cause: options?.cause })
    this.code = code
    this.status = code === 'jwks_unavailable' ? 503 : 401
  }
}

export function jwksUrl(apiUrl: string, appId: string): URL {
  if (!URL.canParse(apiUrl)) throw new TypeError(`apiUrl is not a URL: ${apiUrl}`)
  const base = new URL(apiUrl)
  const path = JWKS_PATH.replace('{appId}', encodeURIComponent(appId))
  return new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base.origin)
}

/** A verifier with a JWKS of its own; keep one per app for the life of the process. */
export function createTokenVerifier(
  opts: VerifyOptions,
): (token: string) => Promise<AccessTokenClaims> {
  if (!opts.appId) throw new TypeError('appId is required')
  const fetchImpl = opts.fetch ?? fetch
  const jwks = createRemoteJWKSet(jwksUrl(opts.apiUrl, opts.appId), {
    timeoutDuration: opts.jwksTimeoutMs ?? 5000,
    // Any answer but a success means no keys, not a bad token: a 5xx is the API down behind
    // its proxy, a 404 an apiUrl that is not the API (the modal origin, say) or an unknown app.
    // Thrown as a plain error, which is answered as jwks_unavailable below.
    [customFetch]: async (url: string, init: RequestInit) => {
      const res = await fetchImpl(url, init)
      if (!res.ok) {
        await res.body?.cancel()
        throw new Error(`The JWKS at ${url} answered ${res.status}`)
      }
      return res
    },
  })
  const issuer = opts.issuer ?? 'latch'
  return async (token) => {
    if (!token) throw new LatchAuthError('missing_token', 'No access token')
    let payload: JWTPayload
    try {
      payload = (
        await jwtVerify(token, jwks, {
          issuer,
          audience: opts.appId,
          algorithms: ['ES256'],
          clockTolerance: opts.clockToleranceS ?? 5,
        })
      ).payload
    } catch (e) {
      if (e instanceof errors.JWTExpired) {
        throw new LatchAuthError('token_expired', 'The access token has expired', { cause: e })
      }
      if (
        e instanceof errors.JWKSTimeout ||
        e instanceof errors.JWKSInvalid ||
        (e instanceof Error && !(e instanceof errors.JOSEError))
      ) {
        throw new LatchAuthError('jwks_unavailable', 'The app’s signing keys could not be read', {
          cause: e,
        })
      }
      throw new LatchAuthError('invalid_token', 'The access token is not valid for this app', {
        cause: e,
      })
    }
    const { iss, aud, sub, sid, iat, exp } = payload
    if (
      typeof iss !== 'string' ||
      typeof aud !== 'string' ||
      typeof sub !== 'string' ||
      typeof sid !== 'string' ||
      typeof iat !== 'number' ||
      typeof exp !== 'number'
    ) {
      throw new LatchAuthError('invalid_token', 'The access token lacks Latch claims')
    }
    return { iss, aud, sub, sid, iat, exp }
  }
}

const verifiers = new Map<string, (token: string) => Promise<AccessTokenClaims>>()

/**
 * Verifies a Latch access token and answers its claims (`sub` is the user id, `sid` the
 * session), or throws LatchAuthError. The JWKS is cached per API, app and issuer.
 * @example const { sub } = await verifyAccessToken(token, { appId, apiUrl: 'https://api.example.com' })
 */
export function verifyAccessToken(token: string, opts: VerifyOptions): Promise<AccessTokenClaims> {
  if (opts.fetch) return createTokenVerifier(opts)(token)
  const key = JSON.stringify([opts.apiUrl, opts.appId, opts.issuer ?? 'latch'])
  let verify = verifiers.get(key)
  if (!verify) {
    verify = createTokenVerifier(opts)
    verifiers.set(key, verify)
  }
  return verify(token)
}

/** The token of an `Authorization: Bearer <token>` header, if that is what it holds. */
export function bearerToken(header: string | string[] | null | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  return /^Bearer\s+(\S+)$/i.exec(value ?? '')?.[1]
}

/** The body a middleware answers a refused token with: the Latch API's error shape. */
export function authErrorBody(e: LatchAuthError): {
  error: { type: 'api_error'; code: string; message: string }
} {
  const code = e.code === 'jwks_unavailable' ? 'jwks_unavailable' : 'not_authenticated'
  return { error: { type: 'api_error', code, message: e.message } }
}
