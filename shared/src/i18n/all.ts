/**
 * Every shipped table at once, for the server (code e-mails and SMS) and the tests. The modal
 * never imports this: it loads only the visitor's locale (load.ts).
 */
import { ERRORS } from '../errors/index.ts'
import ar from './ar.ts'
import de from './de.ts'
import { en } from './en.ts'
import { enMail } from './en-mail.ts'
import { enScreens } from './en-screens.ts'
import es from './es.ts'
import fr from './fr.ts'
import ja from './ja.ts'
import ko from './ko.ts'
import type { Locale } from './locales.ts'
import type { LocaleTable, ShownErrorCode } from './messages.ts'
import ptBR from './pt-BR.ts'
import tr from './tr.ts'
import zhCN from './zh-CN.ts'

/** The codes the modal shows, in the order ja.ts lists them (every table has the same keys). */
const SHOWN = Object.keys(ja.e) as ShownErrorCode[]

/** English: the landing's and the screens' messages, the catalogue's error messages. */
export const EN: LocaleTable = {
  m: { ...en, ...enScreens },
  e: Object.fromEntries(SHOWN.map((c) => [c, ERRORS[c].message])) as LocaleTable['e'],
  mail: enMail,
}

export const TABLES: Record<Locale, LocaleTable> = {
  en: EN,
  es,
  fr,
  de,
  'pt-BR': ptBR,
  ja,
  'zh-CN': zhCN,
  ko,
  tr,
  ar,
}

export { enMail }
