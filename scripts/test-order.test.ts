import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { spread, WAITING_FILES } from './test-order.ts'

describe('the test files’ order', () => {
  test('behavior: waiting files are spread evenly among the others, the first at the start, none side by side', () => {
    const others = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']
    expect(spread(others, ['W', 'X'])).toEqual(['W', 'a', 'b', 'c', 'd', 'X', 'e', 'f', 'g', 'h'])
    expect(spread(others, ['W', 'X', 'Y', 'Z'])).toEqual([
      'W',
      'a',
      'b',
      'X',
      'c',
      'd',
      'Y',
      'e',
      'f',
      'Z',
      'g',
      'h',
    ])
    expect(spread(others, [])).toEqual(others)
    // More waiting files than others: every file is still there once, in its order.
    expect(spread(['a'], ['W', 'X', 'Y'])).toEqual(['W', 'X', 'a', 'Y'])
  })

  test('config: every waiting file named exists (a renamed file would silently lose its place)', () => {
    const root = fileURLToPath(new URL('../', import.meta.url))
    expect(WAITING_FILES.filter((file) => !existsSync(`${root}${file}`))).toEqual([])
  })
})
