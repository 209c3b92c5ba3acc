/**
 * One chunk per shipped locale besides English: only the visitor's is loaded. English is
 * in the landing (en.ts) and with the screens (en-screens.ts).
 */
import type { Locale } from './locales.ts'
import type { LocaleTable } from './messages.ts'

type Loader = () => Promise<{ default: LocaleTable }>

const LOADERS: Record<Exclude<Locale, 'en'>, Loader> = {
  es: () => import('./es.ts'),
  fr: () => import('./fr.ts'),
  de: () => import('./de.ts'),
  'pt-BR': () => import('./pt-BR.ts'),
  ja: () => import('./ja.ts'),
  'zh-CN': () => import('./zh-CN.ts'),
  ko: () => import('./ko.ts'),
  tr: () => import('./tr.ts'),
  ar: () => import('./ar.ts'),
}

export const loadLocale = (locale: Exclude<Locale, 'en'>): Promise<LocaleTable> =>
  LOADERS[locale]().then((m) => m.default)
