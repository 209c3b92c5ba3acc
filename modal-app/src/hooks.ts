import { useSyncExternalStore } from 'react'
import type { AppView } from './startup/config.ts'
import { type ModalState, store } from './store.ts'

/** The state the server rendered the page's markup from (serveCurrentState). */
let served = store.getState()

/**
 * Keeps the store as it is now as the state the server renders the page's markup from
 * (ssr/render.tsx), and the state the page hydrates that markup with, whenever React does
 * (ssr/hydrate.tsx). React hydrates the landing after the shell, in a later task (its Suspense
 * boundary), and the host's calls may change the store meanwhile (its init, its login() opening
 * the modal): hydrated from the changed store, the markup would not match and React would render
 * the landing afresh, losing a click the visitor made on it in between. Hydrated from the served
 * state, the markup is taken over and the changes applied after.
 */
export function serveCurrentState(): void {
  served = store.getState()
}

/**
 * Reads a slice of the modal store in a component. The served state answers the server's
 * render and the page's hydration (zustand's own hook answers those from the store's initial
 * state, the loading view): the modal server renders the landing from a store set up for it,
 * and the page hydrates that markup from the same state (serveCurrentState).
 */
export function useModal<T>(selector: (state: ModalState) => T): T {
  return useSyncExternalStore(
    store.subscribe,
    () => selector(store.getState()),
    () => selector(served),
  )
}

/** The merged app configuration; screens render only once it is set. */
export function useApp(): AppView {
  const app = useModal((s) => s.app)
  if (!app) throw new Error('Latch: a screen before init')
  return app
}
