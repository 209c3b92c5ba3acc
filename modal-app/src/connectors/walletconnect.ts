/**
 * WalletConnect (v2): a phone wallet reached through a relay. WalletConnect's provider
 * (`@walletconnect/ethereum-provider`) never runs in the modal's origin: it runs in the
 * connector frame (frame-host.ts, frame/main.ts), an opaque origin loaded when the visitor
 * first chooses WalletConnect, and this connector reaches it by the frame's narrow calls. Its
 * own QR modal is never used (`showQrModal: false`, and the build leaves its UI kit out): the
 * modal draws the pairing URI the frame reports (WalletConnectPairing.tsx) and, on a phone,
 * offers the wallet apps' links.
 */
import {
  DEFAULT_CHAIN_ID,
  isSupportedChainId,
  LatchError,
  WALLET_REQUEST_TIMEOUT_MS,
} from '@latch/shared'
import { create } from 'zustand'
import { runtime } from '../runtime.ts'
import { onLogout } from '../session/account.ts'
import { firstAccount, walletEventListeners } from './eip1193.ts'
import {
  CALL_TIMEOUT_MS,
  connectorFrame,
  frameGone,
  frameMethodAllowed,
  replyValue,
} from './frame-host.ts'
import type { ProviderState } from './frame-protocol.ts'
import { walletClientType, withTimeout } from './injected.ts'
import type { Connection, ConnectionStatus, Connector } from './types.ts'
import type { WalletConnectSettings } from './walletconnect-config.ts'
import { type ProviderOptions, providerOptions } from './walletconnect-options.ts'
import { storedWalletConnectKeys, WALLETCONNECT_STORAGE_PREFIX } from './walletconnect-storage.ts'

export { type ProviderOptions, providerOptions }

export const WALLETCONNECT_ID = 'walletconnect'

/** The pairing URI on screen while a connection waits for a wallet; null otherwise. */
export const pairing = create<{ uri: string | null }>(() => ({ uri: null }))

type ProviderEvent = 'display_uri' | 'disconnect' | 'accountsChanged' | 'chainChanged'

/** The slice of the provider this connector uses (its type lives in the lazily loaded chunk). */
export interface Provider {
  readonly session?: unknown
  readonly accounts: string[]
  readonly chainId: number
  /** The connected wallet's name, as its session metadata gives it. */
  readonly peerName: string | undefined
  connect(): Promise<void>
  request(args: { method: string; params?: unknown }): Promise<unknown>
  on(event: ProviderEvent, handler: (payload: unknown) => void): void
  removeListener(event: ProviderEvent, handler: (payload: unknown) => void): void
  /** Ends the session with the wallet (logout). */
  disconnect?(): Promise<void>
}

export interface WalletConnectOptions {
  /** Named in the wallet's approval prompt: the app's name and the host page's origin. */
  metadata: () => Promise<{ name: string; url: string }>
  /** How long a wallet may take to answer (the constant; tests shorten it here). */
  timeoutMs?: number
  /** Builds the provider; the real one by default (tests of the settings pass their own). */
  load?: (options: ProviderOptions) => Promise<Provider>
}

/**
 * Where the provider keeps its pairing and session, on the modal's side: the connector frame's
 * opaque origin has no storage, so it asks the modal (frame-host.ts) for these entries, and
 * only these. They live in the modal frame's localStorage where the browser lets it (the
 * same-site deployment; a reload then finds the session), else in memory (a cross-site frame
 * whose storage the browser refuses: the session lasts as long as the page).
 */
export class WalletConnectStorage {
  private readonly memory = new Map<string, string>()
  private readonly local: Storage | null

  constructor(local: Storage | null = WalletConnectStorage.available()) {
    this.local = local
  }

  static available(): Storage | null {
    try {
      const storage = globalThis.localStorage
      storage.setItem(`${WALLETCONNECT_STORAGE_PREFIX}probe`, '1')
      storage.removeItem(`${WALLETCONNECT_STORAGE_PREFIX}probe`)
      return storage
    } catch {
      return null
    }
  }

  private read(key: string): string | null {
    return this.local?.getItem(WALLETCONNECT_STORAGE_PREFIX + key) ?? this.memory.get(key) ?? null
  }

  async getKeys(): Promise<string[]> {
    // Memory too when localStorage is there: what a full localStorage refused is kept there.
    const local = this.local ? storedWalletConnectKeys(this.local) : []
    return [...new Set([...this.memory.keys(), ...local])]
  }

