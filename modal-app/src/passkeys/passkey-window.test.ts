/**
 * The frame's end of the passkey window (passkey-window.ts): when it is needed, and which
 * messages it takes. The window itself, the ceremony and the browser's refusal in the frame run
 * for real in e2e/src/passkey-signin.spec.ts.
 */
import { afterEach, describe, expect, test, vi } from 'vitest'
import { fakeJobWindow, messageFrom as from } from '../test/job-window.ts'
import { createInWindow, createNeedsWindow, type PasskeyWindow } from './passkey-window.ts'

const NONCE = '0f'.repeat(16)
const TAG = 'latch:passkey-window'
const publicKey = {
  challenge: new Uint8Array(32),
  rp: { name: 'Latch' },
  user: { id: new Uint8Array(8), name: 'a', displayName: 'a' },
  pubKeyCredParams: [{ type: 'public-key' as const, alg: -7 }],
}
const texts = { title: 'Create a passkey', button: 'Go', waiting: '…', lang: 'en', dir: 'ltr' }

const fakeWindow = () => fakeJobWindow(NONCE)

afterEach(() => {
  vi.useRealTimers()
})

describe('createNeedsWindow', () => {
  test('behavior: not at the top level (the page is the modal itself)', () => {
    expect(createNeedsWindow()).toBe(false)
  })
})

describe('createInWindow', () => {
  test('behavior: answers "ready" with the options for the modal origin only, and resolves with what the window created; the window is closed', async () => {
    const { win, sent, target } = fakeWindow()
    const created = createInWindow(target as PasskeyWindow, publicKey, texts)
    from(win, { tag: TAG, nonce: NONCE, type: 'ready' })
    expect(sent).toEqual([
      {
        message: { tag: TAG, nonce: NONCE, type: 'create', publicKey, texts },
        origin: location.origin,
      },
    ])
    from(win, {
      tag: TAG,
      nonce: NONCE,
      type: 'created',
      created: { json: { id: 'cred' }, prfEnabled: true },
    })
    await expect(created).resolves.toEqual({ json: { id: 'cred' }, prfEnabled: true })
    expect(win.closed).toBe(true)
  })

  test('refusal: a message from another origin, from another window, or with another nonce is not taken', async () => {
    const { win, sent, target } = fakeWindow()
    const created = createInWindow(target as PasskeyWindow, publicKey, texts)
    const forged = { tag: TAG, nonce: NONCE, type: 'created', created: { json: { id: 'x' } } }
    from(win, { tag: TAG, nonce: NONCE, type: 'ready' }, 'https://attacker.example')
    from(win, forged, 'https://attacker.example')
    from({}, forged)
    from(window, forged)
    from(win, { ...forged, nonce: 'aa'.repeat(16) })
    from(win, { ...forged, tag: 'other' })
    expect(sent).toEqual([])
    let settled = false
    void created.then(
      () => {
        settled = true
      },
      () => {
        settled = true
      },
    )
    await Promise.resolve()
    expect(settled).toBe(false)
    // The window's own failure: the browser's error, by name (a cancel stays a cancel).
    from(win, { tag: TAG, nonce: NONCE, type: 'failed', name: 'NotAllowedError', message: 'no' })
    await expect(created).rejects.toMatchObject({ name: 'NotAllowedError' })
  })

  test('error: the visitor closes the window, or the wait runs out: a cancel (NotAllowedError)', async () => {
    vi.useFakeTimers()
    const closedByVisitor = fakeWindow()
    const first = createInWindow(closedByVisitor.target as PasskeyWindow, publicKey, texts)
    closedByVisitor.win.closed = true
    vi.advanceTimersByTime(500)
    await expect(first).rejects.toMatchObject({ name: 'NotAllowedError' })

    const silent = fakeWindow()
    const second = createInWindow(silent.target as PasskeyWindow, publicKey, texts)
    vi.advanceTimersByTime(120_000)
    await expect(second).rejects.toMatchObject({ name: 'NotAllowedError' })
    expect(silent.win.closed).toBe(true)
  })

  test('behavior: an abort (a newer ceremony) cancels and closes the window', async () => {
    const { win, target } = fakeWindow()
    const controller = new AbortController()
    const created = createInWindow(target as PasskeyWindow, publicKey, texts, controller.signal)
    controller.abort()
    await expect(created).rejects.toMatchObject({ name: 'NotAllowedError' })
    expect(win.closed).toBe(true)
  })
})
