/**
 * The visitor's language (docs/behaviour.md, "Languages"). English is in the landing; any other
 * language, or a host's `texts`, loads i18n-load.ts at init, before the first paint, so the
 * landing never shows English and then flips. `t` reads the table in use.
 */
import { type ClientErrorCode, ERRORS, type HostAppConfig } from '@latch/shared'
import { en, type Locale, type MessageKey } from '@latch/shared/i18n'

/** The messages, and a locale's texts of the errors the modal shows, keyed by their codes. */
let table: Record<string, string> = en
let language: Locale = 'en'

export const locale = (): Locale => language

export const t = (key: MessageKey): string => table[key] as string

/** `t` with its `{name}` placeholders filled. */
export const tf = (key: MessageKey, values: Record<string, string | number>): string =>
  t(key).replace(/\{(\w+)\}/g, (all, name: string) => String(values[name] ?? all))

/** Set by applyLocale with the table i18n-load.ts picked and loaded. */
export function setTable(m: Record<string, string>, l: Locale): void {
  table = m
  language = l
}

/** The screens' English, loaded with their chunks (screens/lazy.tsx): fills the keys missing. */
export function addEnglish(texts: Record<string, string>): void {
  table = { ...texts, ...table }
  screensEnglish = true
}

let screensEnglish = false
/** Whether the screens' English is in (a lazy screen then loads only its own chunk). */
export const hasScreensEnglish = (): boolean => screensEnglish

/**
 * What the modal shows for an error message it holds: the locale's text of the catalogue entry
 * with that English message, else the message as it is (the host always receives English).
 */
export function shownError(message: string): string {
  for (const code in ERRORS) {
    if (table[code] && ERRORS[code as ClientErrorCode].message === message) return table[code]
  }
  return message
}

/** English stays as it is unless asked otherwise: then i18n-load.ts decides. */
export async function applyLocale(
  host: HostAppConfig,
  wanted = navigator.languages,
): Promise<void> {
  const tags = host.locale ? [host.locale] : wanted
  if (language !== 'en' || host.texts || !/^en\b/i.test(tags[0] ?? 'en')) {
    const { table: loaded, locale } = await (await import('./i18n-load.ts')).load(tags, host)
    setTable(loaded, locale)
  }
}
