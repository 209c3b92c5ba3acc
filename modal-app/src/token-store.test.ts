import { REFRESH_TOKEN_MAX_AGE_S } from '@latch/shared'
import { expect, test } from 'vitest'
import { createTokenStore } from './token-store.ts'

/** A document whose cookie jar accepts or refuses what is written, and records it. */
function cookieDoc(accept: boolean) {
  const jar = new Map<string, string>()
  const written: string[] = []
  const doc = {
    get cookie() {
      return [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
    },
    set cookie(line: string) {
      written.push(line)
      if (!accept) return
      const [pair] = line.split(';')
      const [key, value] = (pair ?? '').split('=')
      if (/Max-Age=0/.test(line)) jar.delete(key as string)
      else jar.set(key as string, value ?? '')
    },
  }
  return { doc: doc as unknown as Document, written }
}

test('behavior: a cookie of 30 days, SameSite=None; Secure; Partitioned, when the browser keeps it', () => {
  const { doc, written } = cookieDoc(true)
  const storage = window.localStorage
  storage.clear()
  const tokens = createTokenStore('app1', doc, storage)
  tokens.set('rt-1')
  expect(tokens.kind()).toBe('cookie')
  expect(written[0]).toBe(
    `latch-rt-app1=rt-1; Max-Age=${REFRESH_TOKEN_MAX_AGE_S}; Path=/; SameSite=None; Secure; Partitioned`,
  )
  expect(REFRESH_TOKEN_MAX_AGE_S).toBe(30 * 24 * 3600)
  expect(tokens.get()).toBe('rt-1')
  expect(storage.length).toBe(0)
  tokens.clear()
  expect(tokens.get()).toBeNull()
})

test('behavior: localStorage of the modal origin when the cookie is refused', () => {
  const { doc } = cookieDoc(false)
  const storage = window.localStorage
  storage.clear()
  let now = 1_000
  const tokens = createTokenStore('app1', doc, storage, () => now)
  tokens.set('rt-2')
  expect(tokens.kind()).toBe('localStorage')
  expect(createTokenStore('app1', doc, storage, () => now).get()).toBe('rt-2')
  now += REFRESH_TOKEN_MAX_AGE_S * 1000 + 1
  expect(createTokenStore('app1', doc, storage, () => now).get()).toBeNull()
  expect(storage.length).toBe(0)
})

test('behavior: tokens of different apps do not mix', () => {
  const { doc } = cookieDoc(false)
  window.localStorage.clear()
  createTokenStore('app1', doc).set('a')
  expect(createTokenStore('app2', doc).get()).toBeNull()
})
