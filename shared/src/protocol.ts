/**
 * The contracts between the three origins: the penpal methods each side exposes, the wallet
 * frame's message names, the request headers, and a schema for every payload that crosses a
 * frame boundary.
 *
 * What the modal checks before its first screen (the host's configuration, an OAuth return)
 * and the host's unlink targets are shapes (shape.ts): the landing then carries no validator
 * library. The other payloads (signing and transaction options, the wallet frame's messages)
 * are zod/mini schemas (tree-shakable; full zod cost ~17 KB gzip more), usable inside full-zod
 * objects as api.ts does.
 */

import { type AnalyticsEventName, LOGIN_METHODS } from './constants.ts'
import type { HostTexts } from './i18n/messages.ts'
import * as s from './shape.ts'
import type {
  Color,
  Hex,
  HostAppConfig,
  LinkKind,
  LoginResult,
  OAuthReturnParams,
  PendingOAuthFlow,
  ServerAppConfig,
  SignMessageUIOptions,
  ThemeSetting,
  TransactionReceipt,
  TransactionRequest,
  TransactionUIOptions,
  UnlinkTarget,
  User,
  WalletAccount,
} from './types.ts'

/** Headers every API request carries. */
export const APP_ID_HEADER = 'latch-app-id'
export const CLIENT_HEADER = 'latch-client'
/**
 * A refresh's own id: random for each refresh, the same on every retry of it, so a retry whose
 * first answer was lost is recognised as the same request (server/src/sessions/README.md).
 */
export const REFRESH_ID_HEADER = 'latch-refresh-id'

// The wallet frame's pages on the API origin (not under /api/v1). One spelling: the modal builds
// the URLs with walletFramePath/walletExportPath, the server routes WALLET_FRAME_ROUTE and
// WALLET_EXPORT_ROUTE over its `:appId` parameter.
const framePath = (appSegment: string): string => `/apps/${appSegment}/embedded-wallets`

/** The wallet frame's page of an app: `/apps/{appId}/embedded-wallets`. */
export function walletFramePath(appId: string): string {
  return framePath(encodeURIComponent(appId))
}

/** The key export page of an app: `/apps/{appId}/embedded-wallets/export`. */
export function walletExportPath(appId: string): string {
  return `${walletFramePath(appId)}/export`
}

/** walletFramePath and walletExportPath as route patterns over an `:appId` parameter. */
// Written out, not computed: a computed constant is kept in every bundle that imports this
// module (the modal's landing among them), and shared's tests check they equal the builders'.
export const WALLET_FRAME_ROUTE = '/apps/:appId/embedded-wallets'
export const WALLET_EXPORT_ROUTE = '/apps/:appId/embedded-wallets/export'

/** Message names of the wallet frame, used as its penpal method names. */
export const WALLET_MESSAGES = {
  ready: 'latch:iframe:ready',
  create: 'latch:wallet:create',
  connect: 'latch:wallet:connect',
  recover: 'latch:wallet:recover',
  rpc: 'latch:wallet:rpc',
  /**
   * Refused, always: no message approves a fork's access to the wallet (see `approval`). Kept
   * so that an older modal, or a script of the modal's origin, hears a clear refusal.
   */
  confirmFork: 'latch:wallet:confirm-fork',
  /**
   * Shows an approval the frame draws itself (its own text and button); only the visitor's
   * trusted click there, after the frame was visible and unchanged for a moment, does it.
   */
  approval: 'latch:wallet:approval',
  /** Takes the approval off the frame (the modal's screen went away). */
  dismissApproval: 'latch:wallet:dismiss-approval',
  /** Seals this device's share under a passkey (a recovery method added to an existing wallet). */
  addPasskey: 'latch:wallet:add-passkey',
  /** The RP ID and name for a passkey the modal registers for the frame. */
  passkeyOptions: 'latch:wallet:passkey-options',
  /**
   * Shows a batch of calls the app pays for on the frame's own review (every call decoded, the
   * fee line); only the visitor's trusted click there signs it and sends it to the app's sponsor.
   * `dismissApproval` takes it away too.
   */
  sendCalls: 'latch:wallet:send-calls',
  /**
   * The frame to the modal (the one method the modal exposes to it): the visitor's click on the
   * batch review started sending it. Informational, with no arguments: the modal refuses closing
   * until the review's answer comes, so a batch that may be sent is never reported as refused.
   */
  batchSending: 'latch:wallet:batch-sending',
} as const

