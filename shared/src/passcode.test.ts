import { expect, test } from 'vitest'
import { PASSCODE_ALPHABET, PASSCODE_LENGTH } from './constants.ts'
import { generatePasscode, isWeakPasscode } from './passcode.ts'
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
  // A source that gives 255 (rejected) then 0, 61, 1 and 2 in turn.
  let n = 0
  const code = generatePasscode((bytes) => {
    for (let i = 0; i < bytes.length; i++) bytes[i] = [255, 0, 61, 1, 2][n++ % 5] as number
  })
  expect(code).toBe('A9BCA9')
})

test('behavior: a weak draw is drawn again, so a generated passcode is never refused at creation', () => {
  // The first draw reads '123456' (bytes 53..58 are the digits 1..6), the second 'q3ZL9a'.
  const draws = [
    [53, 54, 55, 56, 57, 58],
    [42, 55, 25, 11, 61, 26],
  ]
  let call = 0
  const code = generatePasscode((bytes) => {
    const draw = draws[Math.min(call++, 1)] as number[]
    bytes.fill(255)
    bytes.set(draw)
  })
  expect(call).toBe(2)
  expect(code).toBe('q3ZL9a')
  expect(isWeakPasscode(code)).toBe(false)
})
