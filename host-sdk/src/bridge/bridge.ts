/**
 * The host page's bridge to browser wallets: what HostMethods.wallets() and request() do once
 * the host SDK has loaded this script (host-methods.ts). Extension wallets inject into the top
 * page, and several inject nothing into frames, so the modal reaches them through here.
 */
import {
  ERRORS,
  INJECTED_WALLET_WAIT_MS,
  type InjectedWalletEvent,
  type InjectedWalletInfo,
  LatchError,
  rpcErrorCode,
  type SerializedLatchError,
  serializeError,
  WALLET_REQUEST_TIMEOUT_MS,
} from '@latch/shared'
import { discoverWallets, type Eip1193Provider, type InjectedWallet } from './discovery.ts'
import { allowedRequest, eventPayload } from './requests.ts'

/** What the modal receives of a wallet event, through ModalMethods.walletEvent. */
export type WalletEventSink = (id: string, event: InjectedWalletEvent, payload: unknown) => void

export interface WalletBridge {
  wallets(): Promise<InjectedWalletInfo[]>
  request(id: string, method: string, params?: unknown): Promise<unknown>
}

const WALLET_EVENTS: InjectedWalletEvent[] = ['accountsChanged', 'chainChanged', 'disconnect']
const MAX_ERROR_MESSAGE_LENGTH = 500

/**
 * A wallet's failure as a LatchError: the catalogue's entry for its EIP-1193 or JSON-RPC code,
 * with the wallet's own code and message (the modal tells the -32002 variants apart by it).
 * A code outside the standard ones keeps its number under rpc_internal; `data` is dropped.
 */
export function walletError(e: unknown): LatchError {
  if (e instanceof LatchError) return e
  let rpc: unknown
  let message: unknown
  try {
    ;({ code: rpc, message } = (e ?? {}) as { code?: unknown; message?: unknown })
  } catch {}
  const known = Number.isInteger(rpc) ? rpcErrorCode(rpc as number) : undefined
  return LatchError.of(known ?? 'rpc_internal', {
    rpcCode: Number.isInteger(rpc) ? (rpc as number) : ERRORS.rpc_internal.rpcCode,
    ...(typeof message === 'string' && message
      ? { message: message.slice(0, MAX_ERROR_MESSAGE_LENGTH) }
      : {}),
  })
}

/**
 * Failures leave the bridge as serialized LatchErrors (plain objects): this bundle's LatchError
 * is not the host SDK's class, and the SDK passes a serialized one on to the modal unchanged.
 */
const serialized = <T>(run: () => Promise<T>): Promise<T> =>
  run().catch((e: unknown) => {
    throw serializeError(walletError(e)) satisfies SerializedLatchError
  })

export interface BridgeOptions {
  onEvent: WalletEventSink
  /** The page (tests pass jsdom's). */
  window?: Window
}

/**
 * Starts discovery at once. `wallets()` answers as soon as at least one wallet is known; with
 * none, it waits until one appears or until INJECTED_WALLET_WAIT_MS after the bridge started,
 * for wallets that inject late. Extensions inject before the page's scripts run, so a visitor
 * with a wallet never waits and one without waits 3 s once.
 */
export function createBridge(options: BridgeOptions): WalletBridge {
  const win = options.window ?? window
  const deadline = Date.now() + INJECTED_WALLET_WAIT_MS
  const waiting = new Set<() => void>()
  const discovery = discoverWallets(win, () => {
    for (const wake of waiting) wake()
  })
  const subscribed = new WeakSet<Eip1193Provider>()

  const find = (id: unknown): InjectedWallet => {
    const wallet = discovery.list().find((w) => w.info.id === id)
    if (!wallet) throw LatchError.of('connector_not_initialized')
    return wallet
  }

  /** Events of a wallet the modal has used, checked before they cross to the modal. */
  const subscribe = ({ info, provider }: InjectedWallet) => {
    if (subscribed.has(provider) || typeof provider.on !== 'function') return
    subscribed.add(provider)
    for (const event of WALLET_EVENTS) {
      try {
        provider.on(event, (payload: unknown) => {
          try {
            options.onEvent(info.id, event, eventPayload(event, payload))
          } catch {
            // A malformed event is not passed on.
          }
        })
      } catch {}
    }
  }

  return {
    wallets: () =>
      serialized(async () => {
        const wait = deadline - Date.now()
        if (!discovery.list().length && wait > 0) {
          await new Promise<void>((resolve) => {
            const wake = () => {
              clearTimeout(timer)
              waiting.delete(wake)
              resolve()
            }
            const timer = setTimeout(wake, wait)
            waiting.add(wake)
          })
        }
        return discovery.list().map((w) => ({ ...w.info }))
      }),
    request: (id, method, params) =>
      serialized(async () => {
        const allowed = allowedRequest(method)
        if (!allowed) throw LatchError.of('rpc_unsupported_method')
        const checked = allowed.params(params, win.location)
        const wallet = find(id)
        subscribe(wallet)
        let timer: ReturnType<typeof setTimeout> | undefined
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(LatchError.of('wallet_request_timeout')),
            WALLET_REQUEST_TIMEOUT_MS,
          )
        })
        try {
          const answer = Promise.resolve().then(() =>
            wallet.provider.request(
              checked === undefined ? { method } : { method, params: checked },
            ),
          )
          return allowed.result(await Promise.race([answer, timeout]))
        } finally {
          clearTimeout(timer)
        }
      }),
  }
}
