/**
 * The URL for an `href` if it is http(s), else null. React DOM blocks `javascript:` URLs in
 * `href`; the Preact build (renderer.ts) sets what it is given. The host configuration is checked for
 * http(s) at init (shared protocol/config-shape.ts) and the server checks what it stores, so this guards
 * only against a configuration that slipped past both, e.g. a database row written by hand;
 * the page's CSP (no 'unsafe-inline') would block such a URL too.
 */
export function httpHref(url: string | null | undefined): string | null {
  return url && /^https?:\/\//i.test(url) ? url : null
}
