/** The public API of the host SDK (`createLatch`), shared so the modal and the docs agree on it. */
import type { AnalyticsEventName } from './constants.ts'
import type { HostEventName, ModalMethods, WalletRecoveryFailure } from './protocol/host-modal.ts'
import type { HostAppConfig, LoginResult, User } from './types.ts'

/** What a host passes to `createLatch`. */
export interface LatchOptions {
  /** The app's id (25 characters); `ready` rejects with `invalid_app_id` otherwise. */
  appId: string
  /** The host configuration, sent to the modal over penpal after the handshake. */
  config?: HostAppConfig
  /**
   * Where the modal app is served, e.g. 'https://auth.example.com'. The one-line script defaults
   * it to its own origin; the ESM entry to the host page's origin.
   */
  modalUrl?: string
  /** Called when the modal closes after a sign-in, unless suppressSuccessCallback is set. */
  onSuccess?: (user: User, isNewUser: boolean) => void
  suppressSuccessCallback?: boolean
}

/**
 * What each event carries. The modal emits them with `emit(event, payload)`:
 * - 'login' when a sign-in completes (the SDK then calls onSuccess),
 * - 'logout' after a logout, 'user' whenever the current user changes (null when signed out),
 * - 'warning' with a configuration warning (the SDK also prints it with console.warn),
 * - 'wallet_recovery_failed' with a WalletRecoveryFailure for each refused recovery passcode,
 * - an analytics event name with its properties, if any.
 */
export interface LatchEventPayloads {
  login: LoginResult
  logout: null
  user: User | null
  warning: string
  wallet_recovery_failed: WalletRecoveryFailure
}
export type AnalyticsEventPayload = Record<string, unknown> | undefined

export type LatchEventName = HostEventName
export type LatchEventPayload<E extends LatchEventName> = E extends keyof LatchEventPayloads
  ? LatchEventPayloads[E]
  : E extends AnalyticsEventName
    ? AnalyticsEventPayload
    : never
export type LatchEventHandler<E extends LatchEventName> = (payload: LatchEventPayload<E>) => void

/**
 * What `createLatch` returns. Every method waits for `ready` first. The account and wallet
 * methods are the modal's own (`ModalMethods`), passed through, so the two cannot drift apart.
 * The flows (login, link, createWallet, recoverWallet) have no timeout: they last until the
 * visitor finishes or leaves them, and leaving rejects with the flow's exit error
 * ('User exited before creating a wallet', 'User exited before their wallet could be recovered').
 */
export interface LatchClient
  extends Pick<
    ModalMethods,
    | 'login'
    | 'link'
    | 'unlink'
    | 'logout'
    | 'getUser'
    | 'getAccessToken'
    | 'createWallet'
    | 'recoverWallet'
    | 'signMessage'
    | 'sendTransaction'
    | 'exportWallet'
    | 'connectWallet'
    | 'forkSession'
  > {
  /** Resolves once the modal is connected and configured; rejects with a LatchError otherwise. */
  readonly ready: Promise<void>
  on<E extends LatchEventName>(event: E, handler: LatchEventHandler<E>): void
  off<E extends LatchEventName>(event: E, handler: LatchEventHandler<E>): void
  /**
   * An EIP-1193 provider over the signed-in user's in-app wallet (host-sdk/README.md,
   * "The EIP-1193 provider"), for ethers, viem or wagmi. Its code loads from the modal origin on
   * the first call; every call answers the same provider. `announce` also announces it on the
   * page through EIP-6963 (name 'Latch', rdns 'dev.latch.wallet').
   */
  getEthereumProvider(options?: EthereumProviderOptions): Promise<LatchEthereumProvider>
  /**
   * EIP-5792's `wallet_sendCalls` on the promise API: a batch of calls the app pays for, shown
   * on the wallet frame's review; resolves with the batch's `{ id }` (for the provider's
   * `wallet_getCallsStatus`) once the visitor's click there sent it. Closing the review rejects
   * with 'User exited the modal before submitting the transaction'; a sponsor's refusal with its
   * own code (docs/behaviour.md, "Batches the app pays for").
   */
  sendCalls(request: SendCallsRequest): Promise<{ id: string }>
  /** Removes the frame and its listeners; pending and later calls reject. */
  destroy(): void
}

/** `wallet_sendCalls`'s parameter (EIP-5792). */
export interface SendCallsRequest {
  version?: string
  /** A hex chain id of one of the app's chains. */
  chainId: string
  /** The in-app wallet's address (optional). */
  from?: string
  atomicRequired?: boolean
  /** 1 to 16 calls; `value` a hex quantity, `data` hex bytes. */
  calls: { to: string; value?: string; data?: string }[]
  /** `paymasterService` is honoured where the app pays; any other must be `optional`. */
  capabilities?: Record<string, unknown>
  /**
   * The batch's id of your choosing (0x and hex, at most 4096 bytes), answered back and used by
   * `wallet_getCallsStatus`; an id the user already sent a batch under is refused (5720).
   */
  id?: string
}

/** Attributes and test ids of the elements the SDK adds to the host page. */
export const HOST_ELEMENT_IDS = {
  dialog: 'latch-dialog',
  frame: 'latch-frame',
  /** Elements with this attribute open sign-in on click (one-line script). */
  loginAttribute: 'data-latch-login',
} as const

/** An EIP-1193 request. */
export interface EthereumRequest {
  method: string
  params?: readonly unknown[] | object
}

/** The events of the in-app wallet's EIP-1193 provider. */
export type EthereumProviderEvent =
  | 'connect'
  | 'disconnect'
  | 'accountsChanged'
  | 'chainChanged'
  | 'message'

/** The in-app wallet as an EIP-1193 provider (what getEthereumProvider() answers). */
export interface LatchEthereumProvider {
  request(args: EthereumRequest): Promise<unknown>
  on(event: EthereumProviderEvent, listener: (payload: never) => void): LatchEthereumProvider
  removeListener(
    event: EthereumProviderEvent,
    listener: (payload: never) => void,
  ): LatchEthereumProvider
  /** Set so libraries that look for it treat this as a wallet provider. */
  readonly isLatch: true
}

export interface EthereumProviderOptions {
  /** Announce the provider on the page through EIP-6963 (off by default). */
  announce?: boolean
}

/** An EIP-1193 error: `code` 4001 rejected, 4100 unauthorized, 4200 unsupported, 4901 chain. */
export interface ProviderRpcError extends Error {
  code: number
  data?: unknown
}
