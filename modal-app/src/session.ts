/**
 * The session the modal holds: the access token in memory, the refresh token in the token
 * store. Refreshes when the access token is expired or within TOKEN_EXPIRY_MARGIN_MS of it.
 */
import {
  isLatchError,
  type RefreshResponse,
  TOKEN_EXPIRY_MARGIN_MS,
  type User,
} from '@latch/shared'
import type { ApiClient } from './api.ts'
import type { TokenStore } from './token-store.ts'

export interface Session {
  /** Exchanges a stored refresh token for a session (a reload keeps the person signed in). */
  restore(): Promise<User | null>
  /** Starts the session an authenticate call answered. */
  start(tokens: { token: string; refresh_token: string }, user: User): void
  /** A valid access token, refreshed first if needed; null when signed out. */
  getAccessToken(): Promise<string | null>
  /**
   * The user as the server has it now (a refresh; the 'user' event follows), e.g. once the
   * in-app wallet became one of their accounts; null when signed out.
   */
  refreshUser(): Promise<User | null>
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

  const refresh = (): Promise<string | null> => {
    // One refresh at a time: refresh tokens rotate, so a second concurrent use would be reuse.
    inflight ??= (async () => {
      const refreshToken = options.tokens.get()
      if (!refreshToken) {
        accessToken = null
        return null
      }
      try {
        const res = await options.api.request<RefreshResponse>(
          '/sessions',
          { refresh_token: refreshToken },
          { auth: false },
        )
        accessToken = res.token
        options.tokens.set(res.refresh_token)
        setUser(res.user)
        return res.token
      } catch (e) {
        if (isLatchError(e) && e.is('invalid_refresh_token')) {
          clear()
          return null
        }
        throw e
      }
    })().finally(() => {
      inflight = null
    })
    return inflight
  }

  return {
    async restore() {
      if (!options.tokens.get()) return null
      await refresh()
      return accessToken ? user : null
    },
    start(tokens, next) {
      accessToken = tokens.token
      options.tokens.set(tokens.refresh_token)
      setUser(next)
    },
    async getAccessToken() {
      if (inflight) return inflight
      if (accessToken && tokenExpiry(accessToken) - TOKEN_EXPIRY_MARGIN_MS > now()) {
        return accessToken
      }
      if (!accessToken && !options.tokens.get()) return null
      return refresh()
    },
    async refreshUser() {
      await refresh()
      return accessToken ? user : null
    },
    async logout() {
      const refreshToken = options.tokens.get()
      try {
        if (refreshToken) {
          await options.api.request('/sessions/logout', { refresh_token: refreshToken })
        }
      } catch {
        // The local session ends whatever the server answers: logout must always succeed here.
      } finally {
        clear()
      }
    },
    clear,
    isAuthenticated: () => accessToken !== null,
  }
}
