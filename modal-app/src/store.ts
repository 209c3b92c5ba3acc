/**
 * The modal's one store (vanilla zustand): what the screens render (the current screen, the
 * flow on it and each step's state). A flow's life (who waits on it, its success pause, its
 * result) is its handle's, in flow.ts. Actions are module-level functions over the store
 * (flow.ts, passwordless.ts, oauth.ts, account.ts), so penpal handlers move the UI without
 * hooks, and `resetStore()` is the one reset tests need.
 */
import type {
  CodeChannel,
  Hex,
  LatchError,
  LinkApprovalMethod,
  OAuthProvider,
  User,
} from '@latch/shared'
import { createStore } from 'zustand/vanilla'
import type { Connector } from './connectors/types.ts'
import type { ScreenId } from './screens/ids.ts'
import type { AppView } from './startup/config.ts'
import type { SignState, TransactionState } from './wallet/requests.ts'

export type Status = 'loading' | 'ready' | 'error'
export type CodeStatus = 'idle' | 'submitting' | 'success' | 'error'

/**
 * What the visitor is doing: signing in, linking an account to the signed-in user, creating
 * the in-app wallet (createWallet()) or recovering it on this device (recoverWallet()).
 */
/** A batch of calls the app pays for, checked, as the wallet frame's review takes it. */
export interface BatchRequest {
  chainId: number
  calls: { to: Hex; value: string; data: string }[]
  /** The dapp's own id for the batch (EIP-5792's `id`), lowercase. */
  id?: string
}

export type Flow =
  | { kind: 'login' }
  | { kind: 'link'; account: 'email' | 'phone' | 'wallet' | 'passkey' | OAuthProvider }
  | { kind: 'create-wallet' }
  | { kind: 'recover-wallet' }
  | { kind: 'sign' }
  /** sendTransaction(), or with `batch` EIP-5792's wallet_sendCalls (wallet/calls.ts). */
  | { kind: 'send-transaction'; batch?: BatchRequest }
  | { kind: 'export-wallet' }
  /** connectWallet(): a wallet connected without signing in. */
  | { kind: 'connect-wallet' }
  /** forkSession(): the session opened in a wallet app's in-app browser (fork.ts). */
  | { kind: 'fork-session' }

/**
 * Social sign-in on AWAITING_OAUTH_SCREEN: asking the API for the provider's URL
 * (redirecting), completing the return (verifying), done, or failed with the shown text.
 */
export interface OAuthState {
  provider: OAuthProvider
  status: 'redirecting' | 'verifying' | 'success' | 'error'
  /** The detail under 'Authentication failed.' (oauthErrorView, oauth.ts). */
  error: string | null
  retryable: boolean
}

export interface PasswordlessState {
  channel: CodeChannel
  /** The e-mail address or E.164 number the code was sent to. */
  destination: string
  status: CodeStatus
  error: string | null
  /**
   * How many submitted codes the API refused: each refusal empties the boxes, so the next
   * keystroke starts a fresh entry instead of completing the refused code again.
   */
  refusals?: number
  /** 'Resend code' was refused inside the server's wait: its seconds, from `at` (Date.now()). */
  resendWait?: { seconds: number; at: number } | null
}

/** The in-app wallet's screens (src/wallet/): creating, connecting, recovering. */
export interface WalletState {
  status: 'idle' | 'submitting' | 'success' | 'error'
  /** The text under the passcode boxes, or null. */
  error: string | null
  /** A locked recovery may be tried again from this time (ms since the epoch). */
  lockedUntil: number | null
  /** Where the connecting gate goes once the wallet is usable; null ends the flow. */
  target: ScreenId | null
}

/** The wallet screens' state when a wallet flow begins (wallet/index.ts, wallet/flows.ts). */
export function freshWalletState(target: WalletState['target'] = null): WalletState {
  return { status: 'idle', error: null, lockedUntil: null, target }
}

/**
 * An external wallet's sign-in or link on AWAITING_CONNECTION (connectors/): the connection
 * (disconnected, connecting, connected), the step on screen, and the failure.
 */
