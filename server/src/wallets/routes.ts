/**
 * The in-app wallet's share store, every route behind the owner's live access token:
 * POST /wallets (create), /wallets/info, /wallets/shares, /wallets/recover (automatic),
 * /wallets/passcode/begin, /wallets/passcode/evaluate, /wallets/passcode/verify.
 * Only the wallet frame calls them, from the API's own origin.
 */
import {
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
import { Hono } from 'hono'
import type { Deps } from '../context.ts'
import { type HonoEnv, readBody, requireAuth } from '../http.ts'
import {
  authShare,
  beginPasscode,
  createWallet,
  evaluatePasscode,
  recoverLatch,
  verifyPasscode,
  walletInfo,
} from './service.ts'

export function walletRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
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
    const { blinded } = await readBody(c, walletPasscodeBeginBody)
    const answer: WalletPasscodeBeginResponse = await beginPasscode(
      deps,
      c.get('app').id,
      c.get('auth').sub,
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
