/**
 * What createLatch does before the modal answers. The link itself (handshake, calls, events,
 * closing, reloads) is tested across two origins in Chromium: link.test.ts.
 */
import { ERRORS, LatchError, type LatchOptions, MODAL_CONNECT_TIMEOUT_MS } from '@latch/shared'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { createLatch } from './create-latch.ts'

const APP_ID = 'cl0000000000000000000000a'

async function rejection(promise: Promise<unknown>): Promise<LatchError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(LatchError)
  return error as LatchError
}

afterEach(() => {
  document.body.innerHTML = ''
  history.replaceState(null, '', '/')
})

describe('options', () => {
  test.each([undefined, '', 'short', `${APP_ID}x`, 42])(
    'error: app id %s rejects ready',
    async (appId) => {
      const latch = createLatch({ appId: appId as string, modalUrl: 'https://modal.example' })
      const error = await rejection(latch.ready)
      expect(error.code).toBe('invalid_app_id')
      expect(error.message).toBe(ERRORS.invalid_app_id.message)
      expect((await rejection(latch.login())).code).toBe('invalid_app_id')
      expect(document.querySelector('iframe')).toBeNull()
    },
  )

  test.each(['not a url', 'javascript:alert(1)', 'ftp://modal.example'])(
    'error: modalUrl %s rejects ready',
    async (modalUrl) => {
      const latch = createLatch({ appId: APP_ID, modalUrl })
      const error = await rejection(latch.ready)
      expect(error.code).toBe('modal_unreachable')
      expect(error.details).toMatch(/modalUrl/)
      expect(document.querySelector('iframe')).toBeNull()
    },
  )

  test('error: a missing inline parent rejects ready', async () => {
    const latch = createLatch({
      appId: APP_ID,
      modalUrl: 'https://modal.example',
      config: { render: { inParentNodeId: 'missing' } },
    })
    expect((await rejection(latch.ready)).details).toContain('missing')
  })
})

