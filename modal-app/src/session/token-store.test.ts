import { REFRESH_TOKEN_MAX_AGE_S } from '@latch/shared'
import { expect, test } from 'vitest'
import { createTokenStore } from './token-store.ts'

/** A document whose cookie jar accepts or refuses what is written, and records it. */
function cookieDoc(accept: boolean, initial: Record<string, string> = {}) {
  const jar = new Map<string, string>(Object.entries(initial))
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
  return { doc: doc as unknown as Document, written, jar }
}

test('behavior: the hint is a flag cookie of 30 days, SameSite=None; Secure; Partitioned, when the browser keeps it; it holds no token', () => {
  const { doc, written } = cookieDoc(true)
  const storage = window.localStorage
  storage.clear()
  const hint = createTokenStore('app1', doc, storage)
  expect(hint.present()).toBe(false)
  hint.mark()
  expect(hint.kind()).toBe('cookie')
  expect(written).toEqual([
    `latch-session-app1=1; Max-Age=${REFRESH_TOKEN_MAX_AGE_S}; Path=/; SameSite=None; Secure; Partitioned`,
  ])
  expect(REFRESH_TOKEN_MAX_AGE_S).toBe(30 * 24 * 3600)
  // A reload (a new store over the same jar) sees it.
  expect(createTokenStore('app1', doc, storage).present()).toBe(true)
  expect(storage.length).toBe(0)
  hint.clear()
  expect(hint.present()).toBe(false)
  expect(createTokenStore('app1', doc, storage).present()).toBe(false)
})

test('behavior: localStorage of the modal origin when the cookie is refused, holding only an expiry', () => {
  const { doc } = cookieDoc(false)
  const storage = window.localStorage
  storage.clear()
  let now = 1_000
  const hint = createTokenStore('app1', doc, storage, () => now)
  hint.mark()
  expect(hint.kind()).toBe('localStorage')
  expect(storage.getItem('latch-session-app1')).toBe(String(1_000 + REFRESH_TOKEN_MAX_AGE_S * 1000))
  expect(createTokenStore('app1', doc, storage, () => now).present()).toBe(true)
  now += REFRESH_TOKEN_MAX_AGE_S * 1000 + 1
  expect(createTokenStore('app1', doc, storage, () => now).present()).toBe(false)
  expect(storage.length).toBe(0)
})

test('behavior: hints of different apps do not mix', () => {
  const { doc } = cookieDoc(false)
  window.localStorage.clear()
  createTokenStore('app1', doc).mark()
  expect(createTokenStore('app2', doc).present()).toBe(false)
})

test('security: a refresh token an earlier version left readable (cookie or localStorage) is deleted, not used', () => {
  const { doc, jar } = cookieDoc(true, { 'latch-rt-app1': 'old-refresh-token', other: 'kept' })
  const storage = window.localStorage
  storage.clear()
  storage.setItem('latch-rt-app1', JSON.stringify({ token: 'old', expiresAt: Date.now() + 1e6 }))
  const hint = createTokenStore('app1', doc, storage)
  expect(jar.has('latch-rt-app1')).toBe(false)
  expect(jar.get('other')).toBe('kept')
  expect(storage.getItem('latch-rt-app1')).toBeNull()
  // The old token is no sign of a session the API knows: it reads its own cookie only.
  expect(hint.present()).toBe(false)
})
