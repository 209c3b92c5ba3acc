/**
 * Coinbase Wallet's SDK (`@coinbase/wallet-sdk` v4), as the connector frame builds it
 * (frame/coinbase-serve.ts loads this chunk; nothing of the modal page imports it). The SDK
 * talks to its keys page in a popup: it opens the popup, waits for the page's 'PopupLoaded',
 * sends its configuration, and exchanges every request and answer with it by postMessage,
 * encrypted with an ECDH (P-256) shared secret from the first handshake. It accepts messages
 * from the keys page's origin only.
 */
import { createCoinbaseWalletSDK } from '@coinbase/wallet-sdk'

/** The slice of the SDK's EIP-1193 provider the frame uses. */
export interface Eip1193 {
  request(args: { method: string; params?: unknown }): Promise<unknown>
  on(event: string, listener: (payload: unknown) => void): unknown
}

/**
 * The SDK keeps its keys and session in localStorage, which Chromium refuses to a cross-site
 * frame by default (the access throws). There the frame gets a memory Storage for its life:
 * the Coinbase session then lasts as long as the page. Installed only where the real one is
 * refused. This is the connector origin's storage, never the modal's.
 */
function ensureStorage(): void {
  try {
    if (window.localStorage) return
  } catch {}
  const data = new Map<string, string>()
  const memory: Storage = {
    get length() {
      return data.size
    },
    clear: () => data.clear(),
    getItem: (key) => data.get(key) ?? null,
    key: (index) => [...data.keys()][index] ?? null,
    removeItem: (key) => {
      data.delete(key)
    },
    setItem: (key, value) => {
      data.set(key, String(value))
    },
  }
  Object.defineProperty(window, 'localStorage', { value: memory, configurable: true })
}

export interface CoinbaseOptions {
  appName: string
  chainId: number
  /** The keys page; the SDK's own when undefined. */
  keysUrl?: string
}

export function createCoinbaseProvider(options: CoinbaseOptions): Eip1193 {
  ensureStorage()
  return createCoinbaseWalletSDK({
    appName: options.appName,
    appChainIds: [options.chainId],
    preference: { options: 'all', ...(options.keysUrl ? { keysUrl: options.keysUrl } : {}) },
  }).getProvider() as unknown as Eip1193
}