export interface ExternalWalletState {
  connector: { id: string; name: string; icon: string }
  /** The connector itself, which Retry uses again (connectors/attempt.ts). */
  source?: Connector
  status: 'disconnected' | 'connecting' | 'connected'
  step: 'waiting' | 'connected' | 'signing' | 'success' | 'failed'
  address: string | null
  error: { message: string; details: string | null; retryable: boolean } | null
  /** Retries used of WALLET_CONNECT_RETRIES. */
  retries: number
}

/**
 * The session fork: the host page's address carrying the fork token once the API answered
 * (`page`), or why it failed.
 */
/** What the wallet frame asks the visitor to let in (its kind and identifier, and its name). */
export interface LinkApprovalState {
  method: { type: LinkApprovalMethod; identifier: string }
  label: string
}

export interface SessionForkState {
  page: string | null
  error: string | null
  /** The link opened; an automatic wallet's pairing code is offered on screen (wallet frame). */
  opened?: boolean
}

export interface ModalState {
  status: Status
  screen: ScreenId
  open: boolean
  app: AppView | null
  user: User | null
  /** The flow on screen; null while closed. */
  flow: Flow | null
  /**
   * Bumped whenever a flow starts or ends (and by resetStore): a flow's handle is alive while
   * the generation is its own (flow.ts).
   */
  generation: number
  /** The submit of the landing or link screen: pending, and its error text. */
  submitting: boolean
  submitError: string | null
  passwordless: PasswordlessState | null
  oauth: OAuthState | null
  wallet: WalletState | null
  externalWallet: ExternalWalletState | null
  /** signMessage() on EMBEDDED_WALLET_SIGN_REQUEST_SCREEN (wallet/sign.ts). */
  signRequest: SignState | null
  /** sendTransaction() on EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN (wallet/send.ts). */
  transaction: TransactionState | null
  /** The flow has its value (the key was shown): closing now delivers it instead of rejecting. */
  delivered: boolean
  /** forkSession() on SESSION_FORK_SCREEN (fork.ts). */
  sessionFork: SessionForkState | null
  /** The visitor may not close the modal now (a transaction being submitted). */
  closeBlocked: boolean
  /**
   * A new sign-in method waiting for the visitor's approval in the wallet frame (an automatic
   * wallet's user; wallet/link-approval.ts): shown in place of the screen until approved.
   */
  linkApproval: LinkApprovalState | null
  /** The passkey this link('passkey') flow added: what the recovery offer seals under. */
  linkedPasskey: string | null
  /**
   * The wallet API refused this browser's wallet credential (flow.refuse): the view saying what
   * to do is shown in place of the screen until the flow ends.
   */
  walletRefused: boolean
  /** The user who signed up in this page (isNewUser): they see the wallet-created screen. */
  newUserId: string | null
  /** OAuth states completed in this page: each return is completed once. */
  oauthCompleted: readonly string[]
  /** The cause behind the general error view. */
  error: LatchError | null
}

/** What a flow leaves behind: every flow starts from these (flowReset in flow.ts). */
export const FLOW_STATE_RESET = {
  submitting: false,
  submitError: null,
  passwordless: null,
  oauth: null,
  wallet: null,
  externalWallet: null,
  signRequest: null,
  transaction: null,
  delivered: false,
  sessionFork: null,
  closeBlocked: false,
  linkApproval: null,
  linkedPasskey: null,
  walletRefused: false,
} as const satisfies Partial<ModalState>

export const initialState: ModalState = {
  status: 'loading',
  screen: 'LANDING',
  open: false,
  app: null,
  user: null,
  flow: null,
  generation: 0,
  ...FLOW_STATE_RESET,
  newUserId: null,
  oauthCompleted: [],
  error: null,
}

export const store = createStore<ModalState>()(() => initialState)

/**
 * Back to the initial state: the one reset tests need. The generation keeps counting, as it
 * does in a page: a flow of an earlier test that settles late (a preparation, a frame answer)
 * is checked against it and must not pass for the next test's flow; flow.ts ends that flow and
 * stops its timers when it sees the generation change.
 */
export function resetStore(): void {
  store.setState({ ...initialState, generation: store.getState().generation + 1 }, true)
}
