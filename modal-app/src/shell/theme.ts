/** One set of CSS custom properties for every theme: light, dark or a custom background. */
import {
  colorTone,
  DARK_BACKGROUND_COLOR,
  ERROR_COLOR,
  LIGHT_BACKGROUND_COLOR,
  type Palette,
  relativeLuminance,
  SUCCESS_COLOR,
  type ThemeSetting,
} from '@latch/shared'

export type ThemeTokens = Record<`--latch-${string}`, string>

const LIGHT_TEXT = '#1E1E1D'
const DARK_TEXT = '#FFFFFF'

/** Text colour with the better contrast on a background. */
function readableOn(background: string): string {
  const tone = colorTone(background)
  if (tone === 'light') return LIGHT_TEXT
  if (tone === 'dark') return DARK_TEXT
  const l = relativeLuminance(background) ?? 1
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? LIGHT_TEXT : DARK_TEXT
}

/** White text on an accent unless it falls under 3:1 contrast (WCAG AA for controls). */
function buttonTextOn(accent: string): string {
  const l = relativeLuminance(accent)
  if (l === undefined) return DARK_TEXT
  return 1.05 / (l + 0.05) >= 3 ? DARK_TEXT : LIGHT_TEXT
}

/** Mixes a colour toward another, in CSS, so borders and muted text follow the background. */
function mix(color: string, toward: string, percent: number): string {
  return `color-mix(in srgb, ${color} ${100 - percent}%, ${toward} ${percent}%)`
}

/** WCAG contrast ratio of two #rgb/#rrggbb colours; NaN when either is not one. */
export function contrast(a: string, b: string): number {
  const la = relativeLuminance(a) ?? Number.NaN
  const lb = relativeLuminance(b) ?? Number.NaN
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05)
}

/**
 * The colour itself when text in it reaches `ratio` (WCAG AA for small text: 4.5:1) on
 * `background`, else the nearest shade toward black or white, whichever the background contrasts
 * with more, that does. The default accent, success and error colours (DEFAULT_ACCENT and the
 * theme's tokens) stay the fills and borders; small text uses this shade. A colour that cannot be
 * measured (a palette may name one) is left as given.
 * @example accessibleShade('#EC6351', '#FFFFFF') // a deeper red, 4.5:1 on white
 */
export function accessibleShade(color: string, background: string, ratio = 4.5): string {
  // NaN (not measurable) compares false: left as given.
  if (!(contrast(color, background) < ratio)) return color
  const hex = color.trim().replace(/^#(\w)(\w)(\w)$/, '#$1$1$2$2$3$3')
  const rgb = Number.parseInt(hex.slice(1), 16)
  const toward = contrast('#000000', background) > contrast('#FFFFFF', background) ? 0 : 255
  for (let step = 1; ; step++) {
    const share = step / 50
    const shade = `#${[16, 8, 0]
      .map((shift) => Math.round(((rgb >> shift) & 255) * (1 - share) + toward * share))
      .map((v) => v.toString(16).padStart(2, '0'))
      .join('')}`
    if (step === 50 || contrast(shade, background) >= ratio) return shade
  }
}

/**
 * The tokens of a theme setting and accent colour; a palette overrides single tokens.
 * @example themeTokens('dark', '#676FFF')['--latch-bg'] // '#1E1E1D'
 */
export function themeTokens(
  theme: ThemeSetting,
  accent: string,
  palette: Palette = {},
): ThemeTokens {
  const background =
    palette.background ??
    (theme === 'light' ? LIGHT_BACKGROUND_COLOR : theme === 'dark' ? DARK_BACKGROUND_COLOR : theme)
  const foreground = palette.foreground ?? readableOn(background)
  const accentColor = palette.accent ?? accent
  const success = palette.success ?? SUCCESS_COLOR
  const error = palette.error ?? ERROR_COLOR
  const accentFg = buttonTextOn(accentColor)
  return {
    '--latch-bg': background,
    '--latch-fg': foreground,
    // The background itself, moved just far enough to read: the quietest text that passes.
    '--latch-muted':
      relativeLuminance(background) === undefined
        ? mix(foreground, background, 40)
        : accessibleShade(background, background, 5),
    '--latch-border': mix(foreground, background, 82),
    '--latch-surface': mix(foreground, background, 94),
    '--latch-accent': accentColor,
    '--latch-accent-fg': accentFg,
    // The primary button's fill: the accent, deepened until its label reads at 4.5:1.
    '--latch-accent-fill': accessibleShade(accentColor, accentFg),
    '--latch-accent-text': accessibleShade(accentColor, background),
    '--latch-success': success,
    '--latch-success-text': accessibleShade(success, background),
    '--latch-error': error,
    '--latch-error-text': accessibleShade(error, background),
    '--latch-scheme': foreground === LIGHT_TEXT ? 'light' : 'dark',
  }
}
