import { expect, test } from 'vitest'
import { PASSCODE_ALPHABET, PASSCODE_LENGTH } from './constants.ts'
import { generatePasscode } from './passcode.ts'
import { validatePasscode } from './validation.ts'

test('behavior: the alphabet is the 62 letters and digits', () => {
  expect(PASSCODE_ALPHABET).toHaveLength(62)
  expect(new Set(PASSCODE_ALPHABET).size).toBe(62)
  expect(/^[A-Za-z0-9]+$/.test(PASSCODE_ALPHABET)).toBe(true)
})

test('behavior: 6 valid characters over many draws, every character reachable', () => {
  const seen = new Set<string>()
  for (let i = 0; i < 5000; i++) {
    const code = generatePasscode()
    expect(code).toHaveLength(PASSCODE_LENGTH)
    expect(validatePasscode(code).ok).toBe(true)
    for (const c of code) seen.add(c)
  }
  expect(seen.size).toBe(62)
})

test('behavior: bytes at or above 248 are redrawn, so there is no modulo bias', () => {
  // A source that gives 255 (rejected) then 0 and 61 alternately.
  let n = 0
  const code = generatePasscode((bytes) => {
    for (let i = 0; i < bytes.length; i++) bytes[i] = [255, 0, 61][n++ % 3] as number
  })
  expect(code).toBe('A9A9A9')
})
