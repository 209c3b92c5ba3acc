/**
 * The Coinbase Wallet SDK's side of its connector (a lazy chunk: coinbase.ts loads it). The SDK
 * talks to its keys page in a popup: it opens the popup, waits for the page's 'PopupLoaded',
 * sends its configuration, and exchanges every request and answer with it by postMessage,
 * encrypted with an ECDH (P-256) shared secret from the first handshake. It accepts messages
 * from the keys page's origin only. Requests have our own 120 s timeout as every connector's.
 */
import { createCoinbaseWalletSDK } from '@coinbase/wallet-sdk'
import { DEFAULT_CHAIN_ID, LatchError, WALLET_REQUEST_TIMEOUT_MS } from '@latch/shared'
import { requestConnection, walletEventListeners } from './eip1193.ts'
import { withTimeout } from './injected.ts'
import type { Connection, ConnectionStatus, Connector } from './types.ts'

interface Eip1193 {
  request(args: { method: string; params?: unknown }): Promise<unknown>
  on(event: string, listener: (payload: unknown) => void): unknown
}

/**
 * The SDK keeps its keys and session in localStorage, which Chromium refuses to this
 * cross-site frame by default (the access throws). There the frame gets a memory Storage
 * for its life: the Coinbase session then lasts as long as the page, as the in-app wallet's
 * device share does. Installed only where the real one is refused.
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
  /** The keys page; the SDK's own when undefined. */
  keysUrl?: string
  timeoutMs?: number
}

export function createCoinbaseConnector(options: CoinbaseOptions): Connector {
  ensureStorage()
  const timeoutMs = options.timeoutMs ?? WALLET_REQUEST_TIMEOUT_MS
  const provider = createCoinbaseWalletSDK({
    appName: options.appName,
    appChainIds: [DEFAULT_CHAIN_ID],
    preference: { options: 'all', ...(options.keysUrl ? { keysUrl: options.keysUrl } : {}) },
  }).getProvider() as unknown as Eip1193
  let status: ConnectionStatus = 'disconnected'
  let initialized = false
  const listeners = walletEventListeners()
  for (const event of ['accountsChanged', 'chainChanged', 'disconnect'] as const) {
    provider.on(event, (payload) => {
      if (event === 'disconnect') status = 'disconnected'
      listeners.emit(event, payload)
    })
  }
  // The SDK's errors carry EIP-1193 codes, which errors.ts reads.
  const send = (method: string, params?: unknown) =>
    withTimeout(provider.request(params === undefined ? { method } : { method, params }), timeoutMs)

  return {
    id: 'latch:coinbase-wallet-sdk',
    name: 'Coinbase Wallet',
    icon: '',
    type: 'coinbase_wallet',
    walletClientType: 'coinbase_wallet',
    get status() {
      return status
    },
    async connect(): Promise<Connection> {
      initialized = true
      status = 'connecting'
      try {
        // First, before any await: the SDK opens its popup inside the visitor's click.
        const connection = await requestConnection(send)
        status = 'connected'
        return connection
      } catch (e) {
        status = 'disconnected'
        throw e
      }
    },
    async request(method, params) {
      if (!initialized) throw LatchError.of('connector_not_initialized')
      if (status !== 'connected') throw LatchError.of('wallet_not_connected')
      return send(method, params)
    },
    on: listeners.on,
  }
}
