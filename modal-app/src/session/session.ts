/**
 * The session the modal holds: the access token in memory; the refresh token in the API
 * origin's `HttpOnly` cookie, which the credentialed refresh, fork and logout calls carry and no
 * script reads (the token store keeps only a hint that a session may exist). Refreshes when the
 * access token is expired or within TOKEN_EXPIRY_MARGIN_MS of it.
 */

import type { ApiClient } from '@latch/shared'
import {
  type ForkResponse,
  isLatchError,
  LatchError,
  NO_REFRESH_COOKIE_MESSAGE,
  REFRESH_ID_HEADER,
  type RefreshResponse,
  TOKEN_EXPIRY_MARGIN_MS,
  type User,
} from '@latch/shared'
import type { TokenStore } from './token-store.ts'

export interface Session {
  /** Refreshes the browser's session, if any (a reload keeps the person signed in). */
  restore(): Promise<User | null>
  /** Starts the session an authenticate call answered (its refresh cookie came with it). */
  start(tokens: { token: string }, user: User): void
  /** A valid access token, refreshed first if needed; null when signed out. */
  getAccessToken(): Promise<string | null>
  /**
   * Forks the session (POST /sessions/fork): this session takes the rotated pair, and the
   * answer is the single-use token that opens a sibling session elsewhere (fork/recover).
   */
  fork(): Promise<string>
  /** Destroys the session on the server (best effort) and clears the tokens. */
  logout(): Promise<void>
  clear(): void
  isAuthenticated(): boolean
  /**
   * Whether the session ended because this browser refuses the refresh cookie in this frame: a
   * sign-in in this page started it, and its first refresh or fork came without the cookie that
   * sign-in set. Calls that need a session then reject with `session_cookie_refused`, not as
   * signed out. A new sign-in or a logout forgets it.
   */
  cookieRefused(): boolean
}

export interface SessionOptions {
  api: ApiClient
  tokens: TokenStore
  /** Called with the user after a refresh, and with null when the session is cleared. */
  onUser?: (user: User | null) => void
  now?: () => number
  /** Waits between the tries of a refresh (tests record them instead). */
  sleep?: (ms: number) => Promise<void>
}

/** Tries of one refresh whose request failed on the way (the network, a restart, a 503). */
export const REFRESH_TRIES = 5
/** The wait before the second try, doubling after; the answer's Retry-After when longer. */
export const REFRESH_RETRY_BASE_MS = 500
/** No wait between tries is longer, whatever Retry-After says. */
export const REFRESH_RETRY_MAX_WAIT_MS = 8_000

/**
 * Whether a refresh that failed this way may be sent again: no answer (a dropped connection,
 * the 10 s timeout), the database out of reach (503 service_unavailable), or a 5xx without
 * Latch's body (a proxy's 502 or 504). Sending it again is safe because it carries the same
 * id. A 4xx is the server's word on the token and is final.
 */
function worthRetrying(e: unknown): e is LatchError {
  if (!isLatchError(e)) return false
  if (e.is('service_unavailable') || e.is('client_request_timeout')) return true
  return e.is('internal_error') && (e.status === undefined || e.status >= 500)
}

/**
 * A refresh's Latch-Refresh-Id: 128 random bits, kept in memory for that refresh only. The
 * server answers a retry carrying it with the pair its lost answer held (see the server's
 * sessions README: how a retry is told from a stolen token).
 */
function newRefreshId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
}

/** The exp claim of a JWT in milliseconds, or 0 when unreadable (treated as expired). */
export function tokenExpiry(jwt: string): number {
  const payload = jwt.split('.')[1]
  if (!payload) return 0
  try {
    const b64 = payload.replace(/-/g, '+').replace(/_/g, '/')
    const json = JSON.parse(atob(b64.padEnd(Math.ceil(b64.length / 4) * 4, '='))) as {
      exp?: unknown
    }
    return typeof json.exp === 'number' ? json.exp * 1000 : 0
  } catch {
    return 0
  }
}

