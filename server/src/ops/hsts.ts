/**
 * Strict-Transport-Security for both origins in production. Once a browser has seen it, it
 * goes to that name over https only for a year, so a network attacker cannot strip TLS from a
 * later visit (a typed `http://` link, a captive portal) and read codes or tokens. Without
 * includeSubDomains or preload: names under the operator's domain that are not Latch's are not
 * Latch's to pin.
 */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000'

/**
 * The header's value for a server whose public origin is `origin`: only in production and only
 * when that origin is https (a browser ignores the header over plain http, and a loopback trial
 * run must not pin localhost).
 */
export function strictTransportSecurity(production: boolean, origin: string | null): string | null {
  if (!production || origin === null) return null
  try {
    return new URL(origin).protocol === 'https:' ? STRICT_TRANSPORT_SECURITY : null
  } catch {
    return null
  }
}
