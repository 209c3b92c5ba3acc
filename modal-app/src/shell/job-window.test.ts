/**
 * The job window's two ends (job-window.ts) under the timings that break a naive exchange: the
 * window loads before the frame listens, and the window's answer and its closing race the
 * frame's check for a closed window. The passkey and credential windows run for real in
 * e2e/src/passkey-signin.spec.ts and e2e/src/engines/webkit.spec.ts.
 */
import { afterEach, describe, expect, test, vi } from 'vitest'
import { jobWindowSide, watchJobWindow } from './job-window.ts'

const NONCE = '0f'.repeat(16)

/** A window as far as the other end sees one: what it was sent, and whether it is closed. */
function fakeWindow() {
  const sent: unknown[] = []
  const win = {
    closed: false,
    postMessage(message: unknown, origin: string) {
      expect(origin).toBe(location.origin)
      sent.push(message)
    },
    close() {
      win.closed = true
    },
  }
  return { win, sent }
}

const from = (source: unknown, data: unknown, origin = location.origin) =>
  window.dispatchEvent(new MessageEvent('message', { data, origin, source: source as Window }))

afterEach(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
  document.body.replaceChildren()
  location.hash = ''
})

describe('the window', () => {
  function asWindow(opener: unknown) {
    const root = document.createElement('div')
    root.id = 'root'
    document.body.append(root)
    location.hash = NONCE
    vi.stubGlobal('opener', opener)
  }

  test('behavior: says ready again until its opener answers (the frame may listen only after the window loaded), and only its opener at this origin stops it', () => {
    vi.useFakeTimers()
    const { win: opener, sent } = fakeWindow()
    asWindow(opener)
    const side = jobWindowSide()
    const heard: unknown[] = []
    side?.listen('ready', (data) => heard.push(data))
    expect(sent).toEqual(['ready'])
    vi.advanceTimersByTime(1_000)
    expect(sent.length).toBeGreaterThanOrEqual(4)
    from(opener, 'job', 'https://attacker.example')
    from({}, 'job')
    const before = sent.length
    vi.advanceTimersByTime(500)
    expect(sent.length).toBeGreaterThan(before)
    expect(heard).toEqual([])
    from(opener, 'job')
    const after = sent.length
    vi.advanceTimersByTime(5_000)
    expect(sent.length).toBe(after)
    expect(heard).toEqual(['job'])
  })

  test('behavior: after its answer the window stays open for the frame to close it (so the answer is read before the window is seen closed); it closes itself only when no frame did', () => {
    vi.useFakeTimers()
    const { win: opener, sent } = fakeWindow()
    asWindow(opener)
    const close = vi.spyOn(window, 'close').mockImplementation(() => {})
    jobWindowSide()?.finish('answer')
    expect(sent).toEqual(['answer'])
    vi.advanceTimersByTime(10_000)
    expect(close).not.toHaveBeenCalled()
    vi.advanceTimersByTime(5_000)
    expect(close).toHaveBeenCalledTimes(1)
  })

  test('refusal: without an opener or a nonce in its fragment the window closes and does nothing', () => {
    const close = vi.spyOn(window, 'close').mockImplementation(() => {})
    vi.stubGlobal('opener', null)
    location.hash = NONCE
    expect(jobWindowSide()).toBeNull()
    vi.stubGlobal('opener', fakeWindow().win)
    location.hash = 'not-a-nonce'
    expect(jobWindowSide()).toBeNull()
    expect(close).toHaveBeenCalledTimes(2)
  })
})

describe('the frame', () => {
  test('behavior: a repeated ready gets the job once; the answer is heard, and the window is closed by the frame', () => {
    const { win, sent } = fakeWindow()
    const heard: unknown[] = []
    const mine = (data: unknown) => (data as { nonce?: unknown }).nonce === NONCE
    const stop = watchJobWindow(
      { window: win as unknown as Window, nonce: NONCE },
      60_000,
      { nonce: NONCE, type: 'job' },
      mine,
      (data) => heard.push(data),
      () => heard.push('gone'),
    )
    from(win, { nonce: NONCE, type: 'ready' })
    from(win, { nonce: NONCE, type: 'ready' })
    from(win, { nonce: NONCE, type: 'ready' })
    expect(sent).toEqual([{ nonce: NONCE, type: 'job' }])
    from(win, { nonce: NONCE, type: 'done' })
    expect(heard).toEqual([{ nonce: NONCE, type: 'done' }])
    stop()
    expect(win.closed).toBe(true)
  })
})