export function createSession(options: SessionOptions): Session {
  const now = options.now ?? Date.now
  let accessToken: string | null = null
  let inflight: Promise<string | null> | null = null
  let user: User | null = null
  // The refresh cookie's fate in this browser: a sign-in here set one (startedHere), a rotation
  // carried one (cookieSent), or the first call that needed it came without it (refused).
  let startedHere = false
  let cookieSent = false
  let refused = false
  const setUser = (next: User | null): void => {
    user = next
    options.onUser?.(next)
  }

  const sleep =
    options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))

  const clear = (): void => {
    refused = false
    accessToken = null
    options.tokens.clear()
    setUser(null)
  }

  /**
   * Sends the same refresh until it is answered, at most REFRESH_TRIES times, while it fails on
   * the way (worthRetrying); each try has the client's timeout and each wait a bound. The id
   * stays the same, so a try whose rotation committed but whose answer was lost is answered
   * again rather than taken for reuse.
   */
  const sendRefresh = async <T>(send: (headers: Record<string, string>) => Promise<T>) => {
    const headers = { [REFRESH_ID_HEADER]: newRefreshId() }
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(headers)
      } catch (e) {
        if (attempt >= REFRESH_TRIES || !worthRetrying(e)) throw e
        const backoff = REFRESH_RETRY_BASE_MS * 2 ** (attempt - 1)
        const asked = (e.retryAfter ?? 0) * 1000
        await sleep(Math.min(Math.max(backoff, asked), REFRESH_RETRY_MAX_WAIT_MS))
      }
    }
  }

  /**
   * Rotates the browser's refresh cookie at `path` (a refresh, or a fork that also answers its
   * token): the credentialed fetch carries the cookie and the answer sets the next one. Refresh
   * goes without a bearer token (the cookie is the credential); a fork's is in `headers`, never
   * fetched here, as that would wait on this very rotation. A refresh is sent again when it
   * fails on the way (sendRefresh); a fork (the call with a bearer) is not.
   */
  const rotate = async <T extends RefreshResponse | ForkResponse>(
    path: string,
    apply: (res: T) => void,
    headers?: Record<string, string>,
  ): Promise<string | null> => {
    const send = (more: Record<string, string>) =>
      options.api.request<T>(path, {}, { auth: false, headers: { ...headers, ...more } })
    try {
      const res = headers ? await send({}) : await sendRefresh(send)
      accessToken = res.token
      cookieSent = true
      options.tokens.mark()
      apply(res)
      return res.token
    } catch (e) {
      if (isLatchError(e) && e.is('invalid_refresh_token')) {
        const cookieNeverKept =
          startedHere && !cookieSent && e.message === NO_REFRESH_COOKIE_MESSAGE
        clear()
        refused = cookieNeverKept
        return null
      }
      throw e
    }
  }

  /** One rotation at a time: refresh tokens rotate, so a second concurrent use would be reuse. */
  const serialize = (run: () => Promise<string | null>): Promise<string | null> => {
    inflight ??= run().finally(() => {
      inflight = null
    })
    return inflight
  }

  const refresh = () =>
    serialize(() => rotate<RefreshResponse>('/sessions', (res) => setUser(res.user)))

  return {
    async restore() {
      if (!options.tokens.present()) return null
      await refresh()
      return accessToken ? user : null
    },
    start(tokens, next) {
      startedHere = true
      cookieSent = false
      refused = false
      accessToken = tokens.token
      options.tokens.mark()
      setUser(next)
    },
    async getAccessToken() {
      if (inflight) return inflight
      if (accessToken && tokenExpiry(accessToken) - TOKEN_EXPIRY_MARGIN_MS > now()) {
        return accessToken
      }
      if (!accessToken && !options.tokens.present()) return null
      return refresh()
    },
    async logout() {
      try {
        // The cookie names the session, the bearer too when there is one; the answer clears it.
        if (accessToken || options.tokens.present()) {
          await options.api.request('/sessions/logout', {})
        }
      } catch {
        // The local session ends whatever the server answers: logout must always succeed here.
      } finally {
        clear()
      }
    },
    async fork() {
      const out: { token?: string } = {}
      for (let attempt = 0; attempt < 3 && !out.token; attempt++) {
        // A rotation under way finishes first: its pair is the one to fork.
        while (inflight) await inflight.catch(() => null)
        const bearer =
          accessToken && tokenExpiry(accessToken) - TOKEN_EXPIRY_MARGIN_MS > now()
            ? accessToken
            : await refresh()
        if (!bearer) break
        // Another call started a refresh meanwhile: wait for it and fork its pair.
        if (inflight) continue
        const res = await serialize(() =>
          rotate<ForkResponse>(
            '/sessions/fork',
            (r) => {
              out.token = r.new_session_refresh_token
            },
            { authorization: `Bearer ${bearer}` },
          ),
        )
        if (!res) break
      }
      if (!out.token) {
        throw LatchError.of(refused ? 'session_cookie_refused' : 'not_authenticated')
      }
      return out.token
    },
    clear,
    isAuthenticated: () => accessToken !== null,
    cookieRefused: () => refused,
  }
}
