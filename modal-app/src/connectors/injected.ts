/**
 * Browser (injected) wallets, reached through the host page: extensions inject into the top
 * page, not into this cross-site frame, so the host SDK's bridge discovers them (EIP-6963 and
 * `window.ethereum`) and forwards our EIP-1193 requests (HostMethods.wallets/request).
 */
import {
  type Hex,
  type HostMethods,
  type InjectedWalletEvent,
  type InjectedWalletInfo,
  LatchError,
  WALLET_REQUEST_TIMEOUT_MS,
} from '@latch/shared'
import { withTimeout as within } from '../flow/timeout.ts'
import { runtime } from '../runtime.ts'
import { requestConnection, walletEventListeners } from './eip1193.ts'
import { onWalletEvent } from './events.ts'
import type { Connection, ConnectionStatus, Connector } from './types.ts'

/** Wallet client types of the best-known extensions, by their EIP-6963 rdns. */
const CLIENT_TYPES: Record<string, string> = {
  'io.metamask': 'metamask',
  'io.metamask.flask': 'metamask',
  'com.coinbase.wallet': 'coinbase_wallet',
  'app.phantom': 'phantom',
  'io.rabby': 'rabby_wallet',
  'me.rainbow': 'rainbow',
  'com.brave.wallet': 'brave_wallet',
  'com.okex.wallet': 'okx_wallet',
  'com.trustwallet.app': 'trust',
  'io.zerion.wallet': 'zerion',
}

/**
 * What the server records as the wallet's client: a known rdns, else the announced name in
 * snake case. Never 'latch' (Latch's own in-app wallet, which the server refuses here).
 */
export function walletClientType(info: Pick<InjectedWalletInfo, 'name' | 'rdns'>): string {
  const known = CLIENT_TYPES[info.rdns]
  if (known) return known
  const name = info.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64)
  return name && name !== 'latch' ? name : 'unknown'
}

export interface InjectedOptions {
  /** The host's methods; the runtime's by default. */
  host?: () => HostMethods | null
  /** How long a wallet may take to answer (the constant; tests shorten it here). */
  timeoutMs?: number
}

const hostOf = (options: InjectedOptions): HostMethods => {
  const host = (options.host ?? (() => runtime().host))()
  if (!host) throw LatchError.of('unable_to_build_connector')
  return host
}

/**
 * The host page's wallets as connectors. The bridge waits for injected wallets itself
 * (INJECTED_WALLET_WAIT_MS). A host that cannot answer: 'Unable to connect to wallet.'.
 */
export async function injectedConnectors(options: InjectedOptions = {}): Promise<Connector[]> {
  let wallets: InjectedWalletInfo[]
  try {
    wallets = await hostOf(options).wallets()
  } catch (e) {
    throw LatchError.of('unable_to_build_connector', { cause: e })
  }
  if (!Array.isArray(wallets)) throw LatchError.of('unable_to_build_connector')
  return wallets.map((info) => createInjectedConnector(info, options))
}

/** Rejects after `ms` with 'Wallet request timed out'; the timer goes either way. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return within(promise, ms, () => LatchError.of('wallet_request_timeout'))
}

interface Pending {
  reject(error: LatchError): void
}

export function createInjectedConnector(
  info: InjectedWalletInfo,
  options: InjectedOptions = {},
): Connector {
  const timeoutMs = options.timeoutMs ?? WALLET_REQUEST_TIMEOUT_MS
  let status: ConnectionStatus = 'disconnected'
  let initialized = false
  let address: Hex | null = null
  const pending = new Set<Pending>()
  const listeners = walletEventListeners()

  const failPending = (error: LatchError) => {
    for (const p of [...pending]) p.reject(error)
  }

  // Subscribed from the first connect() on, once: the bridge reports events only of wallets
  // the modal has sent a request to, and a listed wallet never chosen needs no handler.
  let subscribed = false
  // A wallet that disconnects, or switches away from the account being signed in, ends what
  // is pending: its answer would no longer be about that account.
  const onEvent = (event: InjectedWalletEvent, payload: unknown) => {
    if (event === 'disconnect') {
      status = 'disconnected'
      failPending(LatchError.of('rpc_disconnected'))
    } else if (event === 'accountsChanged' && Array.isArray(payload)) {
      const accounts = payload.filter((a): a is string => typeof a === 'string')
      if (!accounts.length) {
        status = 'disconnected'
        failPending(LatchError.of('rpc_disconnected'))
      } else if (
        address &&
        !accounts.some((a) => a.toLowerCase() === address?.toLowerCase()) &&
        status === 'connected'
      ) {
        failPending(LatchError.of('wallet_not_currently_connected'))
      }
    }
    listeners.emit(event, payload)
  }

  const send = (method: string, params?: unknown): Promise<unknown> => {
    const host = hostOf(options)
    return new Promise<unknown>((resolve, reject) => {
      const entry: Pending = { reject }
      pending.add(entry)
      withTimeout(host.request(info.id, method, params), timeoutMs)
        .then(resolve, reject)
        .finally(() => pending.delete(entry))
    })
  }

  const connector: Connector = {
    id: info.id,
    name: info.name,
    icon: info.icon,
    type: 'injected',
    walletClientType: walletClientType(info),
    get status() {
      return status
    },
    async connect(): Promise<Connection> {
      initialized = true
      if (!subscribed) {
        subscribed = true
        onWalletEvent(info.id, onEvent)
      }
      status = 'connecting'
      try {
        const connection = await requestConnection(send, (a) => {
          address = a
        })
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
  return connector
}
