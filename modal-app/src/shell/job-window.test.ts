/**
 * The job window's two ends (job-window.ts) under the timings that break a naive exchange: the
 * window loads before the frame listens, and the window's answer and its closing race the
 * frame's check for a closed window. The passkey and credential windows run for real in
 * e2e/src/passkey-signin.spec.ts and e2e/src/engines/webkit.spec.ts.
 */
import { afterEach, describe, expect, test, vi } from 'vitest'
import { asJobWindow, fakeJobWindow, messageFrom as from } from '../test/job-window.ts'
import { jobWindowSide, watchJobWindow } from './job-window.ts'

const NONCE = '0f'.repeat(16)

const fakeWindow = () => fakeJobWindow(NONCE)
/** The messages a fake window was sent, each checked to go to this origin only. */
const messages = (sent: { message: unknown; origin: string }[]) =>
  sent.map(({ message, origin }) => {
    expect(origin).toBe(location.origin)
    return message
  })

afterEach(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
  document.body.replaceChildren()
  location.hash = ''
})

describe('the window', () => {
  const asWindow = (opener: unknown) => asJobWindow(opener, NONCE)

  test('behavior: says ready again until its opener answers (the frame may listen only after the window loaded), and only its opener at this origin stops it', () => {
    vi.useFakeTimers()
    const { win: opener, sent } = fakeWindow()
    asWindow(opener)
    const side = jobWindowSide()
    const heard: unknown[] = []
    side?.listen('ready', (data) => heard.push(data))
    expect(messages(sent)).toEqual(['ready'])
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
    expect(messages(sent)).toEqual(['answer'])
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
    expect(messages(sent)).toEqual([{ nonce: NONCE, type: 'job' }])
    from(win, { nonce: NONCE, type: 'done' })
    expect(heard).toEqual([{ nonce: NONCE, type: 'done' }])
    stop()
    expect(win.closed).toBe(true)
  })
})
