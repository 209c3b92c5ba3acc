/**
 * POST /wallets/fork/confirm: the visitor who forked their session hands the wallet over to the
 * session the fork link opens.
 *
 * A fork token opens a session as the user for whoever presents it first, within its 2 minutes.
 * The link travels through a wallet app's link service and the host page (which gets it back
 * from forkSession()), so the session it opens must not reach the key by automatic recovery on
 * the strength of the link alone. It may once the forking visitor confirmed it: their click on a
 * wallet app on SESSION_FORK_SCREEN, which the modal passes to the wallet frame, which calls this
 * route on its own origin. Like every wallet route it needs the access token AND the session's
 * wallet credential with same-origin fetch metadata (credential.ts), so neither the host page
 * (which holds the token and the link) nor a client outside a browser can record it.
 *
 * What stays possible: whoever redeems an intercepted link before the wallet app does, within
 * the 2 minutes, gets a session as the user, and the wallet too when the visitor clicked; a
 * passcode wallet still needs its passcode (modal-app/README.md, "Session fork").
 */
import { LatchError } from '@latch/shared'
import { Hono } from 'hono'
import { z } from 'zod'
import type { Deps } from '../context.ts'
import { hashToken } from '../crypto.ts'
import { type HonoEnv, readBody, requireAuth, SUCCESS } from '../http.ts'
import { requireWalletCredential } from './credential.ts'

export const forkConfirmBody = z.object({ fork_token: z.string().min(1).max(512) })

/**
 * Whether this session may recover the wallet automatically: any session that was not opened
 * by a fork link, and one that was once its link's wallet handover was confirmed. A forked
 * session whose token row is gone (it should outlive the session; see sweep.ts) is refused.
 */
export async function walletHandedOver(db: Deps['db'], sessionId: string): Promise<boolean> {
  const row = await db
    .selectFrom('sessions as s')
    .leftJoin('fork_tokens as t', 't.redeemed_session_id', 's.id')
    .select(['s.parent_id', 't.wallet_confirmed_at'])
    .where('s.id', '=', sessionId)
    .executeTakeFirst()
  if (!row) return false
  return row.parent_id === null || row.wallet_confirmed_at !== null
}

/** The fork link was not made by this session, is past its life, or does not exist. */
const unknownLink = () =>
  LatchError.of('invalid_data', { status: 404, message: 'No such session link of this session' })

/**
 * Marks the fork token (of the caller's own session, still within its life) as confirmed. A
 * user without an in-app wallet has nothing to hand over, and a session that was itself opened
 * by an unconfirmed fork link cannot hand over what it was never given.
 */
export async function confirmForkWallet(
  deps: Deps,
  appId: string,
  userId: string,
  sessionId: string,
  forkToken: string,
): Promise<void> {
  const wallet = await deps.db
    .selectFrom('wallets')
    .select('id')
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  if (!wallet) {
    throw LatchError.of('invalid_data', { status: 409, message: 'There is no wallet to hand over' })
  }
  if (!(await walletHandedOver(deps.db, sessionId))) {
    throw LatchError.of('fork_wallet_not_confirmed')
  }
  const confirmed = await deps.db
    .updateTable('fork_tokens')
    .set({ wallet_confirmed_at: deps.clock.now() })
    .where('hash', '=', hashToken(forkToken))
    .where('app_id', '=', appId)
    .where('session_id', '=', sessionId)
    .where('expires_at', '>', deps.clock.now())
    .returning('hash')
    .executeTakeFirst()
  if (!confirmed) throw unknownLink()
}

/** Mounted beside walletRoutes under /wallets: the same two gates, then the confirmation. */
export function forkConfirmRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  routes.use('*', requireAuth(deps))
  routes.use('*', requireWalletCredential(deps))
  routes.post('/', async (c) => {
    const { fork_token } = await readBody(c, forkConfirmBody)
    const { sub, sid } = c.get('auth')
    await confirmForkWallet(deps, c.get('app').id, sub, sid, fork_token)
    return c.json(SUCCESS)
  })
  return routes
}
