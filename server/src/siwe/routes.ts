/** Sign-In with Ethereum: POST /siwe/{init,authenticate,link,unlink}. */

import {
  isLatchError,
  isSupportedChainId,
  LatchError,
  SIWE_HASH_HEADER,
  SIWE_SECRET_HEADER,
  siweAuthenticateBody,
  siweInitBody,
  siweUnlinkBody,
} from '@latch/shared'
import { type Context, Hono } from 'hono'
import type { Hex } from 'viem'
import { requireAccountCredential } from '../accounts/change-gate.ts'
import { consumeLinkApproval } from '../accounts/link-approval.ts'
import { linkAccount, unlinkAccount } from '../accounts/service.ts'
import { type AppRecord, requireMethod } from '../apps/service.ts'
import type { Deps } from '../context.ts'
import { clientIp, type HonoEnv, optionalAuth, readBody, requireAuth } from '../http.ts'
import { hit, type Limit } from '../ratelimit.ts'
import { signIn } from '../sessions/service.ts'
import { answerSignIn } from '../wallets/credential.ts'
import { issueNonce, verifySiwe } from './service.ts'

/** Nonces one client address may ask for: a sign-in asks once, a retry or two more. */
export const SIWE_INIT_IP_LIMIT: Limit = { max: 30, windowMs: 5 * 60_000 }
/** Nonces an app's visitors may ask for together, whatever their addresses. */
export const SIWE_INIT_APP_LIMIT: Limit = { max: 3000, windowMs: 5 * 60_000 }
/** Signed messages one client address may present (each may cost a call to the chain's node). */
export const SIWE_VERIFY_IP_LIMIT: Limit = { max: 30, windowMs: 5 * 60_000 }

const BASE64URL_32 = /^[A-Za-z0-9_-]{43}$/

/** The body's chain id (a number, its decimal text, or CAIP-2 'eip155:N'), if supported. */
function chainIdOf(raw: string | number): number {
  const text = String(raw)
  const digits = /^(?:eip155:)?([1-9][0-9]{0,15})$/.exec(text)?.[1]
  const id = digits === undefined ? Number.NaN : Number(digits)
  if (!isSupportedChainId(id)) throw LatchError.of('unsupported_chain')
  return id
}

/** Whether the app's allowlist, when on, names the address (in any letter case). */
function allowsAddress(app: AppRecord, address: string): boolean {
  const a = address.toLowerCase()
  return !app.allowlist.enabled || app.allowlist.entries.some((e) => e.toLowerCase() === a)
}

export function siweRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  // Link and unlink need the signed-in browser's session credential (accounts/change-gate.ts).
  const changeGate = requireAccountCredential(deps)

  routes.post('/init', optionalAuth(deps), async (c) => {
    const body = await readBody(c, siweInitBody)
    const app = c.get('app')
    requireMethod(app, 'wallet')
    const hash = c.req.header(SIWE_HASH_HEADER)
    if (hash !== undefined && !BASE64URL_32.test(hash)) {
      throw LatchError.of('invalid_data', {
        message: `${SIWE_HASH_HEADER} must be a SHA-256 in base64url`,
      })
    }
    await hit(
      deps.db,
      deps.clock,
      `siwe:init:ip:${clientIp(c, deps.config.trustProxy)}`,
      SIWE_INIT_IP_LIMIT,
    )
    await hit(deps.db, deps.clock, `siwe:init:app:${app.id}`, SIWE_INIT_APP_LIMIT)
    if (!allowsAddress(app, body.address)) throw LatchError.of('allowlist_rejected')
    const nonce = await issueNonce(deps, {
      appId: app.id,
      address: body.address,
      // A stale token does not stop a sign-in: the nonce is then a signed-out one.
      userId: c.get('maybeAuth')?.sub ?? null,
      browserHash: hash ?? null,
    })
    return c.json({ nonce })
  })

  /** The wallet account a request's signed message proves, for a sign-in or userId's link. */
  async function verified(c: Context<HonoEnv>, userId: string | null) {
    const body = await readBody(c, siweAuthenticateBody)
    const app = c.get('app')
    requireMethod(app, 'wallet')
    await hit(
      deps.db,
      deps.clock,
      `siwe:verify:ip:${clientIp(c, deps.config.trustProxy)}`,
      SIWE_VERIFY_IP_LIMIT,
    )
    const account = await verifySiwe(deps, {
      app,
      message: body.message,
      signature: body.signature as Hex,
      chainId: chainIdOf(body.chainId),
      walletClientType: body.walletClientType,
      connectorType: body.connectorType,
      userId,
      browserSecret: c.req.header(SIWE_SECRET_HEADER),
    })
    if (!allowsAddress(app, account.address)) throw LatchError.of('allowlist_rejected')
    return account
  }

  /** The wallet's text for an address that is another user's (wallet_linked_to_another_user). */
  function walletTexts(e: unknown): unknown {
    if (isLatchError(e) && e.code === 'linked_to_another_user') {
      return LatchError.of('linked_to_another_user', {
        message: 'User already exists for this address',
        details: 'Try another address!',
      })
    }
    return e
  }

  routes.post('/authenticate', async (c) => {
    const account = await verified(c, null)
    const appId = c.get('app').id
    return answerSignIn(c, deps, appId, await signIn(deps, appId, account))
  })

  routes.post('/link', requireAuth(deps), changeGate, async (c) => {
    const userId = c.get('auth').sub
    const account = await verified(c, userId)
    const appId = c.get('app').id
    await consumeLinkApproval(deps, appId, userId, c.get('auth').sid, 'siwe', account.address)
    try {
      return c.json(await linkAccount(deps, c.get('app').id, userId, account, deps.clock.now()))
    } catch (e) {
      throw walletTexts(e)
    }
  })

  routes.post('/unlink', requireAuth(deps), changeGate, async (c) => {
    const body = await readBody(c, siweUnlinkBody)
    const user = await unlinkAccount(deps, c.get('app').id, c.get('auth').sub, {
      type: 'wallet',
      identifier: body.address,
    })
    return c.json(user)
  })

  return routes
}
