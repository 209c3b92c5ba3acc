/**
 * The contracts between the three origins: the penpal methods each side exposes, the wallet
 * frame's message names, the request headers, and zod schemas for every payload that
 * crosses a frame boundary.
 *
 * The schemas are built with zod/mini (tree-shakable): the modal validates the host's
 * configuration before its landing, and full zod cost it ~17 KB gzip more. They are zod 4
 * schemas all the same (`safeParse`, usable inside full-zod objects, as api.ts does).
 */
import * as z from 'zod/mini'
import {
  ANALYTICS_EVENTS,
  type AnalyticsEventName,
  LOGIN_METHODS,
  OAUTH_PROVIDERS,
} from './constants.ts'
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
  TransactionReceipt,
  TransactionRequest,
  TransactionUIOptions,
  UnlinkTarget,
  User,
  WalletAccount,
} from './types.ts'
import { isQuantity } from './validation.ts'

/** Headers every API request carries. */
export const APP_ID_HEADER = 'latch-app-id'
export const CLIENT_HEADER = 'latch-client'

/** Message names of the wallet frame (SPEC section 7), used as its penpal method names. */
export const WALLET_MESSAGES = {
  ready: 'latch:iframe:ready',
  create: 'latch:wallet:create',
  connect: 'latch:wallet:connect',
  recover: 'latch:wallet:recover',
  rpc: 'latch:wallet:rpc',
} as const

/**
 * The key export frame's one method (wallet-frame/src/export.ts): the modal hands it the access
 * token over penpal after the handshake (never in the URL, which leaks into logs and history);
 * the frame rebuilds the key, shows it, and answers the address only.
 */
export const EXPORT_MESSAGES = { show: 'latch:export:show' } as const
export interface ExportFrameMethods {
  [EXPORT_MESSAGES.show](params: { address: Hex; accessToken: string }): Promise<{ address: Hex }>
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
   */
  init(
    config: HostAppConfig,
    returnParams?: OAuthReturnParams | null,
    flow?: PendingOAuthFlow | null,
    fork?: string | null,
    walletClient?: string | null,
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
   * EIP-1193 provider forwards read methods here. Answers the node's result.
   */
  rpc(chainId: number, method: string, params?: unknown): Promise<unknown>
  /**
   * EIP-712 typed data (an object or its JSON) through the sign screen, which shows it; the
   * host page's EIP-1193 provider sends eth_signTypedData_v4 here.
   */
  signTypedData(typedData: unknown, options?: SignMessageUIOptions): Promise<Hex>
  /**
   * Forks the session into a wallet app's in-app browser: the visitor picks the app on
   * SESSION_FORK_SCREEN; resolves with the deep link opened, rejects with 'fork_exited' when
   * the modal closes first and 'not_authenticated' when signed out.
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
 * an external wallet signs in or links through the modal.
 */
export type HostEventName =
  | 'login'
  | 'logout'
  | 'user'
  | 'warning'
  | 'wallet_connected'
  | AnalyticsEventName

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
  setOpen(open: boolean): Promise<void>
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
}
export interface WalletConnectParams {
  address: Hex
  accessToken: string
}
export interface WalletRecoverParams {
  address: Hex
  accessToken: string
  recoveryPin?: string
}
export interface WalletRpcParams {
  address: Hex
  accessToken: string
  request: { method: string; params?: unknown }
}

/** Methods the wallet frame exposes to the modal, named as SPEC section 7 names them. */
export interface WalletMethods {
  [WALLET_MESSAGES.create](params: WalletCreateParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.connect](params: WalletConnectParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.recover](params: WalletRecoverParams): Promise<{ address: Hex }>
  [WALLET_MESSAGES.rpc](params: WalletRpcParams): Promise<{ response: unknown }>
}

// Kept in their own module so a bundle that needs only these leaves zod out (host SDK budget).
export { exposeMethods, remoteMethods } from './remote.ts'

// Schemas for payloads entering a frame.

const hex = z.string().check(z.regex(/^0x[0-9a-fA-F]*$/)) as unknown as z.ZodMiniType<Hex>
const address = z.string().check(z.regex(/^0x[0-9a-fA-F]{40}$/)) as unknown as z.ZodMiniType<Hex>
const color = z
  .string()
  .check(z.regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/)) as unknown as z.ZodMiniType<Color>
