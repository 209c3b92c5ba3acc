/**
 * Coinbase Wallet through its SDK (`@coinbase/wallet-sdk` v4): the list entry and the loader.
 * The SDK (large, with its UI) is a chunk of its own, fetched when the visitor
 * chooses Coinbase Wallet, never with the landing or the wallet list (coinbase-sdk.ts).
 */
import { LatchError } from '@latch/shared'
import type { Connection, Connector } from './types.ts'

type SdkModule = typeof import('./coinbase-sdk.ts')

export const COINBASE_SDK_ID = 'latch:coinbase-wallet-sdk'

let sdk: SdkModule | null = null
let loading: Promise<SdkModule> | null = null

/** Fetches the SDK's chunk; a failed fetch is tried again by the next call. */
export function loadCoinbase(): Promise<SdkModule> {
  loading ??= import('./coinbase-sdk.ts').then(
    (m) => {
      sdk = m
      return m
    },
    (e: unknown) => {
      loading = null
      throw LatchError.of('unable_to_build_connector', { cause: e })
    },
  )
  return loading
}

/** Whether the SDK is here: its popup can then open inside the click that chose it. */
export const coinbaseReady = (): boolean => sdk !== null

/**
 * The keys page the SDK's popup opens: the modal page's latch-coinbase-keys-url meta tag (the
 * modal server's `coinbaseKeysUrl`), else the SDK's default.
 */
export function coinbaseKeysUrl(doc: Document = document): string | undefined {
  const content = doc.querySelector<HTMLMetaElement>(
    'meta[name="latch-coinbase-keys-url"]',
  )?.content
  return content && URL.canParse(content) && /^https?:$/.test(new URL(content).protocol)
    ? content
    : undefined
}

const ICON =
  'data:image/svg+xml,%3Csvg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"%3E%3Ccircle cx="16" cy="16" r="16" fill="%230052FF"/%3E%3Crect x="11" y="11" width="10" height="10" rx="1.5" fill="%23fff"/%3E%3C/svg%3E'

/**
 * The list entry. Its work is the SDK's connector (made on the first connect(), once the chunk
 * is here): connect() before that fails with 'Unable to connect to wallet.', which choose.ts
 * prevents by showing the interstitial until the chunk arrived.
 */
export function coinbaseConnector(appName: string): Connector {
  let live: Connector | null = null
  const real = (): Connector => {
    if (!sdk) throw LatchError.of('unable_to_build_connector')
    live ??= sdk.createCoinbaseConnector({ appName, keysUrl: coinbaseKeysUrl() })
    return live
  }
  return {
    id: COINBASE_SDK_ID,
    name: 'Coinbase Wallet',
    icon: ICON,
    type: 'coinbase_wallet',
    walletClientType: 'coinbase_wallet',
    get status() {
      return live?.status ?? 'disconnected'
    },
    connect(): Promise<Connection> {
      try {
        return real().connect()
      } catch (e) {
        return Promise.reject(e)
      }
    },
    async request(method, params) {
      if (!live) throw LatchError.of('connector_not_initialized')
      return live.request(method, params)
    },
    on(event, handler) {
      return real().on(event, handler)
    },
  }
}
