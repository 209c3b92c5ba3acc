/**
 * What the test setup (setup.ts) runs so that nothing a test file started outlives its jsdom
 * environment. Vitest deletes `window`, `document` and the rest of jsdom's globals when a file
 * ends, but Node's own timers keep running: a Preact tree left mounted still had a passive
 * effect queued on one, which later ran `window.addEventListener` against a missing `window`
 * (ReferenceError, reported against the file that was already over, or lost if the worker
 * was exiting).
 */
import { act, cleanup } from '@testing-library/react'
import { unmountComponentAtNode } from 'preact/compat'

/**
 * Unmounts every Preact tree in the document: the testing library's, and those rendered by
 * other means (main.tsx's `createRoot`, which the testing library does not know of). Inside
 * `act()`, so the unmounted components' passive cleanups (Preact defers them to after the
 * next paint) and any effects still queued run now, while the document exists.
 */
export function unmountAll(doc: Document | undefined = globalThis.document): void {
  cleanup()
  if (!doc?.body) return
  act(() => {
    // A no-op on an element Preact never rendered into, or already unmounted.
    for (const el of [doc.body, ...doc.body.querySelectorAll('*')]) unmountComponentAtNode(el)
  })
}
