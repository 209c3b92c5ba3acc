/**
 * POST /sessions (refresh), /sessions/logout, /sessions/fork, /sessions/fork/recover. The refresh
 * token comes and goes only in the refresh cookie (refresh-cookie.ts), never in a body.
 */
import {
  type ForkResponse,
  LatchError,
  REFRESH_ID_HEADER,
  type RefreshResponse,
  refreshBody,
  type SessionUserResponse,
} from '@latch/shared'
import { type Context, Hono } from 'hono'
import { loadUser } from '../accounts/service.ts'
import type { Deps } from '../context.ts'
import { clientIp, type HonoEnv, optionalAuth, readBody, requireAuth, SUCCESS } from '../http.ts'
import { hit, type Limit } from '../ratelimit.ts'
import { clearWalletCredential, setWalletCredential } from '../wallets/credential.ts'
import {
  clearRefreshCookie,
  readRefreshCookie,
  requireModalFetch,
  requireRefreshCookie,
  setRefreshCookie,
} from './refresh-cookie.ts'
import { createForkToken, logoutSession, redeemForkToken, refreshSession } from './service.ts'

/** A Latch-Refresh-Id: random, 16 to 128 URL-safe characters (the modal sends 22). */
const REFRESH_ID = /^[A-Za-z0-9_-]{16,128}$/

/** The request's Latch-Refresh-Id, null when absent; a malformed one is refused. */
function refreshIdOf(c: Context<HonoEnv>): string | null {
  const id = c.req.header(REFRESH_ID_HEADER)
  if (id === undefined) return null
  if (!REFRESH_ID.test(id)) {
    throw LatchError.of('invalid_data', {
      message: `${REFRESH_ID_HEADER} must be 16 to 128 characters of A-Z, a-z, 0-9, - and _`,
    })
  }
  return id
}

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
   * Answers a session the request started or rotated: user and access token, the refresh token
   * in the cookie. A fork redemption starts a session, so its answer also carries the new
   * session's wallet credential; a refresh never does (server/src/wallets/credential.ts).
   */
  const answer = async (
    c: Context<HonoEnv>,
    session: { userId: string; token: string; refreshToken: string; expiresAt?: Date },
  ) => {
    const app = c.get('app')
    const body: RefreshResponse = {
      user: await loadUser(deps, app.id, session.userId),
      token: session.token,
    }
    setRefreshCookie(c, deps, app.id, session.refreshToken, session.expiresAt)
    return c.json(body)
  }

  const modalFetch = requireModalFetch(deps)

  routes.post('/', modalFetch, async (c) => {
    const app = c.get('app')
    const presented = requireRefreshCookie(c, app.id)
    try {
      return await answer(c, await refreshSession(deps, app.id, presented, refreshIdOf(c)))
    } catch (e) {
      // A token the server refuses is dead for good: the browser forgets it too.
      if (e instanceof LatchError && e.code === 'invalid_refresh_token') {
        clearRefreshCookie(c, app.id)
      }
      throw e
    }
  })

  // The signed-in user as stored now (after a change made elsewhere: a wallet the wallet frame
  // created), by the access token alone. Unlike a refresh it rotates nothing: where a browser
  // refuses the API's cookies in a cross-site frame (WebKit's default), the refresh cookie a
  // first-party window set stays the live one, and a rotation there would leave the browser
  // holding a spent token, the next refresh a reuse that ends the session.
  routes.post('/user', requireAuth(deps), async (c) => {
    const user: SessionUserResponse = {
      user: await loadUser(deps, c.get('app').id, c.get('auth').sub),
    }
    return c.json(user)
  })

  // A bearer token of this app also names the session; an invalid one is simply ignored.
  routes.post('/logout', modalFetch, optionalAuth(deps), async (c) => {
    const appId = c.get('app').id
    const sid = c.get('maybeAuth')?.sid ?? null
    await logoutSession(deps, appId, readRefreshCookie(c, appId), sid)
    // The browser's refresh cookie and the session's wallet credential go with it.
    clearRefreshCookie(c, appId)
    if (sid) clearWalletCredential(c, sid)
    return c.json(SUCCESS)
  })

  routes.post('/fork', modalFetch, async (c) => {
    const app = c.get('app')
    const presented = requireRefreshCookie(c, app.id)
    await hit(deps.db, deps.clock, `fork:ip:${clientIp(c, deps.config.trustProxy)}`, FORK_IP_LIMIT)
    // Forking is a use of the refresh token: it rotates like a refresh does.
    const session = await refreshSession(deps, app.id, presented)
    setRefreshCookie(c, deps, app.id, session.refreshToken)
    const forked: ForkResponse = {
      token: session.token,
      new_session_refresh_token: await createForkToken(
        deps,
        app.id,
        session.sessionId,
        deps.config.forkTokenTtlS * 1000,
      ),
    }
    return c.json(forked)
  })

  // The fork token is the body's `refresh_token` (the description's contract); the session it
  // opens gets its refresh cookie and wallet credential on this answer.
  routes.post('/fork/recover', async (c) => {
    const ip = clientIp(c, deps.config.trustProxy)
    await hit(deps.db, deps.clock, `fork:recover:ip:${ip}`, FORK_RECOVER_IP_LIMIT)
    const { refresh_token } = await readBody(c, refreshBody)
    const app = c.get('app')
    const session = await redeemForkToken(deps, app.id, refresh_token)
    setWalletCredential(c, deps, app.id, session)
    return answer(c, session)
  })

  return routes
}
