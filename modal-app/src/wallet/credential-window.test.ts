/**
 * The credential window's message rules (credential-window.ts): the frame's end takes the
 * signed-in session only from the window it opened, at the modal's origin, with its nonce; the
 * window's end starts only for its opener at that origin. The sign-in itself, and the browser
 * keeping the credential it sets, run for real in WebKit (e2e/src/engines/webkit.spec.ts).
 */
import type { User } from '@latch/shared'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { user } from '../test/fixtures.ts'
import { asJobWindow, fakeJobWindow, messageFrom as from } from '../test/job-window.ts'
import { type CredentialWindow, runCredentialWindow, signInInWindow } from './credential-window.ts'

const NONCE = '0f'.repeat(16)
const TAG = 'latch:credential-window'
const start = {
  apiUrl: 'http://127.0.0.1:9',
  appId: 'app_test',
  email: 'ada@example.com',
  locale: 'en',
  texts: {
    title: 'Enter confirmation code',
    body: 'Please check ada@example.com',
    legend: 'Confirmation code',
    button: 'Continue',
    wrong: 'Invalid',
    failed: 'Failed',
    lang: 'en',
    dir: 'ltr',
  },
}

const fakeWindow = () => fakeJobWindow(NONCE)

afterEach(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
  document.body.replaceChildren()
})

describe('signInInWindow', () => {
  test('behavior: answers "ready" with the start for the modal origin only, resolves with the signed-in session and closes the window', async () => {
    const { win, sent, target } = fakeWindow()
    const signed = signInInWindow(target as CredentialWindow, start)
    from(win, { tag: TAG, nonce: NONCE, type: 'ready' })
    expect(sent).toEqual([
      { message: { tag: TAG, nonce: NONCE, type: 'start', ...start }, origin: location.origin },
    ])
    const who: User = user()
    from(win, { tag: TAG, nonce: NONCE, type: 'signed-in', token: 't', user: who })
    await expect(signed).resolves.toEqual({ token: 't', user: who })
    expect(win.closed).toBe(true)
  })

  test('refusal: a session from another origin, another window or with another nonce is not taken; the window closed rejects', async () => {
    vi.useFakeTimers()
    const { win, sent, target } = fakeWindow()
    const signed = signInInWindow(target as CredentialWindow, start)
    const forged = { tag: TAG, nonce: NONCE, type: 'signed-in', token: 'evil', user: user() }
    from(win, { tag: TAG, nonce: NONCE, type: 'ready' }, 'https://attacker.example')
    from(win, forged, 'https://attacker.example')
    from({}, forged)
    from(window, forged)
    from(win, { ...forged, nonce: 'aa'.repeat(16) })
    expect(sent).toEqual([])
    win.closed = true
    vi.advanceTimersByTime(500)
    await expect(signed).rejects.toMatchObject({ code: 'not_authenticated' })
  })
})

describe('runCredentialWindow', () => {
  function asWindow(opener: unknown) {
    const root = asJobWindow(opener, NONCE)
    // The window's code would otherwise ask the API for a code at once.
    vi.stubGlobal(
      'fetch',
      vi.fn(() => new Promise<Response>(() => {})),
    )
    return root
  }

  test('behavior: says "ready" to its opener at the modal origin, and shows the code field once its opener starts it', () => {
    const { win: opener, sent } = fakeWindow()
    const root = asWindow(opener)
    runCredentialWindow()
    expect(sent).toEqual([
      { message: { tag: TAG, nonce: NONCE, type: 'ready' }, origin: location.origin },
    ])
    from(opener, { tag: TAG, nonce: NONCE, type: 'start', ...start })
    expect(root.querySelector('h1')?.textContent).toBe('Enter confirmation code')
    expect(root.querySelector('[data-testid="credential-code"]')).not.toBeNull()
  })

  test('behavior: the code request refused as too soon (the window opened again within a minute) says nothing, the earlier code still works; another failure says so; a wrong code says so', async () => {
    const { win: opener } = fakeWindow()
    const root = asWindow(opener)
    const answers: Response[] = [
      new Response(JSON.stringify({ error: { code: 'too_many_requests', message: 'Too many' } }), {
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': '30' },
      }),
      new Response(
        JSON.stringify({ error: { code: 'invalid_verification_code', message: 'Invalid' } }),
        { status: 422, headers: { 'content-type': 'application/json' } },
      ),
    ]
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => answers.shift() ?? new Response('down', { status: 500 })),
    )
    runCredentialWindow()
    from(opener, { tag: TAG, nonce: NONCE, type: 'start', ...start })
    const status = () => root.querySelector('[data-testid="credential-status"]')?.textContent
    await vi.waitFor(() => expect(fetch).toHaveBeenCalledTimes(1))
    await new Promise((r) => setTimeout(r, 20))
    expect(status()).toBe('')
    const input = root.querySelector('input') as HTMLInputElement
    input.value = '123456'
    root.querySelector('form')?.requestSubmit()
    await vi.waitFor(() => expect(status()).toBe('Invalid'))
    const runAgain = root.querySelector('form') as HTMLFormElement
    runAgain.requestSubmit()
    await vi.waitFor(() => expect(status()).toBe('Failed'))
  })

  test('refusal: a start from another origin or another window shows nothing and asks the API nothing', () => {
    const { win: opener } = fakeWindow()
    const root = asWindow(opener)
    runCredentialWindow()
    from(opener, { tag: TAG, nonce: NONCE, type: 'start', ...start }, 'https://attacker.example')
    from({}, { tag: TAG, nonce: NONCE, type: 'start', ...start })
    expect(root.children.length).toBe(0)
    expect(fetch).not.toHaveBeenCalled()
  })
})
