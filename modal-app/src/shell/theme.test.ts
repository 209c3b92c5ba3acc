// @vitest-environment node
import {
  DARK_BACKGROUND_COLOR,
  DEFAULT_ACCENT_COLOR,
  ERROR_COLOR,
  LIGHT_BACKGROUND_COLOR,
  relativeLuminance,
  SUCCESS_COLOR,
} from '@latch/shared'
import { expect, test } from 'vitest'
import { accessibleShade, contrast, themeTokens } from './theme.ts'

test('behavior: light theme with the default colours', () => {
  const t = themeTokens('light', DEFAULT_ACCENT_COLOR)
  expect(t['--latch-bg']).toBe(LIGHT_BACKGROUND_COLOR)
  expect(t['--latch-fg']).toBe('#1E1E1D')
  expect(t['--latch-accent']).toBe('#676FFF')
  // SPEC's defaults, written out.
  expect(t['--latch-success']).toBe('#51BA81')
  expect(t['--latch-error']).toBe('#EC6351')
  expect(t['--latch-accent-fg']).toBe('#FFFFFF')
})

test('behavior: dark theme uses the dark background and light text', () => {
  const t = themeTokens('dark', '#FFD700')
  expect(t['--latch-bg']).toBe('#1E1E1D')
  expect(t['--latch-fg']).toBe('#FFFFFF')
  expect(t['--latch-accent']).toBe('#FFD700')
  expect(t['--latch-accent-fg']).toBe('#1E1E1D')
})

test('param: a custom background picks readable text; a palette overrides single tokens', () => {
  expect(themeTokens('#0A1F44', DEFAULT_ACCENT_COLOR)['--latch-fg']).toBe('#FFFFFF')
  expect(themeTokens('#F5F0E6', DEFAULT_ACCENT_COLOR)['--latch-fg']).toBe('#1E1E1D')
  const t = themeTokens('light', DEFAULT_ACCENT_COLOR, { error: '#FF0000', background: '#000000' })
  expect(t['--latch-error']).toBe('#FF0000')
  expect(t['--latch-bg']).toBe('#000000')
  expect(t['--latch-fg']).toBe('#FFFFFF')
})

/** Every text token against the background it sits on, and the button label on its fill. */
function textPairs(t: ReturnType<typeof themeTokens>): [string, string, string][] {
  const get = (name: `--latch-${string}`) => t[name] ?? 'missing'
  const bg = get('--latch-bg')
  return [
    ['muted', get('--latch-muted'), bg],
    ['accent text', get('--latch-accent-text'), bg],
    ['success text', get('--latch-success-text'), bg],
    ['error text', get('--latch-error-text'), bg],
    ['button label', get('--latch-accent-fg'), get('--latch-accent-fill')],
  ]
}

test('behavior: the default colours stay the fills; small text takes shades reaching 4.5:1 (light, dark)', () => {
  for (const theme of ['light', 'dark'] as const) {
    const t = themeTokens(theme, DEFAULT_ACCENT_COLOR)
    expect(t['--latch-accent']).toBe('#676FFF')
    expect(t['--latch-success']).toBe(SUCCESS_COLOR)
    expect(t['--latch-error']).toBe(ERROR_COLOR)
    for (const [name, fg, bg] of textPairs(t)) {
      expect(contrast(fg, bg), `${theme}: ${name} ${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5)
    }
  }
  // On white the defaults fail for small text (3.97, 2.42, 3.25): the text shades differ.
  const light = themeTokens('light', DEFAULT_ACCENT_COLOR)
  expect(light['--latch-accent-text']).not.toBe('#676FFF')
  expect(light['--latch-success-text']).not.toBe(SUCCESS_COLOR)
  expect(light['--latch-error-text']).not.toBe(ERROR_COLOR)
  // On the dark background error and success already read well: kept as they are.
  const dark = themeTokens('dark', DEFAULT_ACCENT_COLOR)
  expect(dark['--latch-error-text']).toBe(ERROR_COLOR)
  expect(dark['--latch-success-text']).toBe(SUCCESS_COLOR)
})

test('param: any hex accent on light, dark and custom backgrounds gets readable text shades', () => {
  const steps = ['00', '33', '66', '99', 'CC', 'FF']
  const accents = steps.flatMap((r) => steps.flatMap((g) => steps.map((b) => `#${r}${g}${b}`)))
  for (const theme of ['light', 'dark', '#F5F0E6', '#0A1F44'] as const) {
    for (const accent of accents) {
      for (const [name, fg, bg] of textPairs(themeTokens(theme, accent))) {
        expect(contrast(fg, bg), `${theme} ${accent}: ${name}`).toBeGreaterThanOrEqual(4.5)
      }
    }
  }
})

test('param: accessibleShade keeps a colour that already reads, else moves toward black or white', () => {
  expect(accessibleShade('#1E1E1D', '#FFFFFF')).toBe('#1E1E1D')
  const onWhite = accessibleShade('#EC6351', '#FFFFFF')
  expect(contrast(onWhite, '#FFFFFF')).toBeGreaterThanOrEqual(4.5)
  expect(relativeLuminance(onWhite)).toBeLessThan(relativeLuminance('#EC6351') ?? 0)
  const onDark = accessibleShade('#676FFF', DARK_BACKGROUND_COLOR)
  expect(contrast(onDark, DARK_BACKGROUND_COLOR)).toBeGreaterThanOrEqual(4.5)
  expect(relativeLuminance(onDark)).toBeGreaterThan(relativeLuminance('#676FFF') ?? 1)
  // A colour it cannot measure (a palette may name one) is left as given.
  expect(accessibleShade('rebeccapurple', '#FFFFFF')).toBe('rebeccapurple')
})
