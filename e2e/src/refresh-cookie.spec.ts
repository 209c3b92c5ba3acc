/**
 * No readable session secret: the refresh token lives only in the API origin's HttpOnly,
 * Partitioned cookie. A script on the modal's origin (an XSS, a compromised wallet SDK bundled
 * there) that wraps the modal's fetch from the first instant and reads every storage finds no
 * refresh token anywhere: not in document.cookie, localStorage, sessionStorage, nor in any answer
 * body, the sign-in's included. The host page finds none either and cannot refresh at all. The
 * session still survives a reload and a new tab of the same site (the cookie does that).
 */
import { API_PREFIX, type User } from '@latch/shared'
import type { BrowserContext, Frame, Response } from 'playwright-core'
import { expect, test } from 'vitest'
import { modalFrame } from './axe.ts'
import { expectOk, latchCall, newEmail, settle, signInByEmail } from './flows.ts'
import { type HostPage, waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

declare global {
  interface Window {
    /** What the stand-in attacker's script on the modal origin read of every API answer. */
    latchSeenBodies?: string[]
  }
}

/**
 * The attacker's script, in every frame of the modal's origin before the modal's own code: it
 * wraps fetch and keeps a copy of every answer body the modal receives.
 */
async function plantModalScript(context: BrowserContext, modalOrigin: string): Promise<void> {
  await context.addInitScript((origin: string) => {
    if (location.origin !== origin) return
    const seen: string[] = []
    window.latchSeenBodies = seen
    const original = window.fetch.bind(window)
    window.fetch = async (...args: Parameters<typeof fetch>) => {
      const res = await original(...args)
      res
        .clone()
        .text()
        .then((text) => seen.push(text))
        .catch(() => {})
      return res
    }
  }, modalOrigin)
}

/** Every refresh token the API set on this page's answers, as the browser received them. */
function recordRefreshCookies(hp: HostPage): string[] {
  const tokens: string[] = []
  hp.page.on('response', (response: Response) => {
    void response
      .headerValue('set-cookie')
      .then((header) => {
        for (const line of (header ?? '').split('\n')) {
          const match = /^__Secure-latch-rt-[\w-]+=([\w.-]+);/.exec(line.trim())
          if (match?.[1]) tokens.push(match[1])
        }
      })
      .catch(() => {})
  })
  return tokens
}

/** Everything a script of this frame's origin can read of its own storage. */
function readableStorage(target: Frame | HostPage['page']): Promise<string> {
  return target.evaluate(() => {
    const dump = (s: Storage | null) => {
      const out: string[] = []
      for (let i = 0; s && i < s.length; i++) {
        const key = s.key(i) ?? ''
        out.push(`${key}=${s.getItem(key)}`)
      }
      return out.join('\n')
    }
    let local = ''
    let session = ''
    try {
      local = dump(window.localStorage)
    } catch {}
    try {
      session = dump(window.sessionStorage)
    } catch {}
    return [document.cookie, local, session].join('\n')
  })
}

test('security: a script on the modal origin reads no refresh token (cookie, storage, or any answer body, the sign-in’s included); the host page reads none and cannot refresh; a reload and a new tab keep the session', async () => {
  const modalOrigin = new URL(h().modalUrl).origin
  const hp = await h().open({ prepare: (context) => plantModalScript(context, modalOrigin) })
  const issued = recordRefreshCookies(hp)
  const { user } = await signInByEmail(h(), hp, newEmail('rt-cookie'))
  // The sign-in set the cookie (the browser got a token), and the modal's next refresh rotates
  // it: both are what a readable store would have exposed.
  expect(expectOk(await settle(latchCall<string | null>(hp.page, 'getAccessToken')))).toEqual(
    expect.any(String),
  )
  await expect.poll(() => issued.length).toBeGreaterThanOrEqual(1)

  const modal = await modalFrame(hp.page)
  // The attacker's own refresh through the modal's credentialed fetch works (the residual: an
  // access token while the page is open), and its answer carries no refresh token either.
  const own = await modal.evaluate(
    async ([api, appId]) => {
      const res = await fetch(`${api}/sessions`, {
        method: 'POST',
        credentials: 'include',
        headers: {
          'content-type': 'application/json',
          'latch-app-id': appId as string,
          'latch-client': 'latch-modal',
        },
        body: '{}',
      })
      return { status: res.status, body: await res.text() }
    },
    [`${h().apiUrl}${API_PREFIX}`, h().app.id] as const,
  )
  expect(own.status).toBe(200)
  expect(Object.keys(JSON.parse(own.body) as object).sort()).toEqual(['token', 'user'])
  await expect.poll(() => issued.length).toBeGreaterThanOrEqual(2)

  const seenBodies = await modal.evaluate(() => window.latchSeenBodies ?? [])
  // The wrapper did see the modal's traffic, the sign-in's answer among it.
  expect(seenBodies.some((b) => b.includes('"is_new_user"'))).toBe(true)
  const readable = [
    await readableStorage(modal),
    ...seenBodies,
    own.body,
    await readableStorage(hp.page),
  ].join('\n')
  expect(readable).not.toContain('refresh_token')
  for (const token of issued) expect(readable).not.toContain(token)

  // The host page's script: its credentialed fetch of refresh is refused by the browser (the API
  // answers CORS for the modal origin only), so it gets neither the cookie's use nor an answer.
  const fromHost = await hp.page.evaluate(
    async ([api, appId]) => {
      try {
        const res = await fetch(`${api}/sessions`, {
          method: 'POST',
          credentials: 'include',
          headers: {
            'content-type': 'application/json',
            'latch-app-id': appId as string,
            'latch-client': 'latch-modal',
          },
          body: '{}',
        })
        return res.status
      } catch {
        return 0
      }
    },
    [`${h().apiUrl}${API_PREFIX}`, h().app.id] as const,
  )
  expect(fromHost).toBe(0)

  // A reload keeps the session: the cookie refreshes it.
  await hp.page.reload({ waitUntil: 'load' })
  await waitReady(hp)
  expect(expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))?.id).toBe(user.id)
  // So does a new tab of the same site.
  const tab = await h().open({ context: hp.context })
  expect(expectOk(await settle(latchCall<User | null>(tab.page, 'getUser')))?.id).toBe(user.id)

  // After all of it, still nothing readable in the modal's origin.
  const after = await readableStorage(await modalFrame(tab.page))
  for (const token of issued) expect(after).not.toContain(token)
})
