/**
 * The in-app wallet's share store: POST /wallets/challenge, /wallets (create), /wallets/info,
 * /wallets/shares, /wallets/recover (automatic), /wallets/passcode/begin,
 * /wallets/passcode/evaluate, /wallets/passcode/verify, /wallets/passkey/options|add|recover
 * (passkeys.ts). Every route needs the owner's live
 * access token AND the session's wallet credential with same-origin fetch metadata
 * (credential.ts): only the wallet frame, in the browser where the user signed in, gets past.
 * The token alone (the host page, its backend, a log, a compromised modal) gets nothing.
 */
import {
  LatchError,
  type WalletChallengeResponse,
  type WalletCreateResponse,
  type WalletEvaluateResponse,
  type WalletInfoResponse,
  type WalletPasscodeBeginResponse,
  type WalletSharesResponse,
  walletAddressBody,
  walletCreateBody,
  walletEvaluateBody,
  walletPasscodeBeginBody,
  walletPasskeyAddBody,
  walletVerifyBody,
} from '@latch/shared'
import { Hono, type MiddlewareHandler } from 'hono'
import type { Deps } from '../context.ts'
import { clientIp, type HonoEnv, readBody, requireAuth } from '../http.ts'
import { hit, type Limit } from '../ratelimit.ts'
import { beginPasscode, createWallet, walletChallenge } from './create.ts'
import { requireWalletCredential } from './credential.ts'
import { walletHandedOver } from './fork-pair.ts'
import { evaluatePasscode, verifyPasscode } from './passcode.ts'
import { addPasskey, passkeyOptions, recoverWithPasskey } from './passkeys.ts'
import { authShare, recoverLatch, walletInfo } from './recovery.ts'

/**
 * Starts of a passcode creation. Each evaluates under a fresh OPRF key (a guess there tells
 * nothing about any wallet) but costs a group operation and mints a sealed ticket: a creation
 * needs one or a few, so these only stop a token holder or an address from spending the
 * server's CPU in a loop. Past either, 429 too_many_requests with Retry-After.
 */
export const PASSCODE_BEGIN_USER_LIMIT: Limit = { max: 10, windowMs: 10 * 60_000 }
export const PASSCODE_BEGIN_IP_LIMIT: Limit = { max: 60, windowMs: 10 * 60_000 }

export function walletRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  routes.use('*', requireAuth(deps))
  routes.use('*', requireWalletCredential(deps))

  routes.post('/challenge', async (c) => {
    const answer: WalletChallengeResponse = walletChallenge(
      deps,
      c.get('app').id,
      c.get('auth').sub,
    )
    return c.json(answer)
  })

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
      c.get('auth').sid,
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
      c.get('auth').sid,
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
      c.get('auth').sid,
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

  routes.post('/passkey/options', async (c) => {
    return c.json(passkeyOptions(deps, c.get('app'), c.get('auth').sub, c.req.url))
  })

  // An added passkey is a sealing the server cannot check, so an unpaired fork (a leaked fork
  // link) could fill the wallet's passkey slots with junk: refused as /shares refuses it
  // (fork-pair.ts), before the body or the wallet is read. The owner's frame adds a passkey
  // after /shares, which needs the same.
  const handedOver: MiddlewareHandler<HonoEnv> = async (c, next) => {
    if (!(await walletHandedOver(deps, c.get('auth').sid))) {
      throw LatchError.of('fork_wallet_not_confirmed')
    }
    await next()
  }

  routes.post('/passkey/add', handedOver, async (c) => {
    const body = await readBody(c, walletPasskeyAddBody)
    return c.json(await addPasskey(deps, c.get('app').id, c.get('auth').sub, body))
  })

  routes.post('/passkey/recover', async (c) => {
    const { address } = await readBody(c, walletAddressBody)
    const answer = await recoverWithPasskey(
      deps,
      c.get('app').id,
      c.get('auth').sub,
      address,
      c.req.url,
    )
    return c.json(answer)
  })

  return routes
}
