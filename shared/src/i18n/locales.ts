/** The languages Latch ships, and how a visitor's preferences pick one. */
export const LOCALES = ['en', 'es', 'fr', 'de', 'pt-BR', 'ja', 'zh-CN', 'ko', 'tr', 'ar'] as const
export type Locale = (typeof LOCALES)[number]

/** Written right to left: the modal sets `dir="rtl"` and mirrors. */
export const isRtl = (locale: Locale): boolean => locale === 'ar'

/**
 * The first shipped locale matching the wanted tags, in order (the host's `locale`, else
 * `navigator.languages`): the exact tag, else its language (`pt-PT` gets `pt-BR`, `zh-TW`
 * `zh-CN`, `es-MX` `es`); English when nothing matches.
 */
export function pickLocale(wanted: readonly string[]): Locale {
  for (const tag of wanted) {
    const lower = tag.toLowerCase()
    const hit =
      LOCALES.find((l) => l.toLowerCase() === lower) ??
      LOCALES.find((l) => l.slice(0, 2) === lower.slice(0, 2))
    if (hit) return hit
  }
  return 'en'
}

/** Fills `{name}` placeholders; an unknown one stays as written. */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (all, name: string) =>
    name in values ? String(values[name]) : all,
  )
}
