/**
 * The session the modal holds: the access token in memory; the refresh token in the API
 * origin's `HttpOnly` cookie, which the credentialed refresh, fork and logout calls carry and no
 * script reads (the token store keeps only a hint that a session may exist). Refreshes when the
 * access token is expired or within TOKEN_EXPIRY_MARGIN_MS of it.
 */
import {
  type ForkResponse,
  isLatchError,
  LatchError,
  type RefreshResponse,
  TOKEN_EXPIRY_MARGIN_MS,
  type User,
} from '@latch/shared'
import type { ApiClient } from './api.ts'
import type { TokenStore } from './token-store.ts'

export interface Session {
  /** Refreshes the browser's session, if any (a reload keeps the person signed in). */
  restore(): Promise<User | null>
  /** Starts the session an authenticate call answered (its refresh cookie came with it). */
  start(tokens: { token: string }, user: User): void
  /** A valid access token, refreshed first if needed; null when signed out. */
  getAccessToken(): Promise<string | null>
  /**
   * The user as the server has it now (a refresh; the 'user' event follows), e.g. once the
   * in-app wallet became one of their accounts; null when signed out.
   */
  refreshUser(): Promise<User | null>
  /**
   * Forks the session (POST /sessions/fork): this session takes the rotated pair, and the
   * answer is the single-use token that opens a sibling session elsewhere (fork/recover).
   */
  fork(): Promise<string>
  /** Destroys the session on the server (best effort) and clears the tokens. */
  logout(): Promise<void>
  clear(): void
  isAuthenticated(): boolean
}

export interface SessionOptions {
  api: ApiClient
  tokens: TokenStore
  /** Called with the user after a refresh, and with null when the session is cleared. */
  onUser?: (user: User | null) => void
  now?: () => number
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
  const setUser = (next: User | null): void => {
    user = next
    options.onUser?.(next)
  }

  const clear = (): void => {
    accessToken = null
    options.tokens.clear()
    setUser(null)
  }

  /**
   * Rotates the browser's refresh cookie at `path` (a refresh, or a fork that also answers its
   * token): the credentialed fetch carries the cookie and the answer sets the next one. Refresh
   * goes without a bearer token (the cookie is the credential); a fork's is in `headers`, never
   * fetched here, as that would wait on this very rotation.
   */
  const rotate = async <T extends RefreshResponse | ForkResponse>(
    path: string,
    apply: (res: T) => void,
    headers?: Record<string, string>,
  ): Promise<string | null> => {
    try {
      const res = await options.api.request<T>(
        path,
        {},
        { auth: false, ...(headers ? { headers } : {}) },
      )
      accessToken = res.token
      options.tokens.mark()
      apply(res)
      return res.token
    } catch (e) {
      if (isLatchError(e) && e.is('invalid_refresh_token')) {
        clear()
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
    async refreshUser() {
      await refresh()
      return accessToken ? user : null
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
      if (!out.token) throw LatchError.of('not_authenticated')
      return out.token
    },
    clear,
    isAuthenticated: () => accessToken !== null,
  }
}
