/**
 * The penpal contract between the host page and the modal: what each side exposes to the other
 * (`ModalMethods`, `HostMethods`) and the values that cross it (events, connected and injected
 * wallets).
 */

import type { AnalyticsEventName } from '../constants.ts'
import type {
  Hex,
  HostAppConfig,
  LinkKind,
  LoginResult,
  OAuthReturnParams,
  PendingOAuthFlow,
  ServerAppConfig,
  SignMessageUIOptions,
  TransactionReceipt,
  TransactionRequest,
  TransactionUIOptions,
  UnlinkTarget,
  User,
  WalletAccount,
} from '../types.ts'

/** What `init` answers: the merged configuration, its warnings, and the current user. */
export interface InitResult {
  app: ServerAppConfig
  warnings: string[]
  user: User | null
}

/** Methods the modal exposes to the host SDK. */
export interface ModalMethods {
  /**
   * `flow` is the pending flow the host page saved when it left for the provider, given only
   * with return parameters of the same state. `fork` is a session fork's token the page was
   * opened with (FORK_RETURN_PARAM): the modal signs in with it unless already signed in.
   * `walletClient` is the wallet client parameter of a page a wallet app's link opened without
   * an OAuth return (Phantom's link: 'phantom'); the modal checks that wallet is here.
   * `forkInQuery` says the page was opened with a fork token in its address query, which the
   * host SDK removed and did not hand on (a query reaches servers): the modal tells the page with
   * a 'warning' (the host SDK's budget has no room for the text; the other fork warnings are
   * the modal's too).
   */
  init(
    config: HostAppConfig,
    returnParams?: OAuthReturnParams | null,
    flow?: PendingOAuthFlow | null,
    fork?: string | null,
    walletClient?: string | null,
    forkInQuery?: boolean | null,
  ): Promise<InitResult>
  /** Opens the modal on sign-in; rejects with 'login_exited' when the visitor closes it. */
  login(): Promise<LoginResult>
  /** Links another account to the signed-in user and resolves with the updated user. */
  link(kind: LinkKind): Promise<User>
  unlink(account: UnlinkTarget): Promise<User>
  logout(): Promise<void>
  getUser(): Promise<User | null>
  /** A valid access token (refreshed when close to expiry), or null when signed out. */
  getAccessToken(): Promise<string | null>
  /** The host closed the dialog (Escape, backdrop): the pending flow ends. */
  close(): Promise<void>
  /** Creates the signed-in user's in-app wallet (the passcode screen when the app asks for one). */
  createWallet(): Promise<WalletAccount>
  /**
   * Makes the in-app wallet usable on this device: resolves at once when it already is, else
   * recovers it (automatically, or on the passcode screen) and resolves when it is.
   */
  recoverWallet(): Promise<WalletAccount>
  signMessage(message: string, options?: SignMessageUIOptions): Promise<Hex>
  sendTransaction(
    request: TransactionRequest,
    options?: TransactionUIOptions,
  ): Promise<TransactionReceipt>
  /** Shows the in-app wallet's private key in the export frame; resolves when the visitor closes it. */
  exportWallet(): Promise<void>
  /**
   * A read of the chain `chainId` (the API's chain proxy and its allowlist): the host page's
   * EIP-1193 provider forwards read methods here. Answers the node's result. EIP-5792's
   * `wallet_sendCalls`, `wallet_getCapabilities`, `wallet_getCallsStatus` and
   * `wallet_showCallsStatus` come the same way, by name with their JSON-RPC params (the chain
   * is theirs); `wallet_sendCalls` opens the wallet frame's review of the batch and answers
   * `{ id }` once the visitor's click there sent it.
   */
  rpc(chainId: number, method: string, params?: unknown): Promise<unknown>
  /**
   * The chain ids the app's wallet may use (ServerAppConfig.chains): the host page's provider
   * starts on the first default of them and switches among them only.
   */
  chains(): Promise<number[]>
  /**
   * EIP-712 typed data (an object or its JSON) through the sign screen, which shows it; the
   * host page's EIP-1193 provider sends eth_signTypedData_v4 here.
   */
  signTypedData(typedData: unknown, options?: SignMessageUIOptions): Promise<Hex>
  /**
   * Forks the session into a wallet app's in-app browser: the visitor picks the app on
   * SESSION_FORK_SCREEN; resolves with the deep link opened, rejects with 'fork_exited' when
   * the modal closes first, 'not_authenticated' when signed out and 'session_cookie_refused' at
   * once when this browser refused the session's cookie in the frame.
   */
  forkSession(): Promise<string>
  /**
   * Connect-only: the visitor connects an external wallet without signing in (no SIWE, the
   * session unchanged). Resolves with the wallet, which also joins the connection history
   * ('wallet_connected'); rejects with 'connect_exited' when the visitor closes the modal.
   */
  connectWallet(): Promise<ConnectedWallet>
  /**
   * An injected wallet the modal has sent a request to (HostMethods.request) reported an event:
   * `accountsChanged` with its addresses, `chainChanged` with the hex chain id, `disconnect`
   * with `{ code, message }`. Checked by the host page's bridge before it is sent.
   */
  walletEvent(id: string, event: InjectedWalletEvent, payload: unknown): Promise<void>
}

