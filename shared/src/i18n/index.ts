export { en } from './en.ts'
export { loadLocale } from './load.ts'
export { fill, isRtl, LOCALES, type Locale, pickLocale } from './locales.ts'
export type { HostTexts, LocaleTable, MessageKey, Messages, ShownErrorCode } from './messages.ts'
