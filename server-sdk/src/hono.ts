/**
 * `requireUser()` for Hono: answers 401 without a valid access token, else puts the token's
 * claims in `c.get('latchUser')`. Hono is imported for its types only.
 */
import type { MiddlewareHandler } from 'hono'
import {
  type AccessTokenClaims,
  authErrorBody,
  bearerToken,
  createTokenVerifier,
  LatchAuthError,
  type VerifyOptions,
} from './verify.ts'

export type LatchUserEnv = { Variables: { latchUser: AccessTokenClaims } }

/**
 * @example app.get('/me', requireUser({ appId, apiUrl }), (c) => c.json({ id: c.get('latchUser').sub }))
 */
export function requireUser(opts: VerifyOptions): MiddlewareHandler<LatchUserEnv> {
  const verify = createTokenVerifier(opts)
  return async (c, next) => {
    try {
      c.set('latchUser', await verify(bearerToken(c.req.header('authorization')) ?? ''))
    } catch (e) {
      if (!(e instanceof LatchAuthError)) throw e
      return c.json(authErrorBody(e), e.status)
    }
    await next()
  }
}