  async getEntries<T>(): Promise<[string, T][]> {
    const keys = await this.getKeys()
    return keys.map((key) => [key, JSON.parse(this.read(key) ?? 'null') as T])
  }

  async getItem<T>(key: string): Promise<T | undefined> {
    const raw = this.read(key)
    return raw === null ? undefined : (JSON.parse(raw) as T)
  }

  async setItem<T>(key: string, value: T): Promise<void> {
    const raw = JSON.stringify(value)
    if (!this.local) {
      this.memory.set(key, raw)
      return
    }
    try {
      this.local.setItem(WALLETCONNECT_STORAGE_PREFIX + key, raw)
    } catch {
      // Full: this page keeps it in memory.
      this.memory.set(key, raw)
    }
  }

  async removeItem(key: string): Promise<void> {
    this.memory.delete(key)
    this.local?.removeItem(WALLETCONNECT_STORAGE_PREFIX + key)
  }
}

/** The page's WalletConnect storage, kept for the connector frame (frame-host.ts). */
let pageStorage: WalletConnectStorage | null = null
export function walletConnectPageStorage(): WalletConnectStorage {
  pageStorage ??= new WalletConnectStorage()
  return pageStorage
}

/** The frame's events go to the provider of the last init: the one the connector uses. */
let frameListeners: Map<ProviderEvent, Set<(payload: unknown) => void>> | null = null

/**
 * The provider, in the connector frame (frame-host.ts): an opaque origin the modal talks to by
 * the calls of frame-protocol.ts. The frame builds WalletConnect's provider with the relay its
 * own page names, WalletConnect Verify left out (it would attest the frame's opaque origin, not
 * the host page the SIWE message names) and the storage the modal keeps for it.
 */
async function loadProvider(options: ProviderOptions): Promise<Provider> {
  let appId: string | null = null
  try {
    appId = runtime().appId
  } catch {}
  const frame = await connectorFrame(walletConnectPageStorage(), appId)
  const listeners = new Map<ProviderEvent, Set<(payload: unknown) => void>>()
  let state: ProviderState = { session: false, accounts: [], chainId: 0, peerName: null }
  frame.onEvent((name, payload, next) => {
    if (frameListeners !== listeners) return
    if (next) state = next
    for (const handler of [...(listeners.get(name) ?? [])]) handler(payload)
  })
  const call = async (method: keyof typeof CALL_TIMEOUT_MS, args: unknown) => {
    const reply = await frame.port.call(method, args, CALL_TIMEOUT_MS[method], frameGone)
    if (reply.state) state = reply.state
    return replyValue(reply)
  }
  frameListeners = listeners
  await call('wc.init', { projectId: options.projectId, metadata: options.metadata })
  return {
    get session() {
      return state.session ? true : undefined
    },
    get accounts() {
      return state.accounts
    },
    get chainId() {
      return state.chainId
    },
    get peerName() {
      return state.peerName ?? undefined
    },
    connect: async () => {
      await call('wc.connect', null)
    },
    request: async ({ method, params }) => {
      if (!frameMethodAllowed(method)) throw LatchError.of('rpc_unsupported_method')
      // EIP-1193 params are a list or an object; anything else is the caller's mistake.
      if (params !== undefined && (typeof params !== 'object' || params === null)) {
        throw LatchError.of('rpc_invalid_params')
      }
      return call('wc.request', params === undefined ? { method } : { method, params })
    },
    on: (event, handler) => {
      const set = listeners.get(event) ?? new Set()
      set.add(handler)
      listeners.set(event, set)
    },
    removeListener: (event, handler) => void listeners.get(event)?.delete(handler),
    disconnect: async () => {
      await call('wc.disconnect', null)
    },
  }
}

/** One provider per page and settings: it restores the session a reload left in storage. */
const providers = new Map<string, Promise<Provider>>()

/** Per provider, how the connector listening to its events stops listening. */
const attached = new WeakMap<Provider, () => void>()

/**
 * Logout ends the WalletConnect sessions this page built (the wallet hears of it) and forgets
 * the providers: the next sign-in in this browser pairs afresh, so a shared browser does not
 * hand the next visitor the previous one's wallet. account.ts removes the stored session too.
 */
export async function endWalletConnectSessions(): Promise<void> {
  const built = [...providers.values()]
  providers.clear()
  await Promise.allSettled(
    built.map(async (pending) => {
      const provider = await pending
      if (provider.session) await provider.disconnect?.()
    }),
  )
}
onLogout(endWalletConnectSessions)

