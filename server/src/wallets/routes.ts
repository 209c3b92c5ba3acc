/**
 * The in-app wallet's share store, every route behind the owner's live access token:
 * POST /wallets (create), /wallets/info, /wallets/shares, /wallets/recover (automatic),
 * /wallets/passcode/begin, /wallets/passcode/evaluate, /wallets/passcode/verify.
 * Only the wallet frame calls them, from the API's own origin: a browser request from any
 * other origin (the modal, a host page) is refused even with a valid token and even though
 * CORS admits the modal elsewhere, so a compromised modal cannot collect shares.
 */
import {
  LatchError,
  type WalletCreateResponse,
  type WalletEvaluateResponse,
  type WalletInfoResponse,
  type WalletPasscodeBeginResponse,
  type WalletSharesResponse,
  walletAddressBody,
  walletCreateBody,
  walletEvaluateBody,
  walletPasscodeBeginBody,
  walletVerifyBody,
} from '@latch/shared'
import { Hono, type MiddlewareHandler } from 'hono'
import type { Deps } from '../context.ts'
import { clientIp, type HonoEnv, readBody, requireAuth } from '../http.ts'
import { hit, type Limit } from '../ratelimit.ts'
import {
  authShare,
  beginPasscode,
  createWallet,
  evaluatePasscode,
  recoverLatch,
  verifyPasscode,
  walletInfo,
} from './service.ts'

/**
 * Starts of a passcode creation. Each evaluates under a fresh OPRF key (a guess there tells
 * nothing about any wallet) but costs a group operation and mints a sealed ticket: a creation
 * needs one or a few, so these only stop a token holder or an address from spending the
 * server's CPU in a loop. Past either, 429 too_many_requests with Retry-After.
 */
export const PASSCODE_BEGIN_USER_LIMIT: Limit = { max: 10, windowMs: 10 * 60_000 }
export const PASSCODE_BEGIN_IP_LIMIT: Limit = { max: 60, windowMs: 10 * 60_000 }

/**
 * Refuses browser requests that do not come from the API's own origin. Browsers send
 * Sec-Fetch-Site on every fetch (same-origin for the frame) and Origin on every POST; a
 * request without either is not from a browser page, and a token holder outside a browser is
 * the token thief of the threat table, whom the attempt counter answers.
 */
function sameOriginOnly(deps: Deps): MiddlewareHandler<HonoEnv> {
  return async (c, next) => {
    const site = c.req.header('sec-fetch-site')
    const origin = c.req.header('origin')
    const own = deps.config.publicUrl
      ? new URL(deps.config.publicUrl).origin
      : new URL(c.req.url).origin
    if ((site && site !== 'same-origin') || (origin && origin !== own)) {
      throw LatchError.of('origin_not_allowed', {
        message: 'Only the wallet frame may call the wallet API',
      })
    }
    await next()
  }
}

export function walletRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  routes.use('*', sameOriginOnly(deps))
  routes.use('*', requireAuth(deps))

  routes.post('/', async (c) => {
    const body = await readBody(c, walletCreateBody)
    const answer: WalletCreateResponse = await createWallet(
      deps,
      c.get('app').id,
      c.get('auth').sub,
      body,
    )
    return c.json(answer)
  })

  routes.post('/info', async (c) => {
    const { address } = await readBody(c, walletAddressBody)
    const answer: WalletInfoResponse = await walletInfo(
      deps,
      c.get('app').id,
      c.get('auth').sub,
      address,
    )
    return c.json(answer)
  })

  routes.post('/shares', async (c) => {
    const { address } = await readBody(c, walletAddressBody)
    const answer: WalletSharesResponse = await authShare(
      deps,
      c.get('app').id,
      c.get('auth').sub,
      address,
    )
    return c.json(answer)
  })

  routes.post('/recover', async (c) => {
    const { address } = await readBody(c, walletAddressBody)
    const answer: WalletSharesResponse = await recoverLatch(
      deps,
      c.get('app').id,
      c.get('auth').sub,
      address,
    )
    return c.json(answer)
  })

  routes.post('/passcode/begin', async (c) => {
    const userId = c.get('auth').sub
    const ip = clientIp(c, deps.config.trustProxy)
    await hit(deps.db, deps.clock, `wallet:begin:user:${userId}`, PASSCODE_BEGIN_USER_LIMIT)
    await hit(deps.db, deps.clock, `wallet:begin:ip:${ip}`, PASSCODE_BEGIN_IP_LIMIT)
    const { blinded } = await readBody(c, walletPasscodeBeginBody)
    const answer: WalletPasscodeBeginResponse = await beginPasscode(
      deps,
      c.get('app').id,
      userId,
      blinded,
    )
    return c.json(answer)
  })

  routes.post('/passcode/evaluate', async (c) => {
    const { address, blinded } = await readBody(c, walletEvaluateBody)
    const answer: WalletEvaluateResponse = await evaluatePasscode(
      deps,
      c.get('app').id,
      c.get('auth').sub,
      address,
      blinded,
    )
    return c.json(answer)
  })

  routes.post('/passcode/verify', async (c) => {
    const { address, verifier } = await readBody(c, walletVerifyBody)
    const answer: WalletSharesResponse = await verifyPasscode(
      deps,
      c.get('app').id,
      c.get('auth').sub,
      address,
      verifier,
    )
    return c.json(answer)
  })

  return routes
}
