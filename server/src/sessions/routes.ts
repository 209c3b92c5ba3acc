/** POST /sessions (refresh), /sessions/logout, /sessions/fork, /sessions/fork/recover. */
import { type ForkResponse, type RefreshResponse, refreshBody } from '@latch/shared'
import { type Context, Hono } from 'hono'
import { z } from 'zod'
import { loadUser } from '../accounts/service.ts'
import type { Deps } from '../context.ts'
import { clientIp, type HonoEnv, optionalAuth, readBody, SUCCESS } from '../http.ts'
import { hit, type Limit } from '../ratelimit.ts'
import { clearWalletCredential, setWalletCredential } from '../wallets/credential.ts'
import { createForkToken, logoutSession, redeemForkToken, refreshSession } from './service.ts'

const logoutBody = z.object({ refresh_token: z.string().max(512).nullish() })

/**
 * Forks per client address: counted before the refresh token rotates, so a refused fork never
 * costs the caller its pair. A user forks a few times a day; more is a script.
 */
export const FORK_IP_LIMIT: Limit = { max: 30, windowMs: 5 * 60_000 }
/** Fork redemptions per client address: a token is 256 bits, so this only caps the writes. */
export const FORK_RECOVER_IP_LIMIT: Limit = { max: 60, windowMs: 5 * 60_000 }

export function sessionRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()

  /**
   * Trades the body's token for a session (a refresh, or a fork redemption): user and pair. A
   * fork redemption starts a session, so its answer carries the new session's wallet
   * credential; a refresh never does (server/src/wallets/credential.ts).
   */
  const redeemWith =
    (redeem: typeof refreshSession | typeof redeemForkToken, starts: boolean) =>
    async (c: Context<HonoEnv>) => {
      const { refresh_token } = await readBody(c, refreshBody)
      const app = c.get('app')
      const session = await redeem(deps, app.id, refresh_token)
      const answer: RefreshResponse = {
        user: await loadUser(deps, app.id, session.userId),
        token: session.token,
        refresh_token: session.refreshToken,
      }
      if (starts && 'expiresAt' in session && session.expiresAt instanceof Date) {
        setWalletCredential(c, deps, app.id, { ...session, expiresAt: session.expiresAt })
      }
      return c.json(answer)
    }

  routes.post('/', redeemWith(refreshSession, false))

  // A bearer token of this app also names the session; an invalid one is simply ignored.
  routes.post('/logout', optionalAuth(deps), async (c) => {
    const { refresh_token } = await readBody(c, logoutBody)
    const sid = c.get('maybeAuth')?.sid ?? null
    await logoutSession(deps, c.get('app').id, refresh_token ?? null, sid)
    // The browser's wallet credential of that session goes with it.
    if (sid) clearWalletCredential(c, sid)
    return c.json(SUCCESS)
  })

  routes.post('/fork', async (c) => {
    const { refresh_token } = await readBody(c, refreshBody)
    const app = c.get('app')
    await hit(deps.db, deps.clock, `fork:ip:${clientIp(c, deps.config.trustProxy)}`, FORK_IP_LIMIT)
    // Forking is a use of the refresh token: it rotates like a refresh does.
    const session = await refreshSession(deps, app.id, refresh_token)
    const answer: ForkResponse = {
      token: session.token,
      refresh_token: session.refreshToken,
      new_session_refresh_token: await createForkToken(
        deps,
        app.id,
        session.sessionId,
        deps.config.forkTokenTtlS * 1000,
      ),
    }
    return c.json(answer)
  })

  const recover = redeemWith(redeemForkToken, true)
  routes.post('/fork/recover', async (c) => {
    const ip = clientIp(c, deps.config.trustProxy)
    await hit(deps.db, deps.clock, `fork:recover:ip:${ip}`, FORK_RECOVER_IP_LIMIT)
    return recover(c)
  })

  return routes
}