const httpUrl = z.string().check(
  z.maxLength(2048),
  z.refine((v) => /^https?:\/\//i.test(v), 'must be an http(s) URL'),
)
const text = z.string().check(z.maxLength(1000))
const short = (max: number) => z.string().check(z.maxLength(max))
const boolean = z.optional(z.boolean())

export const oauthProviderSchema = z.enum(OAUTH_PROVIDERS)
export const loginMethodSchema = z.enum(LOGIN_METHODS)
export const analyticsEventSchema = z.enum(ANALYTICS_EVENTS)

export const hostAppConfigSchema: z.ZodMiniType<HostAppConfig> = z.object({
  id: z.optional(z.string()),
  name: z.optional(text),
  allowlistConfig: z.optional(
    z.object({
      errorTitle: z.nullish(text),
      errorDetail: z.nullish(text),
      errorCtaText: z.nullish(text),
      errorCtaLink: z.nullish(httpUrl),
    }),
  ),
  appearance: z.optional(
    z.object({
      logo: z.optional(httpUrl),
      theme: z.optional(z.union([z.literal('light'), z.literal('dark'), color])),
      accentColor: z.optional(color),
      showWalletLoginFirst: boolean,
      palette: z.optional(
        z.object({
          background: z.optional(short(32)),
          foreground: z.optional(short(32)),
          accent: z.optional(short(32)),
          success: z.optional(short(32)),
          error: z.optional(short(32)),
        }),
      ),
    }),
  ),
  loginMethods: z.optional(z.array(loginMethodSchema).check(z.maxLength(LOGIN_METHODS.length * 2))),
  legal: z.optional(
    z.object({
      termsAndConditionsUrl: z.optional(httpUrl),
      privacyPolicyUrl: z.optional(httpUrl),
    }),
  ),
  walletConnectCloudProjectId: z.optional(short(128)),
  embeddedWallets: z.optional(
    z.object({
      createOnLogin: z.optional(z.enum(['off', 'users-without-wallets'])),
      requireUserPasswordOnCreate: boolean,
    }),
  ),
  render: z.optional(
    z.object({
      inDialog: boolean,
      inParentNodeId: z.nullish(short(256)),
    }),
  ),
})

const nonEmpty = (max: number) => z.string().check(z.minLength(1), z.maxLength(max))

export const oauthReturnParamsSchema: z.ZodMiniType<OAuthReturnParams> = z.object({
  code: nonEmpty(4096),
  state: nonEmpty(512),
  provider: oauthProviderSchema,
  token: z.optional(short(4096)),
  connector: z.optional(short(128)),
  walletClient: z.optional(short(128)),
})

export const pendingOAuthFlowSchema: z.ZodMiniType<PendingOAuthFlow> = z.object({
  state: nonEmpty(512),
  provider: oauthProviderSchema,
  intent: z.enum(['login', 'link']),
  secret: z.string().check(z.regex(/^[A-Za-z0-9_-]{43}$/)),
})

export const linkKindSchema: z.ZodMiniType<LinkKind> = z.union([
  z.enum(['email', 'phone', 'wallet']),
  oauthProviderSchema,
])

export const unlinkTargetSchema: z.ZodMiniType<UnlinkTarget> = z.union([
  z.object({ type: z.literal('email'), address: short(320) }),
  z.object({ type: z.literal('phone'), number: short(32) }),
  z.object({ type: z.literal('wallet'), address }),
  z.object({
    type: z.enum(['google_oauth', 'twitter_oauth', 'discord_oauth', 'github_oauth', 'apple_oauth']),
    subject: nonEmpty(256),
  }),
])

export const signMessageOptionsSchema: z.ZodMiniType<SignMessageUIOptions> = z.object({
  title: z.optional(text),
  description: z.optional(text),
  buttonText: z.optional(short(100)),
})

const quantity = z.optional(
  z.custom<TransactionRequest['value']>(isQuantity, {
    message: 'must be a number, bigint or hex string',
  }),
)
const count = z.optional(z.number().check(z.int(), z.nonnegative()))

export const transactionRequestSchema: z.ZodMiniType<TransactionRequest> = z.object({
  to: z.optional(address),
  from: z.optional(address),
  data: z.optional(hex),
  value: quantity,
  gasLimit: quantity,
  gasPrice: quantity,
  maxPriorityFeePerGas: quantity,
  maxFeePerGas: quantity,
  nonce: count,
  type: count,
  chainId: z.optional(z.number().check(z.int(), z.positive())),
})

export const transactionUIOptionsSchema: z.ZodMiniType<TransactionUIOptions> = z.object({
  modalTitle: z.optional(text),
  title: z.optional(text),
  description: z.optional(text),
  buttonText: z.optional(short(100)),
  transactionInfo: z.optional(
    z.object({
      actionDescription: z.optional(text),
      action: z.optional(text),
      description: z.optional(text),
    }),
  ),
  senderInfo: z.optional(
    z.object({
      name: z.optional(text),
      url: z.optional(httpUrl),
      imgUrl: z.optional(httpUrl),
      imgSize: z.optional(z.enum(['sm', 'lg'])),
      imgAltText: z.optional(text),
      actionText: z.optional(text),
    }),
  ),
})

const accessToken = nonEmpty(8192)
const recoveryPin = z.optional(short(64))

export const walletCreateSchema: z.ZodMiniType<WalletCreateParams> = z.object({
  accessToken,
  recoveryPin,
})
export const walletConnectSchema: z.ZodMiniType<WalletConnectParams> = z.object({
  address,
  accessToken,
})
export const walletRecoverSchema: z.ZodMiniType<WalletRecoverParams> = z.object({
  address,
  accessToken,
  recoveryPin,
})
export const walletRpcSchema: z.ZodMiniType<WalletRpcParams> = z.object({
  address,
  accessToken,
  request: z.object({ method: nonEmpty(64), params: z.optional(z.unknown()) }),
})

/**
 * The issues of a payload that failed its schema, with zod's English messages (as the server,
 * on full zod, words them). zod/mini installs no messages of its own, so they load here, and
 * only for a payload that failed: a frame's bundle does not carry them before its first screen.
 */
export async function payloadIssues(
  schema: z.ZodMiniType,
  input: unknown,
): Promise<z.core.$ZodIssue[]> {
  const { default: en } = await import('zod/v4/locales/en.js')
  return schema.safeParse(input, { error: en().localeError }).error?.issues ?? []
}
