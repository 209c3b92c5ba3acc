/** POST /sessions (refresh), /sessions/logout, /sessions/fork, /sessions/fork/recover. */
import { type ForkResponse, type RefreshResponse, refreshBody } from '@latch/shared'
import { type Context, Hono } from 'hono'
import { z } from 'zod'
import { loadUser } from '../accounts/service.ts'
import type { Deps } from '../context.ts'
import { type HonoEnv, optionalAuth, readBody, SUCCESS } from '../http.ts'
import { createForkToken, logoutSession, redeemForkToken, refreshSession } from './service.ts'

const logoutBody = z.object({ refresh_token: z.string().max(512).nullish() })

export function sessionRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()

  /** Trades the body's token for a session (a refresh, or a fork redemption): user and pair. */
  const redeemWith =
    (redeem: typeof refreshSession | typeof redeemForkToken) => async (c: Context<HonoEnv>) => {
      const { refresh_token } = await readBody(c, refreshBody)
      const app = c.get('app')
      const session = await redeem(deps, app.id, refresh_token)
      const answer: RefreshResponse = {
        user: await loadUser(deps.db, app.id, session.userId),
        token: session.token,
        refresh_token: session.refreshToken,
      }
      return c.json(answer)
    }

  routes.post('/', redeemWith(refreshSession))

  // A bearer token of this app also names the session; an invalid one is simply ignored.
  routes.post('/logout', optionalAuth(deps), async (c) => {
    const { refresh_token } = await readBody(c, logoutBody)
    const sid = c.get('maybeAuth')?.sid ?? null
    await logoutSession(deps, c.get('app').id, refresh_token ?? null, sid)
    return c.json(SUCCESS)
  })

  routes.post('/fork', async (c) => {
    const { refresh_token } = await readBody(c, refreshBody)
    const app = c.get('app')
    // Forking is a use of the refresh token: it rotates like a refresh does.
    const session = await refreshSession(deps, app.id, refresh_token)
    const answer: ForkResponse = {
      token: session.token,
      refresh_token: session.refreshToken,
      new_session_refresh_token: await createForkToken(deps, app.id, session.sessionId),
    }
    return c.json(answer)
  })

  routes.post('/fork/recover', redeemWith(redeemForkToken))

  return routes
}
