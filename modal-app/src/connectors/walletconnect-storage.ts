/**
 * WalletConnect's entries in this frame's storage. Apart from walletconnect-config.ts because
 * logout (in the landing's code) forgets them: a module the landing imports keeps in the landing
 * every export a lazy chunk uses, and the settings are only the wallet screens'.
 */

/** Where the connector keeps WalletConnect's pairing and session in this frame's storage. */
export const WALLETCONNECT_STORAGE_PREFIX = 'latch:wc:'

/** The WalletConnect entries of `local`, their keys without the prefix. */
export function storedWalletConnectKeys(local: Storage): string[] {
  const keys: string[] = []
  for (let i = 0; i < local.length; i++) {
    const key = local.key(i)
    if (key?.startsWith(WALLETCONNECT_STORAGE_PREFIX)) {
      keys.push(key.slice(WALLETCONNECT_STORAGE_PREFIX.length))
    }
  }
  return keys
}

/**
 * Removes every WalletConnect entry from this frame's localStorage (logout: the next visitor of
 * this browser must pair their own wallet). Nothing to do where the browser refuses storage.
 */
export function forgetStoredWalletConnect(
  storage: () => Storage = () => globalThis.localStorage,
): void {
  try {
    const local = storage()
    for (const key of storedWalletConnectKeys(local)) {
      local.removeItem(WALLETCONNECT_STORAGE_PREFIX + key)
    }
  } catch {
    // Storage refused (a cross-site frame): the session lived in memory only.
  }
}
