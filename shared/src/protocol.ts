/**
 * The contracts between the three origins: the penpal methods each side exposes, the wallet
 * frame's message names, the request headers, and zod schemas for every payload that
 * crosses a frame boundary.
 */
import { z } from 'zod'
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

/** What `init` answers: the merged configuration, its warnings, and the current user. */
export interface InitResult {
  app: ServerAppConfig
  warnings: string[]
  user: User | null
}

/** Methods the modal exposes to the host SDK. */
export interface ModalMethods {
  init(config: HostAppConfig, returnParams: OAuthReturnParams | null): Promise<InitResult>
  login(): Promise<LoginResult>
  link(kind: LinkKind): Promise<User>
  unlink(account: UnlinkTarget): Promise<User>
  logout(): Promise<void>
  getUser(): Promise<User | null>
  getAccessToken(): Promise<string | null>
  /** The host closed the dialog (Escape, backdrop): the pending flow ends. */
  close(): Promise<void>
  createWallet(): Promise<WalletAccount>
  signMessage(message: string, options?: SignMessageUIOptions): Promise<Hex>
  sendTransaction(
    request: TransactionRequest,
    options?: TransactionUIOptions,
  ): Promise<TransactionReceipt>
  exportWallet(): Promise<void>
  forkSession(): Promise<string>
}

/** Events the modal reports to the host. */
export type HostEventName = 'login' | 'logout' | 'user' | 'warning' | AnalyticsEventName

export interface InjectedWalletInfo {
  id: string
  name: string
  icon: string
  rdns: string
}

/** Methods the host SDK exposes to the modal. */
export interface HostMethods {
  setOpen(open: boolean): Promise<void>
  resize(height: number): Promise<void>
  emit(event: HostEventName, payload: unknown): Promise<void>
  /** Top-level navigation, only ever to an authorization URL the API returned. */
  navigate(url: string): Promise<void>
  /**
   * The host page's current URL (`location.href`): where an OAuth provider sends the visitor
   * back (`redirect_to`). The modal strips any latch_ return parameters from it.
   */
  pageUrl(): Promise<string>
  wallets(): Promise<InjectedWalletInfo[]>
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

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/) as unknown as z.ZodType<Hex>
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/) as unknown as z.ZodType<Hex>
const color = z.string().regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/) as unknown as z.ZodType<Color>
const httpUrl = z
  .string()
  .max(2048)
  .refine((v) => /^https?:\/\//i.test(v), 'must be an http(s) URL')
const text = z.string().max(1000)

export const oauthProviderSchema = z.enum(OAUTH_PROVIDERS)
export const loginMethodSchema = z.enum(LOGIN_METHODS)
export const analyticsEventSchema = z.enum(ANALYTICS_EVENTS)

export const hostAppConfigSchema: z.ZodType<HostAppConfig> = z.object({
  id: z.string().optional(),
  name: text.optional(),
  allowlistConfig: z
    .object({
      errorTitle: text.nullish(),
      errorDetail: text.nullish(),
      errorCtaText: text.nullish(),
      errorCtaLink: httpUrl.nullish(),
    })
    .optional(),
  appearance: z
    .object({
      logo: httpUrl.optional(),
      theme: z.union([z.literal('light'), z.literal('dark'), color]).optional(),
      accentColor: color.optional(),
      showWalletLoginFirst: z.boolean().optional(),
      palette: z
        .object({
          background: z.string().max(32).optional(),
          foreground: z.string().max(32).optional(),
          accent: z.string().max(32).optional(),
          success: z.string().max(32).optional(),
          error: z.string().max(32).optional(),
        })
        .optional(),
    })
    .optional(),
  loginMethods: z
    .array(loginMethodSchema)
    .max(LOGIN_METHODS.length * 2)
    .optional(),
  legal: z
    .object({
      termsAndConditionsUrl: httpUrl.optional(),
      privacyPolicyUrl: httpUrl.optional(),
    })
    .optional(),
  walletConnectCloudProjectId: z.string().max(128).optional(),
  embeddedWallets: z
    .object({
      createOnLogin: z.enum(['off', 'users-without-wallets']).optional(),
      requireUserPasswordOnCreate: z.boolean().optional(),
    })
    .optional(),
  render: z
    .object({
      inDialog: z.boolean().optional(),
      inParentNodeId: z.string().max(256).nullish(),
    })
    .optional(),
})

export const oauthReturnParamsSchema: z.ZodType<OAuthReturnParams> = z.object({
  code: z.string().min(1).max(4096),
  state: z.string().min(1).max(512),
  provider: oauthProviderSchema,
  token: z.string().max(4096).optional(),
  connector: z.string().max(128).optional(),
  walletClient: z.string().max(128).optional(),
})

export const linkKindSchema: z.ZodType<LinkKind> = z.union([
  z.enum(['email', 'phone', 'wallet']),
  oauthProviderSchema,
])

export const unlinkTargetSchema: z.ZodType<UnlinkTarget> = z.union([
  z.object({ type: z.literal('email'), address: z.string().max(320) }),
  z.object({ type: z.literal('phone'), number: z.string().max(32) }),
  z.object({ type: z.literal('wallet'), address }),
  z.object({
    type: z.enum(['google_oauth', 'twitter_oauth', 'discord_oauth', 'github_oauth', 'apple_oauth']),
    subject: z.string().min(1).max(256),
  }),
])

export const signMessageOptionsSchema: z.ZodType<SignMessageUIOptions> = z.object({
  title: text.optional(),
  description: text.optional(),
  buttonText: z.string().max(100).optional(),
})

const quantity = z.custom<TransactionRequest['value']>(isQuantity, {
  message: 'must be a number, bigint or hex string',
})

export const transactionRequestSchema: z.ZodType<TransactionRequest> = z.object({
  to: address.optional(),
  from: address.optional(),
  data: hex.optional(),
  value: quantity.optional(),
  gasLimit: quantity.optional(),
  gasPrice: quantity.optional(),
  maxPriorityFeePerGas: quantity.optional(),
  maxFeePerGas: quantity.optional(),
  nonce: z.number().int().nonnegative().optional(),
  type: z.number().int().nonnegative().optional(),
  chainId: z.number().int().positive().optional(),
})

export const transactionUIOptionsSchema: z.ZodType<TransactionUIOptions> = z.object({
  modalTitle: text.optional(),
  title: text.optional(),
  description: text.optional(),
  buttonText: z.string().max(100).optional(),
  transactionInfo: z
    .object({
      actionDescription: text.optional(),
      action: text.optional(),
      description: text.optional(),
    })
    .optional(),
  senderInfo: z
    .object({
      name: text.optional(),
      url: httpUrl.optional(),
      imgUrl: httpUrl.optional(),
      imgSize: z.enum(['sm', 'lg']).optional(),
      imgAltText: text.optional(),
      actionText: text.optional(),
    })
    .optional(),
})

const accessToken = z.string().min(1).max(8192)
const recoveryPin = z.string().max(64)

export const walletCreateSchema: z.ZodType<WalletCreateParams> = z.object({
  accessToken,
  recoveryPin: recoveryPin.optional(),
})
export const walletConnectSchema: z.ZodType<WalletConnectParams> = z.object({
  address,
  accessToken,
})
export const walletRecoverSchema: z.ZodType<WalletRecoverParams> = z.object({
  address,
  accessToken,
  recoveryPin: recoveryPin.optional(),
})
export const walletRpcSchema: z.ZodType<WalletRpcParams> = z.object({
  address,
  accessToken,
  request: z.object({ method: z.string().min(1).max(64), params: z.unknown().optional() }),
})
