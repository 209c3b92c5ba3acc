import { useStore } from 'zustand'
import type { AppView } from './startup/config.ts'
import { type ModalState, store } from './store.ts'

/** Reads a slice of the modal store in a component. */
export function useModal<T>(selector: (state: ModalState) => T): T {
  return useStore(store, selector)
}

/** The merged app configuration; screens render only once it is set. */
export function useApp(): AppView {
  const app = useModal((s) => s.app)
  if (!app) throw new Error('Latch modal rendered a screen before init')
  return app
}
