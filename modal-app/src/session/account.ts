/** The signed-in user: who the host hears of, logout. */
import type { User } from '@latch/shared'
import { forgetStoredWalletConnect } from '../connectors/walletconnect-storage.ts'
import { withTimeout } from '../flow/timeout.ts'
import { callHost, runtime } from '../runtime.ts'
import { store } from '../store.ts'

/** The user changed: the host hears of it ('user', and 'logout' when a user went away). */
export function setUser(user: User | null): void {
  const previous = store.getState().user
  store.setState({ user })
  if (previous && !user) callHost('emit', 'logout', undefined)
  callHost('emit', 'user', user)
}

/** What ends with the session besides it: hooks of lazily loaded parts (walletconnect.ts). */
const logoutHooks = new Set<() => Promise<void>>()

/** Adds a hook logout runs (each settles or is given up on: logout never waits long). */
export function onLogout(hook: () => Promise<void>): () => void {
  logoutHooks.add(hook)
  return () => logoutHooks.delete(hook)
}

/** A hook may take this long before logout goes on without it. */
export const LOGOUT_HOOK_TIMEOUT_MS = 3000

/**
 * Ends the session, then what an external wallet left behind for the next visitor of this
 * browser: a WalletConnect session (disconnected where this page built it; its storage removed
 * either way, even if this page never loaded WalletConnect).
 */
export async function logout(): Promise<void> {
  await runtime().session.logout()
  // A hook that fails or is late is given up on: logout goes on.
  await Promise.allSettled(
    [...logoutHooks].map((hook) =>
      withTimeout(hook(), LOGOUT_HOOK_TIMEOUT_MS, () => new Error('logout hook too late')),
    ),
  )
  forgetStoredWalletConnect()
}
