/**
 * Loaded at init when the visitor may not read English or the host overrides texts: picks the
 * shipped locale, loads its chunk (at most LOCALE_WAIT_MS, then English), applies the host's
 * `texts` for it and marks the document's language and direction.
 */
import { type HostAppConfig, LatchError } from '@latch/shared'
import type { Locale } from '@latch/shared/i18n'
import { en, isRtl, loadLocale, pickLocale } from '@latch/shared/i18n'
import { callHost } from '../runtime.ts'

/** How long init waits for a locale's chunk before it shows English. */
export const LOCALE_WAIT_MS = 3000

export const unshippedLocaleWarning = (tag: string): string =>
  `The locale ${tag} is not one Latch ships; the modal speaks English.`

/**
 * The host's texts for one locale, checked: an object of strings of at most 1000 characters
 * (their keys are typed on the host's side; a key the table lacks is never read).
 */
function overridesOf(texts: unknown): Record<string, string> {
  if (texts === undefined) return {}
  const bad = (where: string) =>
    LatchError.of('invalid_data', {
      message: `Invalid Latch configuration: texts${where}: expected an object of texts`,
    })
  if (typeof texts !== 'object' || texts === null || Array.isArray(texts)) throw bad('')
  for (const [key, value] of Object.entries(texts)) {
    if (typeof value !== 'string' || value.length > 1000) throw bad(`.${key}`)
  }
  return texts as Record<string, string>
}

/**
 * The table and locale to use (i18n.ts applyLocale sets them: this file does not import i18n.ts,
 * which loads it); marks the document's language and direction.
 */
export async function load(
  tags: readonly string[],
  host: HostAppConfig,
  doc: Document = document,
): Promise<{ table: Record<string, string>; locale: Locale }> {
  const texts: unknown = host.texts ?? {}
  if (typeof texts !== 'object' || texts === null || Array.isArray(texts)) {
    throw LatchError.of('invalid_data', {
      message: 'Invalid Latch configuration: texts: expected an object of locales',
    })
  }
  let chosen = pickLocale(tags)
  if (host.locale && chosen === 'en' && !/^en\b/i.test(host.locale)) {
    callHost('emit', 'warning', unshippedLocaleWarning(host.locale))
  }
  const loaded =
    chosen === 'en'
      ? null
      : await Promise.race([
          loadLocale(chosen).catch(() => null),
          new Promise<null>((resolve) => setTimeout(resolve, LOCALE_WAIT_MS, null)),
        ])
  if (!loaded) chosen = 'en'
  const overrides = overridesOf((texts as Record<string, unknown>)[chosen])
  doc.documentElement.lang = chosen
  doc.documentElement.dir = isRtl(chosen) ? 'rtl' : 'ltr'
  return { table: { ...en, ...loaded?.m, ...loaded?.e, ...overrides }, locale: chosen }
}
