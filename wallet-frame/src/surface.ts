/**
 * What the wallet frame's own surfaces (the approvals in approval.ts, the batch review in
 * batch/review.ts) share: the visitor's language and its texts, the document's direction and
 * colours, inline styles (the frame's CSP allows no stylesheet from the modal).
 */
import { isRtl, LOCALES, type Locale, loadLocale } from '@latch/shared/i18n'
import { enApproval } from '@latch/shared/i18n/approval'

export const css = (el: HTMLElement, rules: Record<string, string>): void => {
  for (const [name, value] of Object.entries(rules)) el.style.setProperty(name, value)
}

/** A shipped locale named by the modal, or null (English). */
export function surfaceLocale(requested: string | undefined): Locale | null {
  return (LOCALES as readonly string[]).includes(requested ?? '') ? (requested as Locale) : null
}

/** The approval texts in `locale`, English where a text (or the whole language) is missing. */
export async function surfaceTexts(locale: Locale | null): Promise<Record<string, string>> {
  if (!locale || locale === 'en') return enApproval
  try {
    return { ...enApproval, ...(await loadLocale(locale)).m }
  } catch (e) {
    console.error('Latch wallet frame: the language could not be loaded; English stays', e)
    return enApproval
  }
}

/** The document in the visitor's language and direction, with the modal's colours. */
export function dressDocument(
  doc: Document,
  locale: Locale | null,
  colors: { background?: string; foreground?: string },
): void {
  const html = doc.documentElement
  html.lang = locale ?? 'en'
  html.dir = locale && isRtl(locale) ? 'rtl' : 'ltr'
  css(doc.body, {
    margin: '0',
    background: colors.background ?? 'transparent',
    color: colors.foreground ?? '#1e1e1d',
    font: '14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif',
  })
}
