/**
 * The wallet credential: what the wallet API demands besides the access token.
 *
 * The access token is not a gate for key material: the host page, its scripts, its backend and
 * its logs all hold it (getAccessToken() exists so they can). So every wallet route also needs
 *
 * 1. a cookie of the API origin, `__Host-latch-w-<session id>`, `HttpOnly; Secure;
 *    SameSite=None; Partitioned`, whose value is a MAC of the app and session id under the
 *    server secret. It is set only by the answers that *start* a session (a sign-in, a fork
 *    redemption), which the browser receives through the modal's credentialed fetch: no script
 *    of any origin can read it, and a refresh never issues it, so whoever steals a refresh token
 *    gets access tokens but never this. It names its session, so several sign-ins in one
 *    browser each keep their own, and it ends with the session (the route also needs the
 *    session live) and with logout (which clears it);
 * 2. `Sec-Fetch-Site: same-origin`: only the API origin's own pages (the wallet frame and the
 *    export page) produce it, and the API origin serves no other page. A host page's or the
 *    modal's credentialed fetch carries the cookie too (the partition is the top-level site's),
 *    but the browser marks it cross-site or same-site, which no script can change. A client
 *    outside a browser can forge the header but holds no cookie.
 *
 * A browser that keeps no such cookie for a cross-site frame (third-party cookies blocked
 * outright) gets `wallet_sign_in_required` and no token-only fallback; the same-site
 * deployment (docs/architecture.md, "The wallet credential: a token is not enough") is its answer.
 */
import { LatchError } from '@latch/shared'
import type { Context, MiddlewareHandler } from 'hono'
import type { Deps } from '../context.ts'
import { macMade } from '../crypto.ts'
import type { HonoEnv } from '../http.ts'
import { setRefreshCookie } from '../sessions/refresh-cookie.ts'
import type { SignedIn } from '../sessions/service.ts'

/** The cookie's name before the session id; `__Host-` pins it to this origin, path /, Secure. */
export const WALLET_CREDENTIAL_PREFIX = '__Host-latch-w-'

/** A session id as the API mints them (randomId(24)); anything else names no cookie. */
const SESSION_ID = /^[a-z0-9]{1,64}$/

export function walletCredentialName(sessionId: string): string {
  return `${WALLET_CREDENTIAL_PREFIX}${sessionId}`
}

/** The cookie's value for a session: only the server secret makes it. */
export function walletCredentialValue(
  deps: Pick<Deps, 'secrets'>,
  appId: string,
  sessionId: string,
) {
  return deps.secrets.mac('wallet-credential', `${appId}\n${sessionId}`)
}

function cookieHeader(name: string, value: string, maxAgeS: number): string {
  return `${name}=${value}; Max-Age=${maxAgeS}; Path=/; HttpOnly; Secure; SameSite=None; Partitioned`
}

/**
 * Sets the wallet credential of a session that has just started, on the answer the browser
 * receives through the modal's credentialed fetch; it lasts as long as the session can.
 */
export function setWalletCredential(
  c: Context,
  deps: Pick<Deps, 'secrets' | 'clock'>,
  appId: string,
  session: { sessionId: string; expiresAt: Date },
): void {
  const maxAgeS = Math.max(
    0,
    Math.ceil((session.expiresAt.getTime() - deps.clock.now().getTime()) / 1000),
  )
  c.header(
    'set-cookie',
    cookieHeader(
      walletCredentialName(session.sessionId),
      walletCredentialValue(deps, appId, session.sessionId),
      maxAgeS,
    ),
    { append: true },
  )
}

/** Ends a session's wallet credential in this browser (logout). */
export function clearWalletCredential(c: Context, sessionId: string): void {
  if (!SESSION_ID.test(sessionId)) return
  c.header('set-cookie', cookieHeader(walletCredentialName(sessionId), '', 0), { append: true })
}

/** The value of one cookie of the request, or null. */
function readCookie(c: Context, name: string): string | null {
  for (const part of (c.req.header('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return null
}

/**
 * Refuses a wallet request that is not the wallet origin's own, with its session's credential.
 * Runs after requireAuth: the bearer names the session (`sid`) whose cookie must come along.
 */
export function requireWalletCredential(deps: Deps): MiddlewareHandler<HonoEnv> {
  return async (c, next) => {
    const own = deps.config.publicUrl
      ? new URL(deps.config.publicUrl).origin
      : new URL(c.req.url).origin
    const origin = c.req.header('origin')
    if (c.req.header('sec-fetch-site') !== 'same-origin' || (origin && origin !== own)) {
      throw LatchError.of('origin_not_allowed', {
        message: 'Only the wallet frame may call the wallet API',
      })
    }
    if (!(await presentsCredential(c, deps))) throw LatchError.of('wallet_sign_in_required')
    await next()
  }
}

/**
 * Whether the request carries its session's credential (the bearer's `sid`); one made under the
 * previous server secret is renewed on the answer, so the session keeps it after a rotation.
 */
export async function presentsCredential(c: Context<HonoEnv>, deps: Deps): Promise<boolean> {
  const { sid, exp } = c.get('auth')
  const appId = c.get('app').id
  const presented = SESSION_ID.test(sid) ? readCookie(c, walletCredentialName(sid)) : null
  const madeBy = presented
    ? macMade(deps.secrets, 'wallet-credential', `${appId}\n${sid}`, presented)
    : null
  if (madeBy === null) return false
  if (madeBy === 'previous') {
    const expiresAt = await sessionExpiry(deps, sid, exp)
    setWalletCredential(c, deps, appId, { sessionId: sid, expiresAt })
  }
  return true
}

/** When the session ends (the access token's expiry if its row is gone meanwhile). */
async function sessionExpiry(deps: Deps, sessionId: string, tokenExp: number): Promise<Date> {
  const row = await deps.db
    .selectFrom('sessions')
    .select('expires_at')
    .where('id', '=', sessionId)
    .executeTakeFirst()
  return row?.expires_at ?? new Date(tokenExp * 1000)
}

/**
 * The answer of a sign-in route: the user and access token, with the new session's wallet
 * credential and refresh cookie (the refresh token is in no body a script could read).
 */
export function answerSignIn(
  c: Context,
  deps: Pick<Deps, 'secrets' | 'clock'>,
  appId: string,
  signedIn: SignedIn,
): Response {
  setWalletCredential(c, deps, appId, signedIn.session)
  setRefreshCookie(c, deps, appId, signedIn.session.refreshToken, signedIn.session.expiresAt)
  return c.json(signedIn.response)
}
