/**
 * The refresh token's only home in a browser: a cookie of the API origin,
 * `__Secure-latch-rt-<app id>`, `HttpOnly; Secure; SameSite=None; Partitioned`, its path the
 * session routes (`/api/v1/sessions`). No script of any origin can read it (the modal's, the
 * host page's, a compromised wallet SDK's), so none can carry a refresh token out of the
 * browser; no answer body carries one either.
 *
 * Every answer that starts a session sets it (a sign-in, a fork redemption), a refresh or a fork
 * rotates it, logout clears it. `Partitioned` keeps it in the top-level site's partition: a
 * reload and a new tab of the same host page find it, another site never does.
 *
 * The routes that read it (refresh, fork, logout) are reached only by the modal's credentialed
 * fetch, and check that (requireModalFetch):
 * - the app id header (requireApp): a custom header, so another page's fetch needs a CORS
 *   preflight, which the API answers for the modal origin only;
 * - `Origin` is the modal's configured origin (LATCH_MODAL_ORIGIN), never absent: a form post or
 *   a fetch of another site names its own, which no script can change;
 * - fetch metadata, when sent, is a fetch (`Sec-Fetch-Dest: empty`) and never `same-origin`
 *   (the API origin's own pages, the wallet frame and the export page, have no business here).
 *   Whether it is `same-site` or `cross-site` depends on the deployment, so `Origin` binds it.
 */
import {
  API_PREFIX,
  LatchError,
  NO_REFRESH_COOKIE_MESSAGE,
  REFRESH_TOKEN_MAX_AGE_S,
} from '@latch/shared'
import type { Context, MiddlewareHandler } from 'hono'
import type { Deps } from '../context.ts'
import type { HonoEnv } from '../http.ts'

/** The cookie's name before the app id; `__Secure-` makes browsers demand `Secure` for it. */
export const REFRESH_COOKIE_PREFIX = '__Secure-latch-rt-'
/** Only the session routes receive it: no other request of the API carries the token. */
export const REFRESH_COOKIE_PATH = `${API_PREFIX}/sessions`

/** An app id as the API mints them; anything else names no cookie. */
const APP_ID = /^[A-Za-z0-9_-]{1,64}$/

export function refreshCookieName(appId: string): string {
  return `${REFRESH_COOKIE_PREFIX}${appId}`
}

function cookieHeader(appId: string, value: string, maxAgeS: number): string {
  return `${refreshCookieName(appId)}=${value}; Max-Age=${maxAgeS}; Path=${REFRESH_COOKIE_PATH}; HttpOnly; Secure; SameSite=None; Partitioned`
}

/**
 * Sets the app's refresh cookie to `token` (a session started or rotated). It lives until
 * `expiresAt` when known (a new session's end), else the longest a session can.
 */
export function setRefreshCookie(
  c: Context,
  deps: Pick<Deps, 'clock'>,
  appId: string,
  token: string,
  expiresAt?: Date,
): void {
  if (!APP_ID.test(appId)) return
  const maxAgeS = expiresAt
    ? Math.max(0, Math.ceil((expiresAt.getTime() - deps.clock.now().getTime()) / 1000))
    : REFRESH_TOKEN_MAX_AGE_S
  c.header('set-cookie', cookieHeader(appId, token, maxAgeS), { append: true })
}

/** Ends the app's refresh cookie in this browser (logout, or a token the server refused). */
export function clearRefreshCookie(c: Context, appId: string): void {
  if (!APP_ID.test(appId)) return
  c.header('set-cookie', cookieHeader(appId, '', 0), { append: true })
}

/** The app's refresh token from the request's cookie, or null when none (or an empty one) came. */
export function readRefreshCookie(c: Context, appId: string): string | null {
  const name = refreshCookieName(appId)
  for (const part of (c.req.header('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim()
      // Tokens are base64url: anything longer than any token is not one.
      return value && value.length <= 512 ? value : null
    }
  }
  return null
}

/** The request's refresh token, or a 401 that changes nothing when the cookie did not come. */
export function requireRefreshCookie(c: Context, appId: string): string {
  const token = readRefreshCookie(c, appId)
  if (!token) {
    throw LatchError.of('invalid_refresh_token', {
      message: NO_REFRESH_COOKIE_MESSAGE,
    })
  }
  return token
}

/**
 * Refuses a request to a route that reads the refresh cookie unless it is the modal's own fetch
 * (see the module comment). Runs after requireApp.
 */
export function requireModalFetch(deps: Deps): MiddlewareHandler<HonoEnv> {
  return async (c, next) => {
    const modal = deps.config.modalOrigin
    const origin = c.req.header('origin')
    const site = c.req.header('sec-fetch-site')
    const dest = c.req.header('sec-fetch-dest')
    if (
      !modal ||
      origin !== modal ||
      site === 'same-origin' ||
      site === 'none' ||
      (dest !== undefined && dest !== 'empty')
    ) {
      throw LatchError.of('origin_not_allowed', {
        message: 'Only the Latch modal may use the session cookie',
      })
    }
    await next()
  }
}
