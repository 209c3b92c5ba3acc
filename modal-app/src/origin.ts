/** Who is embedding the modal, and whether the app lets the modal talk to them. */

/** The origin of the page that frames the modal, or null when it is not framed. */
export function parentOrigin(win: Window = window): string | null {
  if (win.parent === win) return null
  const ancestors = win.location.ancestorOrigins
  if (ancestors && ancestors.length > 0) return ancestors[0] ?? null
  const referrer = win.document.referrer
  if (!referrer) return null
  try {
    return new URL(referrer).origin
  } catch {
    return null
  }
}

function normalize(origin: string): string | null {
  try {
    const url = new URL(origin)
    return url.origin === 'null' ? null : url.origin
  } catch {
    return null
  }
}

/** Exact origin match (scheme, host and port) against the app's allowed origins. */
export function isAllowedOrigin(origin: string | null, allowed: readonly string[]): boolean {
  const target = origin ? normalize(origin) : null
  if (!target) return false
  return allowed.some((entry) => normalize(entry) === target)
}

/** The app id from the frame URL's fragment (`#app=...`). */
export function appIdFromHash(hash: string): string | null {
  const value = new URLSearchParams(hash.replace(/^#/, '')).get('app')
  return value || null
}

/** The API base URL the modal server put in index.html. */
export function apiUrlFromMeta(doc: Document = document): string | null {
  const content = doc.querySelector<HTMLMetaElement>('meta[name="latch-api-url"]')?.content
  return content?.trim() || null
}
