/**
 * The landing's part of the host configuration, as the host SDK writes it in the frame's query
 * (host-sdk/src/landing-query.ts) so that the modal server can render the landing before the
 * modal's JavaScript runs: the theme, the accent colour, the login methods in their order,
 * whether wallets come first and the locale. Nothing personal, nothing secret: what the page's
 * own configuration says about the modal's look. Read by the modal server (ssr.ts), which writes
 * the configuration it rendered with on the page's root for the page to hydrate with
 * (ssr/hydrate.tsx). Anything the rules refuse (an unknown key or value, a repeated or oversized
 * parameter, a configuration the input rules warn about) gives null: no server rendering, the
 * landing renders client-side as without it.
 */
import {
  type HostAppConfig,
  LOGIN_METHODS,
  type LoginMethod,
  validateHostConfig,
} from '@latch/shared'

/**
 * The parameter the host SDK writes the landing configuration in: one JSON array of the
 * appearance, the login methods in order and the locale (host-sdk/src/landing-query.ts).
 */
export const LANDING_QUERY_PARAM = 'ssr'

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i
/** A BCP 47 tag of the shape the modal's locales have ('en', 'pt-BR', 'zh-CN'). */
const TAG = /^[a-z]{2,3}(?:-[a-z0-9]{2,8}){0,2}$/i
const MAX_QUERY = 500
/** What the appearance may say for the server to render it: no logo, no palette. */
const APPEARANCE_KEYS = ['theme', 'accentColor', 'showWalletLoginFirst']

/**
 * The host configuration the query describes, by shape only; null when the query has none, or
 * one of another shape (a repeated or oversized parameter, an unknown key or value).
 */
export function parseLandingQuery(query: URLSearchParams): HostAppConfig | null {
  const values = query.getAll(LANDING_QUERY_PARAM)
  const [raw] = values
  if (values.length !== 1 || !raw || raw.length > MAX_QUERY) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return null
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) return null
  const [appearance, methods, locale] = parsed as unknown[]
  const config: HostAppConfig = {}
  if (appearance != null) {
    if (typeof appearance !== 'object' || Array.isArray(appearance)) return null
    const a = appearance as Record<string, unknown>
    if (Object.keys(a).some((key) => !APPEARANCE_KEYS.includes(key))) return null
    const { theme, accentColor, showWalletLoginFirst } = a
    if (
      (theme !== undefined &&
        theme !== 'light' &&
        theme !== 'dark' &&
        !(typeof theme === 'string' && HEX.test(theme))) ||
      (accentColor !== undefined && !(typeof accentColor === 'string' && HEX.test(accentColor))) ||
      (showWalletLoginFirst !== undefined && typeof showWalletLoginFirst !== 'boolean')
    ) {
      return null
    }
    if (Object.keys(a).length > 0) config.appearance = a as HostAppConfig['appearance']
  }
  if (methods != null) {
    const known = LOGIN_METHODS as readonly unknown[]
    if (!Array.isArray(methods) || methods.some((m) => !known.includes(m))) return null
    if (new Set(methods).size !== methods.length) return null
    config.loginMethods = methods as LoginMethod[]
  }
  if (locale != null) {
    if (typeof locale !== 'string' || !TAG.test(locale)) return null
    config.locale = locale
  }
  return config
}

/**
 * The query's host configuration, checked by the input rules the modal applies at init (the
 * server's side): one they refuse or warn about is left to the client, which tells the host.
 */
export function landingConfigFromQuery(query: URLSearchParams): HostAppConfig | null {
  const config = parseLandingQuery(query)
  if (!config) return null
  try {
    const { config: checked, warnings } = validateHostConfig(config)
    return warnings.length === 0 ? checked : null
  } catch {
    return null
  }
}

/** The first language tags of an Accept-Language header, by preference. */
export function acceptedLanguages(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';')
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
      return { tag: tag.trim(), q: q ? Number(q.slice(2)) : 1, i }
    })
    .filter((l) => l.tag && l.tag !== '*' && l.q > 0 && TAG.test(l.tag))
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((l) => l.tag)
}
