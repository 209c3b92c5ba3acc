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

/**
 * The host page's origin as startup verified it (the page that frames the modal, in the app's
 * allowed origins, and the one penpal answers): what a session link may open on and be
 * redeemed from. Null until then, and in a modal that connected to no page.
 */
let verifiedHost: { origin: string; allowed: readonly string[] } | null = null

/** Startup, once the framing page's origin is one of the app's: penpal talks only to it. */
export function setVerifiedHost(origin: string | null, allowed: readonly string[] = []): void {
  const target = origin ? normalize(origin) : null
  verifiedHost = target && isAllowedOrigin(target, allowed) ? { origin: target, allowed } : null
}

/** The verified host origin, or null. */
export function verifiedHostOrigin(): string | null {
  return verifiedHost?.origin ?? null
}

/** Whether `href` is a page of the verified host origin (and so of the app's allowed ones). */
export function isVerifiedHostPage(href: string | null): boolean {
  const host = verifiedHost
  if (!host || !href) return false
  return normalize(href) === host.origin && isAllowedOrigin(host.origin, host.allowed)
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