/**
 * The key export page (wallet-frame/src/export.ts) and the modal's screen. `show`: the modal
 * hands the page the access token over penpal after the handshake (never in the URL, which
 * leaks into logs and history); the page checks it and offers its Reveal button, answering the
 * address only. Nothing sent over penpal reveals the key: only the visitor's own click on that
 * button inside the page does. The page then tells the modal `revealed` (the address only), from
 * which the modal counts the key's minimum display time.
 */
export const EXPORT_MESSAGES = {
  show: 'latch:export:show',
  revealed: 'latch:export:revealed',
} as const
export interface ExportFrameMethods {
  [EXPORT_MESSAGES.show](params: { address: Hex; accessToken: string }): Promise<{ address: Hex }>
}
/** What the modal's export screen exposes to the export page. */
export interface ExportModalMethods {
  [EXPORT_MESSAGES.revealed](params: { address: Hex }): Promise<void>
}

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

export interface WalletCreateParams {
  accessToken: string
  recoveryPin?: string
  /** 'passkey': the recovery share is sealed under a passkey's PRF output (no recoveryPin then). */
  recoveryMethod?: 'passkey'
  /**
   * The passkey to seal under (base64url id), registered by the modal without any PRF input
   * (Chromium refuses `create` in a cross-origin frame without the frame's own click); the
   * frame then asks it for the PRF output itself. Absent: the frame registers one.
   */
  credentialId?: string
}
export interface WalletConnectParams {
  address: Hex
  accessToken: string
}
export interface WalletRecoverParams {
  address: Hex
  accessToken: string
  recoveryPin?: string
  /** 'passkey': recover with one of the wallet's passkeys, whatever its main method. */
  recoveryMethod?: 'passkey'
}
export interface WalletAddPasskeyParams {
  address: Hex
  accessToken: string
  /** As WalletCreateParams.credentialId. */
  credentialId?: string
}
export interface WalletPasskeyOptionsParams {
  accessToken: string
}
/** What the modal needs to register a passkey for the frame: nothing secret. */
export interface WalletPasskeyOptions {
  rpId: string
  rpName: string
}
/**
 * What the wallet frame's approval shows. `fork-show-code`: on the device that holds the
 * wallet, a button that shows a pairing code for a fork of this session. `fork-enter-code`: on
 * the forked session's device, an input for that code and a button that pairs. `link`: "Let
 * {label} sign in to your account and open your wallet?" for a new sign-in method (`method`, the
 * kind and identifier the server binds the approval to).
 */
export type WalletApprovalKind = 'fork-show-code' | 'fork-enter-code' | 'link'
export type LinkApprovalMethod = 'email' | 'phone' | 'oauth' | 'siwe' | 'passkey'
export interface WalletApprovalParams {
  accessToken: string
  kind: WalletApprovalKind
  /** The modal's language: the frame's texts follow it. */
  locale?: string
  /** `link`: what the new method is called on screen (an address, a provider's name). */
  label?: string
  /** `link`: the kind and identifier of the method the approval lets in. */
  method?: { type: LinkApprovalMethod; identifier: string }
  /** The modal's theme colours (#hex), so the frame's text and button match the screen. */
  colors?: { background?: string; foreground?: string; accent?: string; accentForeground?: string }
}
export interface WalletConfirmForkParams {
  accessToken: string
  /** The fork token of the link the visitor chose a wallet app for. */
  forkToken: string
}
/** A batch of calls for the app's sponsor (EIP-5792 `wallet_sendCalls`, paid by the app). */
export interface WalletSendCallsParams {
  address: Hex
  accessToken: string
  chainId: number
  calls: { to: Hex; value?: string; data?: string }[]
  /** The dapp's own id for the batch (EIP-5792's `id`): a label the API keeps, never signed. */
  id?: string
  /** The modal's language: the frame's texts follow it. */
  locale?: string
  colors?: WalletApprovalParams['colors']
}
export interface WalletRpcParams {
  address: Hex
  accessToken: string
  request: { method: string; params?: unknown }
}

/** Methods the wallet frame exposes to the modal, named by WALLET_MESSAGES. */
export interface WalletMethods {
  [WALLET_MESSAGES.create](params: WalletCreateParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.connect](params: WalletConnectParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.recover](params: WalletRecoverParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.rpc](params: WalletRpcParams): Promise<{ response: unknown }>
  /** Refused with origin_not_allowed: a message approves nothing (`approval` does, by click). */
  [WALLET_MESSAGES.confirmFork](params: WalletConfirmForkParams): Promise<{ confirmed: true }>
  /**
   * Draws the approval and settles once the visitor's click in the frame did it (the code is
   * shown, the device paired, the method approved); rejects when dismissed or replaced.
   */
  [WALLET_MESSAGES.approval](params: WalletApprovalParams): Promise<{ done: true }>
  [WALLET_MESSAGES.dismissApproval](): Promise<void>
  /**
   * Adds passkey recovery to the wallet usable on this device: the frame runs the WebAuthn
   * ceremony itself and answers the address only (never PRF output, key or share).
   */
  [WALLET_MESSAGES.addPasskey](params: WalletAddPasskeyParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.passkeyOptions](
    params: WalletPasskeyOptionsParams,
  ): Promise<WalletPasskeyOptions>
}