describe('frame', () => {
  test('behavior: one hidden frame is preloaded with the app id in its query (for the modal server) and fragment', () => {
    const latch = createLatch({ appId: APP_ID, modalUrl: 'https://modal.example/base/' })
    const frames = document.querySelectorAll<HTMLIFrameElement>('[data-testid="latch-frame"]')
    expect(frames).toHaveLength(1)
    // With the landing's configuration (none here), for the server to render the landing.
    const ssr = encodeURIComponent('[null,null,null]')
    expect(frames[0]?.getAttribute('src')).toBe(
      `https://modal.example/base/?app=${APP_ID}&ssr=${ssr}#app=${APP_ID}`,
    )
    expect(frames[0]?.getAttribute('aria-hidden')).toBe('true')
    expect(frames[0]?.tabIndex).toBe(-1)
    expect(document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open).toBe(
      false,
    )
    latch.destroy()
  })

  test('behavior: the landing’s part of the configuration goes in the query; one that says more than it carries (texts, legal links, inline) leaves it out', () => {
    const src = (config: LatchOptions['config']) => {
      const latch = createLatch({ appId: APP_ID, modalUrl: 'https://modal.example', config })
      const frame = document.querySelector<HTMLIFrameElement>('[data-testid="latch-frame"]')
      const url = new URL(frame?.getAttribute('src') ?? '')
      latch.destroy()
      return url.searchParams.get('ssr')
    }
    const appearance = { theme: 'dark', accentColor: '#ff0000' } as const
    expect(
      JSON.parse(src({ appearance, loginMethods: ['wallet', 'email'], locale: 'en' }) ?? ''),
    ).toEqual([appearance, ['wallet', 'email'], 'en'])
    expect(src({ texts: { en: { title: 'Hi' } } })).toBeNull()
    expect(src({ legal: { privacyPolicyUrl: 'https://x.example/p' } })).toBeNull()
    const box = document.body.appendChild(document.createElement('div'))
    box.id = 'box'
    expect(src({ render: { inParentNodeId: 'box' } })).toBeNull()
    box.remove()
  })

  describe('while the page still loads', () => {
    let restore = () => {}
    const loading = () => {
      const own = Object.getOwnPropertyDescriptor(document, 'readyState')
      Object.defineProperty(document, 'readyState', { configurable: true, value: 'loading' })
      restore = () => {
        if (own) Object.defineProperty(document, 'readyState', own)
        else delete (document as { readyState?: unknown }).readyState
      }
    }
    const loaded = () => {
      restore()
      document.dispatchEvent(new Event('DOMContentLoaded'))
    }
    afterEach(() => restore())

    test('behavior: a tag in the body mounts the frame at once, without waiting for DOMContentLoaded', () => {
      loading()
      const latch = createLatch({ appId: APP_ID, modalUrl: 'https://modal.example' })
      expect(document.querySelectorAll('[data-testid="latch-frame"]')).toHaveLength(1)
      loaded()
      expect(document.querySelectorAll('[data-testid="latch-frame"]')).toHaveLength(1)
      latch.destroy()
    })

    test('behavior: an inline parent not parsed yet is waited for until DOMContentLoaded', async () => {
      loading()
      const latch = createLatch({
        appId: APP_ID,
        modalUrl: 'https://modal.example',
        config: { render: { inParentNodeId: 'later' } },
      })
      expect(document.querySelector('iframe')).toBeNull()
      const parent = document.createElement('div')
      parent.id = 'later'
      document.body.append(parent)
      loaded()
      await vi.waitFor(() => expect(parent.querySelector('iframe')).not.toBeNull())
      latch.destroy()
    })

    test('behavior: a tag in the head (no body yet) waits for DOMContentLoaded', async () => {
      const body = document.body
      loading()
      body.remove()
      const latch = createLatch({ appId: APP_ID, modalUrl: 'https://modal.example' })
      expect(document.querySelector('iframe')).toBeNull()
      document.documentElement.append(body)
      loaded()
      await vi.waitFor(() => expect(body.querySelector('iframe')).not.toBeNull())
      latch.destroy()
    })
  })

  describe('the handshake', () => {
    const contentWindow = Object.getOwnPropertyDescriptor(
      HTMLIFrameElement.prototype,
      'contentWindow',
    )
    /** Counts the reads of the frame's window, and gives the window itself to the test. */
    const countReads = () => {
      const reads = vi.spyOn(HTMLIFrameElement.prototype, 'contentWindow', 'get')
      reads.mockImplementation(function (this: HTMLIFrameElement) {
        return contentWindow?.get?.call(this) as Window | null
      })
      const windowOf = (iframe: HTMLIFrameElement) => contentWindow?.get?.call(iframe) as Window
      return { reads, windowOf }
    }
    const post = (origin: string, source: Window) =>
      window.dispatchEvent(
        new MessageEvent('message', { origin, source, data: { namespace: 'penpal', type: 'SYN' } }),
      )
    afterEach(() => {
      vi.restoreAllMocks()
      vi.useRealTimers()
    })

    test("behavior: the frame's window is first asked for when the modal writes from its origin, and the host then answers with its SYN", () => {
      const { reads, windowOf } = countReads()
      const latch = createLatch({ appId: APP_ID, modalUrl: 'https://modal.example' })
      const iframe = document.querySelector('iframe') as HTMLIFrameElement
      const frameWindow = windowOf(iframe)
      const sent = vi.spyOn(frameWindow, 'postMessage').mockImplementation(() => {})
      expect(reads).not.toHaveBeenCalled()
      // Another origin writing (even from the frame's own window) does not end the wait.
      post('https://elsewhere.example', frameWindow)
      expect(reads).not.toHaveBeenCalled()
      expect(sent).not.toHaveBeenCalled()
      // The modal's origin, from another window: compared, and refused.
      post('https://modal.example', window)
      expect(reads).toHaveBeenCalled()
      expect(sent).not.toHaveBeenCalled()
      post('https://modal.example', frameWindow)
      return vi.waitFor(() => {
        expect(sent).toHaveBeenCalledWith(
          expect.objectContaining({ namespace: 'penpal', type: 'SYN' }),
          expect.objectContaining({ targetOrigin: '*' }),
        )
        latch.destroy()
      })
    })

    test('behavior: once the modal wrote, the connect timeout is cleared instead of left to fire', () => {
      vi.useFakeTimers()
      const started = vi.spyOn(globalThis, 'setTimeout')
      const cleared = vi.spyOn(globalThis, 'clearTimeout')
      const { windowOf } = countReads()
      const latch = createLatch({ appId: APP_ID, modalUrl: 'https://modal.example' })
      const frameWindow = windowOf(document.querySelector('iframe') as HTMLIFrameElement)
      vi.spyOn(frameWindow, 'postMessage').mockImplementation(() => {})
      const index = started.mock.calls.findIndex(([, ms]) => ms === MODAL_CONNECT_TIMEOUT_MS)
      const timer = started.mock.results[index]?.value
      expect(timer).toBeDefined()
      expect(cleared).not.toHaveBeenCalledWith(timer)
      post('https://modal.example', frameWindow)
      expect(cleared).toHaveBeenCalledWith(timer)
      latch.destroy()
    })

    test('error: a modal that never writes rejects ready after the connect timeout', async () => {
      vi.useFakeTimers()
      const latch = createLatch({ appId: APP_ID, modalUrl: 'https://modal.example' })
      const outcome = rejection(latch.ready)
      await vi.advanceTimersByTimeAsync(MODAL_CONNECT_TIMEOUT_MS - 1)
      expect(document.querySelector('iframe')).not.toBeNull()
      await vi.advanceTimersByTimeAsync(1)
      const error = await outcome
      expect(error.code).toBe('modal_unreachable')
      expect(error.details).toBe(`Connection timed out after ${MODAL_CONNECT_TIMEOUT_MS}ms`)
      latch.destroy()
    })
  })

  test('behavior: the OAuth return parameters leave the address bar at start', () => {
    history.replaceState(
      null,
      '',
      '/?latch_oauth_code=c&latch_oauth_state=s&latch_oauth_provider=google',
    )
    const latch = createLatch({ appId: APP_ID, modalUrl: 'https://modal.example' })
    expect(location.search).toBe('')
    latch.destroy()
  })

  test('behavior: destroy removes the frame and rejects what is pending and what comes later', async () => {
    const latch = createLatch({ appId: APP_ID, modalUrl: 'https://modal.example' })
    const login = latch.login()
    latch.destroy()
    expect(document.querySelector('[data-testid="latch-dialog"]')).toBeNull()
    expect((await rejection(latch.ready)).code).toBe('modal_unreachable')
    expect((await rejection(login)).code).toBe('modal_unreachable')
    expect((await rejection(latch.getUser())).code).toBe('modal_unreachable')
    latch.destroy()
  })
})
