/**
 * What the modal keeps of a session across a reload: only a hint that one may exist, never a
 * secret. The refresh token itself lives in the API origin's `HttpOnly` refresh cookie
 * (server/src/sessions/refresh-cookie.ts), which the modal's credentialed fetch carries and no
 * script can read. The hint spares a signed-out visitor's page a refresh that can only fail:
 * a flag of the modal origin, in a cookie (SameSite=None; Secure; Partitioned) where the
 * browser keeps one in this cross-site frame, else in localStorage, kept
 * REFRESH_TOKEN_MAX_AGE_S (30 days) as the session at most is. Whoever reads or forges the
 * flag learns or gains nothing: the API decides by the cookie alone.
 */
import { REFRESH_TOKEN_MAX_AGE_S } from '@latch/shared'

export interface TokenStore {
  /** Whether a session may exist in this browser (a refresh is worth trying). */
  present(): boolean
  /** A session started or was refreshed here. */
  mark(): void
  /** The session ended or the API refused it. */
  clear(): void
  /** Where the last mark() landed. */
  readonly kind: () => 'cookie' | 'localStorage' | 'memory'
}

/** The one value the hint ever holds. */
const MARK = '1'

/** The session hint of one app. */
export function createTokenStore(
  appId: string,
  doc: Document = document,
  storage: Storage | null = safeLocalStorage(),
  now: () => number = Date.now,
): TokenStore {
  const name = `latch-session-${appId.replace(/[^A-Za-z0-9_-]/g, '')}`
  let kind: 'cookie' | 'localStorage' | 'memory' = 'memory'
  let memory = false
  forgetLegacyToken(appId, doc, storage)

  const readCookie = (): boolean =>
    doc.cookie.split(';').some((part) => part.trim() === `${name}=${MARK}`)
  const writeCookie = (value: string, maxAge: number): void => {
    doc.cookie = `${name}=${value}; Max-Age=${maxAge}; Path=/; SameSite=None; Secure; Partitioned`
  }
  const readStorage = (): boolean => {
    const raw = storage?.getItem(name)
    if (!raw) return false
    const expiresAt = Number(raw)
    if (Number.isFinite(expiresAt) && expiresAt > now()) return true
    storage?.removeItem(name)
    return false
  }

  return {
    present() {
      return memory || readCookie() || readStorage()
    },
    mark() {
      memory = true
      writeCookie(MARK, REFRESH_TOKEN_MAX_AGE_S)
      if (readCookie()) {
        kind = 'cookie'
        return
      }
      // The browser refused the cookie in this frame (third-party cookie blocking, or a
      // non-secure context): the origin's storage is the next best home.
      try {
        storage?.setItem(name, String(now() + REFRESH_TOKEN_MAX_AGE_S * 1000))
        kind = storage ? 'localStorage' : 'memory'
      } catch {
        kind = 'memory'
      }
    },
    clear() {
      memory = false
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

/**
 * Earlier versions kept the refresh token itself where scripts read it (`latch-rt-<app id>`, a
 * cookie or localStorage): it is deleted, so none is left readable. That session then needs a
 * new sign-in, as the API reads the token from its own cookie only.
 */
function forgetLegacyToken(appId: string, doc: Document, storage: Storage | null): void {
  const legacy = `latch-rt-${appId.replace(/[^A-Za-z0-9_-]/g, '')}`
  if (doc.cookie.split(';').some((part) => part.trim().startsWith(`${legacy}=`))) {
    doc.cookie = `${legacy}=; Max-Age=0; Path=/; SameSite=None; Secure; Partitioned`
  }
  try {
    storage?.removeItem(legacy)
  } catch {
    // Blocked storage kept nothing.
  }
}

export function safeLocalStorage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage
  } catch {
    return null
  }
}
