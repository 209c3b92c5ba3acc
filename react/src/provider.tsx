import { acquireLatch } from '@latch/host-sdk/shared-client'
import type { HostAppConfig } from '@latch/shared'
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react'
import { createLatchStore, type LatchStore } from './store.ts'

const LatchContext = createContext<LatchStore | null>(null)

export interface LatchProviderProps {
  /** The app's id (25 characters), from `latch apps create`. */
  appId: string
  /** Where the modal is served, e.g. 'https://auth.example.com'. */
  modalUrl: string
  /** Host configuration (appearance, login methods, wallets): read when the client is created. */
  config?: HostAppConfig
  children?: ReactNode
}

/**
 * Starts Latch for the components below it. The client is made in an effect, so rendering on a
 * server touches neither `window` nor `document`: until the effect ran, hooks answer
 * `ready: false` and no user. One client per app and modal on the page
 * (`@latch/host-sdk/shared-client`), so a remount, StrictMode's double effects or the wagmi
 * connector of the same app reuse it.
 */
export function LatchProvider({ appId, modalUrl, config, children }: LatchProviderProps) {
  // A plain object: safe for React to make twice and throw one away.
  const [store] = useState(createLatchStore)
  // The configuration is the first render's: a new object each render must not remake the client.
  const [initialConfig] = useState(config)
  useEffect(() => {
    const shared = acquireLatch({
      appId,
      modalUrl,
      ...(initialConfig ? { config: initialConfig } : {}),
    })
    const detach = store.attach(shared.client)
    return () => {
      detach()
      shared.release()
    }
  }, [store, appId, modalUrl, initialConfig])
  return <LatchContext.Provider value={store}>{children}</LatchContext.Provider>
}

/** The store of the nearest `<LatchProvider>`; a clear error outside one. */
export function useLatchStore(): LatchStore {
  const store = useContext(LatchContext)
  if (!store) throw new Error('Latch hooks must be used inside <LatchProvider>')
  return store
}