/** WalletConnect's "user rejected" codes (5000-5002) mean what EIP-1193's 4001 means. */
function asEip1193(e: unknown): unknown {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined
  if (typeof code === 'number' && code >= 5000 && code <= 5002) {
    return { code: 4001, message: 'User rejected the request.' }
  }
  return e
}

/**
 * A session proposal the wallet turned down. The provider passes on only the wallet's reason
 * text (its code is dropped), so the text decides: WalletConnect's own reasons ('User
 * rejected.', 'User disapproved requested chains') and what wallets commonly write.
 */
function proposalRejected(e: unknown): boolean {
  const message = e instanceof Error ? e.message : ''
  return /reject|disapprove|denied|declined|cancel/i.test(message)
}

export function createWalletConnectConnector(
  settings: WalletConnectSettings,
  options: WalletConnectOptions,
): Connector {
  const timeoutMs = options.timeoutMs ?? WALLET_REQUEST_TIMEOUT_MS
  const load = options.load ?? loadProvider
  let status: ConnectionStatus = 'disconnected'
  let provider: Provider | null = null
  const listeners = walletEventListeners()
  const emit = listeners.emit

  const providerFor = async (): Promise<Provider> => {
    const key = `${settings.projectId} ${settings.relayUrl}`
    let pending = providers.get(key)
    if (!pending) {
      pending = options.metadata().then((metadata) => load(providerOptions(settings, metadata)))
      providers.set(key, pending)
      // A provider that could not be built is not kept: the next attempt builds it afresh.
      pending.catch(() => providers.delete(key))
    }
    const built = await pending
    if (provider !== built) {
      // The connector that connected last listens; the one before it (the option chosen
      // again) stops, so listeners do not pile up on the page's one provider.
      attached.get(built)?.()
      const onDisconnect = () => {
        status = 'disconnected'
        emit('disconnect', undefined)
      }
      const onAccounts = (accounts: unknown) => emit('accountsChanged', accounts)
      const onChain = (chainId: unknown) => emit('chainChanged', chainId)
      built.on('disconnect', onDisconnect)
      built.on('accountsChanged', onAccounts)
      built.on('chainChanged', onChain)
      attached.set(built, () => {
        built.removeListener('disconnect', onDisconnect)
        built.removeListener('accountsChanged', onAccounts)
        built.removeListener('chainChanged', onChain)
      })
      provider = built
    }
    return built
  }

  const connector: Connector = {
    id: WALLETCONNECT_ID,
    name: 'WalletConnect',
    icon: '',
    type: 'wallet_connect',
    /** The wallet's own name once connected (e.g. 'rainbow'); 'wallet_connect' before. */
    get walletClientType() {
      const name = provider?.peerName
      const type = name ? walletClientType({ name, rdns: '' }) : 'unknown'
      return type === 'unknown' ? 'wallet_connect' : type
    },
    get status() {
      return status
    },
    async connect(): Promise<Connection> {
      status = 'connecting'
      const showUri = (uri: unknown) => pairing.setState({ uri: String(uri) })
      let built: Provider | undefined
      try {
        try {
          built = await providerFor()
        } catch (e) {
          // The visitor sees the catalogue's text; the reason goes to the console.
          console.error('Latch: WalletConnect could not start', e)
          throw LatchError.of('unable_to_build_connector', { cause: e })
        }
        // A session left by an earlier page (a reload) is used as it is: no new pairing.
        if (!built.session) {
          built.on('display_uri', showUri)
          await withTimeout(built.connect(), timeoutMs).catch((e: unknown) => {
            throw proposalRejected(e) ? { code: 4001, message: 'User rejected the request.' } : e
          })
        }
        const address = firstAccount(built.accounts)
        const chainId = isSupportedChainId(built.chainId) ? built.chainId : DEFAULT_CHAIN_ID
        status = 'connected'
        return { address, chainId }
      } catch (e) {
        status = 'disconnected'
        throw asEip1193(e)
      } finally {
        built?.removeListener('display_uri', showUri)
        pairing.setState({ uri: null })
      }
    },
    async request(method, params) {
      if (!provider) throw LatchError.of('connector_not_initialized')
      if (status !== 'connected') throw LatchError.of('wallet_not_connected')
      try {
        return await withTimeout(provider.request({ method, params }), timeoutMs)
      } catch (e) {
        throw asEip1193(e)
      }
    },
    on: listeners.on,
  }
  return connector
}

/** Tests: forget the providers built so far. */
export function forgetWalletConnectProviders(): void {
  providers.clear()
}