/**
 * Events the modal reports to the host. 'wallet_connected' carries a WalletConnection each time
 * an external wallet signs in or links through the modal; 'wallet_recovery_failed' a
 * WalletRecoveryFailure each time a passcode entered to recover the in-app wallet is refused.
 */
export type HostEventName =
  | 'login'
  | 'logout'
  | 'user'
  | 'warning'
  | 'wallet_connected'
  | 'wallet_recovery_failed'
  | AnalyticsEventName

/**
 * A passcode recovery of the in-app wallet that failed on the passcode ('wallet_recovery_failed',
 * once per failed try), so the host can tell its user, e.g. that someone is guessing.
 */
export interface WalletRecoveryFailure {
  /** The in-app wallet's address. */
  address: Hex
  /**
   * 'invalid_passcode': a wrong passcode, which the server counted; 'locked': too many wrong
   * ones, and recovery is refused for `retryAfter` seconds.
   */
  reason: 'invalid_passcode' | 'locked'
  /** Seconds until recovery may be tried again, when locked and the server said. */
  retryAfter?: number
}

/** An external wallet the visitor connected in the modal (its connection history's entries). */
export interface WalletConnection {
  address: Hex
  /** How it was reached: 'injected' for a browser wallet in the host page. */
  connectorType: string
  /** Which wallet (e.g. 'metamask'), from what it announced; 'unknown' when unsure. */
  walletClientType: string
  /** ISO 8601. */
  connectedAt: string
}

/** What connectWallet() resolves with: the wallet's EIP-55 address, how it was reached, its chain. */
export interface ConnectedWallet {
  address: Hex
  /** 'injected', 'coinbase_wallet', … (as WalletConnection). */
  connectorType: string
  walletClientType: string
  chainId: number
}

/**
 * A browser wallet found in the host page (EIP-6963 or the legacy `window.ethereum`, whose id is
 * 'window.ethereum'). `icon` is a data:image URI or '' and `rdns` reverse DNS or '' when the
 * wallet announced none acceptable.
 */
export interface InjectedWalletInfo {
  id: string
  name: string
  icon: string
  rdns: string
}

/** The EIP-1193 events of an injected wallet that reach the modal. */
export type InjectedWalletEvent = 'accountsChanged' | 'chainChanged' | 'disconnect'

/** Methods the host SDK exposes to the modal. */
export interface HostMethods {
  /**
   * Shows or hides the modal. `label`: the modal's name as a dialog in the visitor's language,
   * which the host's dialog and frame take (they have only an English one before the first open).
   */
  setOpen(open: boolean, label?: string): Promise<void>
  resize(height: number): Promise<void>
  emit(event: HostEventName, payload: unknown): Promise<void>
  /**
   * Top-level navigation, only ever to an authorization URL the API returned; the host page
   * keeps `flow` in its sessionStorage for the return.
   */
  navigate(url: string, flow: PendingOAuthFlow): Promise<void>
  /**
   * The host page's current URL (`location.href`): where an OAuth provider sends the visitor
   * back (`redirect_to`). The modal strips any latch_ return parameters from it.
   */
  pageUrl(): Promise<string>
  /**
   * The browser wallets in the host page, after waiting up to INJECTED_WALLET_WAIT_MS for one
   * to appear (host-sdk/src/bridge/).
   */
  wallets(): Promise<InjectedWalletInfo[]>
  /**
   * An EIP-1193 request to the wallet `id`; only the methods the sign-in needs pass. Wallet
   * errors arrive as LatchErrors with the wallet's `rpcCode` and message.
   */
  request(id: string, method: string, params?: unknown): Promise<unknown>
}
