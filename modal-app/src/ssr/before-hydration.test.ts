import { afterEach, beforeEach, expect, test, vi } from 'vitest'
import { BEFORE_HYDRATION_SCRIPT, ENTRY_ATTR, ENTRY_FALLBACK_MS } from './before-hydration.ts'

let frames: FrameRequestCallback[] = []

beforeEach(() => {
  frames = []
  vi.useFakeTimers({ toFake: ['setTimeout'] })
  vi.spyOn(window, 'requestAnimationFrame').mockImplementation((callback) => {
    frames.push(callback)
    return frames.length
  })
  // The server-rendered page's shape (ssr.ts): the entry left as a preload, the landing's root.
  const link = document.createElement('link')
  link.rel = 'modulepreload'
  link.setAttribute('crossorigin', '')
  link.setAttribute('href', '/assets/index-abc.js')
  link.setAttribute(ENTRY_ATTR, '')
  document.head.append(link)
  const root = document.createElement('div')
  root.id = 'root'
  root.innerHTML = '<div aria-label="Log in"><input data-testid="email-input"></div>'
  document.body.append(root)
})

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
  document.head.replaceChildren()
  document.body.replaceChildren()
  localStorage.removeItem('latch-session-app')
})

/** The page's inline script, run as the browser runs it: its text, in the page's window. */
const runInlineScript = () => new Function(BEFORE_HYDRATION_SCRIPT)()

/** The module scripts the page holds: their src and crossorigin. */
const entries = () =>
  [...document.querySelectorAll('script[type="module"]')].map((s) => [
    s.getAttribute('src'),
    s.getAttribute('crossorigin'),
  ])

test('behavior: the entry starts after the first frame, once, from the preload’s href', () => {
  runInlineScript()
  vi.advanceTimersByTime(0)
  expect(entries()).toEqual([])
  // The frame's callbacks run before its paint; the entry starts in a task after it.
  for (const frame of frames) frame(0)
  expect(entries()).toEqual([])
  vi.advanceTimersByTime(0)
  expect(entries()).toEqual([['/assets/index-abc.js', '']])
  vi.advanceTimersByTime(ENTRY_FALLBACK_MS)
  expect(entries()).toHaveLength(1)
})

test('behavior: a frame that gets no first frame (hidden) starts the entry after the fallback', () => {
  runInlineScript()
  vi.advanceTimersByTime(ENTRY_FALLBACK_MS - 1)
  expect(entries()).toEqual([])
  vi.advanceTimersByTime(1)
  expect(entries()).toEqual([['/assets/index-abc.js', '']])
  for (const frame of frames) frame(0)
  vi.advanceTimersByTime(0)
  expect(entries()).toHaveLength(1)
})

test('behavior: where a session may answer login() without the landing, the entry starts at once', () => {
  localStorage.setItem('latch-session-app', 'hint')
  runInlineScript()
  expect(entries()).toEqual([['/assets/index-abc.js', '']])
  vi.advanceTimersByTime(ENTRY_FALLBACK_MS)
  expect(entries()).toHaveLength(1)
})

test('behavior: a page without the preload (the client-rendered one) gets no script from it', () => {
  document.head.replaceChildren()
  runInlineScript()
  for (const frame of frames) frame(0)
  vi.advanceTimersByTime(ENTRY_FALLBACK_MS)
  expect(entries()).toEqual([])
})
