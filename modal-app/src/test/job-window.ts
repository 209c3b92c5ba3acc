/**
 * The job windows' tests (shell/job-window.ts and its two users): a window as the other end sees
 * one, a message from a given source and origin, and this document set up as a job window.
 */
import { vi } from 'vitest'

/** A window as far as the other end sees one: what it was sent (and to which origin), whether it is closed. */
export function fakeJobWindow(nonce: string) {
  const sent: { message: unknown; origin: string }[] = []
  const win = {
    closed: false,
    postMessage(message: unknown, origin: string) {
      sent.push({ message, origin })
    },
    close() {
      win.closed = true
    },
  }
  return { win, sent, target: { window: win as unknown as Window, nonce } }
}

/** A message event on this window from `source`, as if posted from `origin`. */
export const messageFrom = (source: unknown, data: unknown, origin = location.origin) =>
  window.dispatchEvent(new MessageEvent('message', { data, origin, source: source as Window }))

/** This document as a job window opened by `opener` for `nonce`: its root, its fragment. */
export function asJobWindow(opener: unknown, nonce: string): HTMLElement {
  const root = document.createElement('div')
  root.id = 'root'
  document.body.append(root)
  location.hash = nonce
  vi.stubGlobal('opener', opener)
  return root
}
