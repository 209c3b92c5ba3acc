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
  return {
    '--latch-bg': background,
    '--latch-fg': foreground,
    '--latch-muted': mix(foreground, background, 40),
    '--latch-border': mix(foreground, background, 82),
    '--latch-surface': mix(foreground, background, 94),
    '--latch-accent': accentColor,
    '--latch-accent-fg': buttonTextOn(accentColor),
    '--latch-success': palette.success ?? SUCCESS_COLOR,
    '--latch-error': palette.error ?? ERROR_COLOR,
    '--latch-scheme': foreground === LIGHT_TEXT ? 'light' : 'dark',
  }
}
