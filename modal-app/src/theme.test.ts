import {
  DARK_BACKGROUND_COLOR,
  DEFAULT_ACCENT_COLOR,
  ERROR_COLOR,
  LIGHT_BACKGROUND_COLOR,
  SUCCESS_COLOR,
} from '@latch/shared'
import { expect, test } from 'vitest'
import { themeTokens } from './theme.ts'

test('behavior: light theme with the default colours', () => {
  const t = themeTokens('light', DEFAULT_ACCENT_COLOR)
  expect(t['--latch-bg']).toBe(LIGHT_BACKGROUND_COLOR)
  expect(t['--latch-fg']).toBe('#1E1E1D')
  expect(t['--latch-accent']).toBe('#676FFF')
  expect(t['--latch-success']).toBe(SUCCESS_COLOR)
  expect(t['--latch-error']).toBe(ERROR_COLOR)
  expect(t['--latch-accent-fg']).toBe('#FFFFFF')
})

test('behavior: dark theme uses the dark background and light text', () => {
  const t = themeTokens('dark', '#FFD700')
  expect(t['--latch-bg']).toBe(DARK_BACKGROUND_COLOR)
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
