/**
 * Where the refresh token lives: a cookie of the modal origin (SameSite=None; Secure;
 * Partitioned) when the browser keeps one in this cross-site frame, else the modal origin's
 * localStorage. Kept REFRESH_TOKEN_MAX_AGE_S (30 days).
 */
import { REFRESH_TOKEN_MAX_AGE_S } from '@latch/shared'

export interface TokenStore {
  get(): string | null
  set(token: string): void
  clear(): void
  /** Where the last set() landed. */
  readonly kind: () => 'cookie' | 'localStorage' | 'memory'
}

interface StoredItem {
  token: string
  expiresAt: number
}

/** The refresh token store of one app. */
export function createTokenStore(
  appId: string,
  doc: Document = document,
  storage: Storage | null = safeLocalStorage(),
  now: () => number = Date.now,
): TokenStore {
  const name = `latch-rt-${appId.replace(/[^A-Za-z0-9_-]/g, '')}`
  let kind: 'cookie' | 'localStorage' | 'memory' = 'memory'
  let memory: string | null = null

  const readCookie = (): string | null => {
    for (const part of doc.cookie.split(';')) {
      const [key, ...rest] = part.trim().split('=')
      if (key === name) return decodeURIComponent(rest.join('='))
    }
    return null
  }
  const writeCookie = (value: string, maxAge: number): void => {
    doc.cookie = `${name}=${encodeURIComponent(value)}; Max-Age=${maxAge}; Path=/; SameSite=None; Secure; Partitioned`
  }
  const readStorage = (): string | null => {
    const raw = storage?.getItem(name)
    if (!raw) return null
    try {
      const item = JSON.parse(raw) as StoredItem
      if (typeof item.token !== 'string' || !(item.expiresAt > now())) {
        storage?.removeItem(name)
        return null
      }
      return item.token
    } catch {
      storage?.removeItem(name)
      return null
    }
  }

  return {
    get() {
      return readCookie() ?? readStorage() ?? memory
    },
    set(token) {
      memory = token
      writeCookie(token, REFRESH_TOKEN_MAX_AGE_S)
      if (readCookie() === token) {
        kind = 'cookie'
        storage?.removeItem(name)
        return
      }
      // The browser refused the cookie in this frame (third-party cookie blocking, or a
      // non-secure context): the origin's storage is the next best home.
      try {
        const item: StoredItem = { token, expiresAt: now() + REFRESH_TOKEN_MAX_AGE_S * 1000 }
        storage?.setItem(name, JSON.stringify(item))
        kind = storage ? 'localStorage' : 'memory'
      } catch {
        kind = 'memory'
      }
    },
    clear() {
      memory = null
      writeCookie('', 0)
      try {
        storage?.removeItem(name)
      } catch {
        // Storage can throw when blocked; nothing was kept there then.
      }
    },
    kind: () => kind,
  }
}

export function safeLocalStorage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage
  } catch {
    return null
  }
}
