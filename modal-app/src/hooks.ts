import { useSyncExternalStore } from 'react'
import type { AppView } from './startup/config.ts'
import { type ModalState, store } from './store.ts'

/**
 * Reads a slice of the modal store in a component. The store as it is now also answers the
 * server's render and the page's hydration (zustand's own hook answers those from the store's
 * initial state, the loading view): the modal server renders the landing from a store set up
 * for it, and the page hydrates that markup from the same state (ssr/render.tsx, main.tsx).
 */
export function useModal<T>(selector: (state: ModalState) => T): T {
  const slice = () => selector(store.getState())
  return useSyncExternalStore(store.subscribe, slice, slice)
}

/** The merged app configuration; screens render only once it is set. */
export function useApp(): AppView {
  const app = useModal((s) => s.app)
  if (!app) throw new Error('Latch modal rendered a screen before init')
  return app
}
