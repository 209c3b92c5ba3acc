/**
 * What the test setup (setup.ts) runs so that nothing a test file started outlives its jsdom
 * environment. Vitest deletes `window`, `document` and the rest of jsdom's globals when a file
 * ends, but Node's own timers keep running: a tree left mounted still had a passive effect
 * queued on one, which later ran `window.addEventListener` against a missing `window`
 * (ReferenceError, reported against the file that was already over, or lost if the worker
 * was exiting).
 */
import { act, cleanup } from '@testing-library/react'
import type { Root, createRoot as reactCreateRoot } from 'react-dom/client'

/** Roots made through `react-dom/client` in a test file's modules (main.tsx's among them). */
const roots = new Set<Root>()

/**
 * `createRoot` that remembers each root until it is unmounted. React DOM has no way to find
 * and unmount a root from its container, so the setup hands the modal's modules this one
 * (`vi.mock('react-dom/client')`); the testing library's own roots are its `cleanup()`'s.
 */
export function trackingCreateRoot(create: typeof reactCreateRoot): typeof reactCreateRoot {
  return (container, options) => {
    const root = create(container, options)
    const unmount = root.unmount.bind(root)
    roots.add(root)
    root.unmount = () => {
      roots.delete(root)
      unmount()
    }
    return root
  }
}

/**
 * Unmounts every tree in the document: the testing library's, and those rendered by other
 * means (main.tsx's `createRoot`, which the testing library does not know of). Inside `act()`,
 * so the unmounted components' passive cleanups, and a first render or effects still queued on
 * React's scheduler, settle now, while the document exists.
 */
export function unmountAll(): void {
  cleanup()
  if (roots.size === 0) return
  act(() => {
    for (const root of [...roots]) root.unmount()
  })
}