/** The frame's batch review (wallet-frame/src/batch/review.ts), apart until the modal calls it. */
export interface WalletBatchMethods {
  /** Resolves with the batch's EIP-5792 id once the visitor confirmed and the sponsor sent it. */
  [WALLET_MESSAGES.sendCalls](params: WalletSendCallsParams): Promise<{ id: string }>
}
/** What the modal exposes to the wallet frame: news only, nothing it could approve. */
export interface WalletModalMethods {
  [WALLET_MESSAGES.batchSending](): Promise<void>
}

// Kept in their own module so a bundle that needs only these leaves zod out (host SDK budget).
export { exposeMethods, remoteMethods } from './remote.ts'

// Rules the shapes below and the zod schemas of payloads.ts share.

export const COLOR_PATTERN = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/
/** An http(s) URL of at most 2048 characters: links the modal renders. */
export const HTTP_URL_RULES = {
  max: 2048,
  refine: [(v: string) => /^https?:\/\//i.test(v), 'must be an http(s) URL'],
} satisfies s.StringRules

// What the modal checks on its way to the first screen, and the host's unlink targets, are
// shapes (shape.ts), not zod: the landing then carries no zod at all.

const sText = s.string({ max: 1000 })
const sShort = (max: number) => s.string({ max })
const sHttpUrl = s.string(HTTP_URL_RULES)
const sBoolean = s.optional(s.boolean())

export const hostAppConfigSchema: s.Shape<HostAppConfig> = s.object({
  id: s.optional(s.string()),
  name: s.optional(sText),
  allowlistConfig: s.optional(
    s.object({
      errorTitle: s.nullish(sText),
      errorDetail: s.nullish(sText),
      errorCtaText: s.nullish(sText),
      errorCtaLink: s.nullish(sHttpUrl),
    }),
  ),
  appearance: s.optional(
    s.object({
      logo: s.optional(sHttpUrl),
      theme: s.optional(
        s.union<ThemeSetting>([
          s.literal('light'),
          s.literal('dark'),
          s.string<Color>({ pattern: COLOR_PATTERN }),
        ]),
      ),
      accentColor: s.optional(s.string<Color>({ pattern: COLOR_PATTERN })),
      showWalletLoginFirst: sBoolean,
      palette: s.optional(
        s.object({
          background: s.optional(sShort(32)),
          foreground: s.optional(sShort(32)),
          accent: s.optional(sShort(32)),
          success: s.optional(sShort(32)),
          error: s.optional(sShort(32)),
        }),
      ),
    }),
  ),
  loginMethods: s.optional(s.array(s.oneOf(LOGIN_METHODS), LOGIN_METHODS.length * 2)),
  legal: s.optional(
    s.object({
      termsAndConditionsUrl: s.optional(sHttpUrl),
      privacyPolicyUrl: s.optional(sHttpUrl),
    }),
  ),
  walletConnectCloudProjectId: s.optional(sShort(128)),
  embeddedWallets: s.optional(
    s.object({
      createOnLogin: s.optional(s.oneOf(['off', 'users-without-wallets'])),
      requireUserPasswordOnCreate: sBoolean,
    }),
  ),
  render: s.optional(
    s.object({
      inDialog: sBoolean,
      inParentNodeId: s.nullish(sShort(256)),
    }),
  ),
  // A language tag (BCP 47); an unshipped one falls back to English with a warning.
  locale: s.optional(s.string({ max: 35, pattern: /^[a-z]{2,3}(-[a-z\d]{1,8})*$/i })),
  // Per locale, per message key: checked where it is used, in the modal's lazy i18n-load.ts.
  texts: s.optional(s.unchecked<HostTexts>()),
})

// A module of its own: the modal's landing reaches this file, and only code loaded after it
// (the OAuth return, unlink) these.
export {
  ADDRESS_PATTERN,
  oauthReturnParamsSchema,
  pendingOAuthFlowSchema,
  unlinkTargetSchema,
} from './call-shapes.ts'
