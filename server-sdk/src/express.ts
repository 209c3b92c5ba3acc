/**
 * `requireUser()` for Express (4 and 5): answers 401 without a valid access token, else sets
 * `req.latchUser` to the token's claims. Typed by the few members it uses, so this package
 * needs neither express nor its types.
 */
import {
  type AccessTokenClaims,
  authErrorBody,
  bearerToken,
  createTokenVerifier,
  LatchAuthError,
  type VerifyOptions,
} from './verify.ts'

export interface ExpressLikeRequest {
  headers: Record<string, string | string[] | undefined>
  latchUser?: AccessTokenClaims
}
export interface ExpressLikeResponse {
  status(code: number): { json(body: unknown): unknown }
}
export type ExpressLikeNext = (err?: unknown) => void

/**
 * @example app.get('/me', requireUser({ appId, apiUrl }), (req, res) => res.json({ id: req.latchUser.sub }))
 */
export function requireUser(
  opts: VerifyOptions,
): (req: ExpressLikeRequest, res: ExpressLikeResponse, next: ExpressLikeNext) => Promise<void> {
  const verify = createTokenVerifier(opts)
  return async (req, res, next) => {
    try {
      req.latchUser = await verify(bearerToken(req.headers.authorization) ?? '')
    } catch (e) {
      if (e instanceof LatchAuthError) {
        res.status(e.status).json(authErrorBody(e))
        return
      }
      // Express 4 does not catch a rejected promise: hand the error on.
      next(e)
      return
    }
    next()
  }
}
