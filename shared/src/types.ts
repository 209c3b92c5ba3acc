import type { LoginMethod, OAuthProvider } from './constants.ts'
import type { HostTexts } from './i18n/messages.ts'

// The contract's types, free of zod, for what bundles them alone (the Node SDK, whose published
// declarations must need nothing its consumer lacks); and, for the same packages, the error base.
export type { LoginMethod, OAuthProvider, WebhookEventType } from './constants.ts'
export { BaseError, type BaseErrorOptions } from './errors/base-error.ts'

/** A 0x-prefixed hex string. */
export type Hex = `0x${string}`

/** ISO 8601 timestamp, as every date crosses JSON. */
export type Timestamp = string

export type RecoveryMethod = 'latch' | 'user-passcode' | 'passkey'

interface AccountBase {
  verifiedAt: Timestamp
}

export interface WalletAccount extends AccountBase {
  type: 'wallet'
  address: Hex
  chainType: 'ethereum'
  /** CAIP-2 chain id the wallet signed in with, e.g. 'eip155:1'. */
  chainId: string
  /** 'latch' for the in-app wallet, 'unknown' for any external wallet. */
  walletClient: 'latch' | 'unknown'
  walletClientType: string
  connectorType: string
  /** Set for the in-app wallet only. */
  recoveryMethod: RecoveryMethod | null
}

export interface EmailAccount extends AccountBase {
  type: 'email'
  address: string
}

export interface PhoneAccount extends AccountBase {
  type: 'phone'
  number: string
}

export interface GoogleOAuthAccount extends AccountBase {
  type: 'google_oauth'
  subject: string
  email: string | null
  name: string | null
}

export interface TwitterOAuthAccount extends AccountBase {
  type: 'twitter_oauth'
  subject: string
  username: string | null
  name: string | null
}

export interface DiscordOAuthAccount extends AccountBase {
  type: 'discord_oauth'
  subject: string
  username: string | null
  email: string | null
}

export interface GithubOAuthAccount extends AccountBase {
  type: 'github_oauth'
  subject: string
  username: string | null
  name: string | null
  email: string | null
}

export interface AppleOAuthAccount extends AccountBase {
  type: 'apple_oauth'
  subject: string
  email: string | null
}

export type OAuthAccount =
  | GoogleOAuthAccount
  | TwitterOAuthAccount
  | DiscordOAuthAccount
  | GithubOAuthAccount
  | AppleOAuthAccount

/** A WebAuthn credential (a passkey) the user signs in with; a user may hold several. */
export interface PasskeyAccount extends AccountBase {
  type: 'passkey'
  /** The credential id, base64url. */
  credentialId: string
  /** The name the user gave it (or the default one), shown where passkeys are managed. */
  name: string
}

export type LinkedAccount =
  | WalletAccount
  | EmailAccount
  | PhoneAccount
  | OAuthAccount
  | PasskeyAccount
export type LinkedAccountType = LinkedAccount['type']

export interface User {
  id: string
  createdAt: Timestamp
  linkedAccounts: LinkedAccount[]
  email?: EmailAccount
  phone?: PhoneAccount
  /** The active wallet: the in-app wallet when there is one, else the first linked wallet. */
  wallet?: WalletAccount
  google?: GoogleOAuthAccount
  twitter?: TwitterOAuthAccount
  discord?: DiscordOAuthAccount
  github?: GithubOAuthAccount
  apple?: AppleOAuthAccount
}

/** A CSS hex colour, e.g. '#676FFF'. */
export type Color = `#${string}`

export type ThemeSetting = 'light' | 'dark' | Color

export interface AllowlistConfig {
  errorTitle?: string | null
  errorDetail?: string | null
  errorCtaText?: string | null
  errorCtaLink?: string | null
}

export interface Palette {
  background?: string
  foreground?: string
  accent?: string
  success?: string
  error?: string
}

export type HostCreateOnLogin = 'off' | 'users-without-wallets'
export type ServerCreateOnLogin = 'off' | 'all-users' | 'users-without-wallets'

/** App configuration as supplied by the host page. */
export interface HostAppConfig {
  id?: string
  name?: string
  allowlistConfig?: AllowlistConfig
  appearance?: {
    logo?: string
    theme?: ThemeSetting
    accentColor?: Color
    showWalletLoginFirst?: boolean
    palette?: Palette
  }
  loginMethods?: LoginMethod[]
  legal?: {
    termsAndConditionsUrl?: string
    privacyPolicyUrl?: string
  }
  walletConnectCloudProjectId?: string
  embeddedWallets?: {
    createOnLogin?: HostCreateOnLogin
    requireUserPasswordOnCreate?: boolean
  }
  render?: {
    inDialog?: boolean
    inParentNodeId?: string | null
  }
  /**
   * The visitor's language, a BCP 47 tag ('ja', 'pt-BR'); without it `navigator.languages`
   * decides. One of the shipped locales or English.
   */
  locale?: string
  /** Any text of the modal, per locale and message key: `{ en: { title: 'Welcome' } }`. */
  texts?: HostTexts
}

/** App configuration as returned by GET /api/v1/apps/{appId}. */
export interface ServerAppConfig {
  id: string
  name: string
  /** PEM (SPKI) of the key that currently signs access tokens. */
  verificationKey: string
  logoUrl: string | null
  accentColor: string | null
  theme: ThemeSetting | null
  showWalletLoginFirst: boolean
  allowlistEnabled: boolean
  allowlistConfig: Required<AllowlistConfig>
  emailAuth: boolean
  smsAuth: boolean
  walletAuth: boolean
  googleOAuth: boolean
  twitterOAuth: boolean
  discordOAuth: boolean
  githubOAuth: boolean
  appleOAuth: boolean
  passkeyAuth: boolean
  termsAndConditionsUrl: string | null
  privacyPolicyUrl: string | null
  embeddedWalletConfig: {
    createOnLogin: ServerCreateOnLogin
    requireUserPasswordOnCreate: boolean
  }
  customApiUrl: string | null
  walletConnectCloudProjectId: string | null
  /** Host page origins the modal may talk to. */
  allowedOrigins: string[]
  /**
   * The chain ids the app's wallet may use (`apps update --chains`; today's networks,
   * DEFAULT_CHAIN_IDS, unless the operator chose): the modal, the provider and the chain proxy
   * answer 'Unsupported chainId' for any other.
   */
  chains: number[]
  /**
   * The countries SMS codes go to (`apps update --sms-countries`, two-letter codes, US by
   * default): the phone field offers these, the first chosen, and the server refuses any other.
   */
  smsCountries: string[]
  createdAt: Timestamp
  updatedAt: Timestamp
}

export interface SessionTokens {
  accessToken: string
  refreshToken: string
  forkedSessionToken?: string
}

export interface WalletConnectionHistoryEntry {
  address: Hex
  connectorType: string
  walletClientType: string
  connectedAt: Timestamp
}

/** A number, a bigint or a hex string. */
export type Quantity = number | bigint | Hex

export interface TransactionRequest {
  to?: Hex
  from?: Hex
  data?: Hex
  value?: Quantity
  gasLimit?: Quantity
  gasPrice?: Quantity
  maxPriorityFeePerGas?: Quantity
  maxFeePerGas?: Quantity
  nonce?: number
  /** Transaction family: 0 legacy, 1 access list, 2 EIP-1559. */
  type?: number
  chainId?: number
}

export interface Log {
  address: Hex
  topics: Hex[]
  data: Hex
  blockNumber: number
  transactionHash: Hex
  transactionIndex: number
  blockHash: Hex
  logIndex: number
  removed: boolean
}

export interface TransactionReceipt {
  to: Hex | null
  from: Hex
  contractAddress: Hex | null
  transactionIndex: number
  root?: Hex
  logsBloom: Hex
  blockHash: Hex
  transactionHash: Hex
  logs: Log[]
  blockNumber: number
  confirmations: number
  byzantium: boolean
  type: number
  status?: number
  gasUsed: string
  cumulativeGasUsed: string
  effectiveGasPrice: string
}

export interface TransactionUIOptions {
  modalTitle?: string
  title?: string
  description?: string
  buttonText?: string
  transactionInfo?: {
    actionDescription?: string
    action?: string
    description?: string
  }
  senderInfo?: {
    name?: string
    url?: string
    imgUrl?: string
    imgSize?: 'sm' | 'lg'
    imgAltText?: string
    actionText?: string
  }
}

export interface SignMessageUIOptions {
  title?: string
  description?: string
  buttonText?: string
}

/** Query parameters on the host URL when an OAuth provider sends the visitor back. */
export interface OAuthReturnParams {
  code: string
  state: string
  provider: OAuthProvider
  token?: string
  connector?: string
  walletClient?: string
}

/** Names of those parameters on the host URL. */
export const OAUTH_RETURN_PARAM_NAMES = {
  code: 'latch_oauth_code',
  state: 'latch_oauth_state',
  provider: 'latch_oauth_provider',
  token: 'latch_token',
  connector: 'latch_connector',
  walletClient: 'latch_wallet_client',
} as const satisfies Record<keyof OAuthReturnParams, string>

/**
 * The name carrying a session fork's token into a wallet app's in-app browser, in the host
 * URL's fragment (withForkToken): the host SDK takes it off the address bar and hands it to the
 * modal's init. In the query string it is refused as leaked.
 */
export const FORK_RETURN_PARAM = 'latch_fork'

/**
 * `pageUrl` with a session fork's token in its fragment (`#latch_fork=…`, after the page's own
 * fragment with `&`): a fragment is never sent in a request, so no server, the host's included,
 * receives or logs the token. The host SDK reads and removes it.
 */
export function withForkToken(pageUrl: string, token: string): string {
  const url = new URL(pageUrl)
  const own = url.hash.replace(/^#/, '')
  url.hash = `${own ? `${own}&` : ''}${FORK_RETURN_PARAM}=${token}`
  return url.href
}

/**
 * An OAuth flow as it leaves for the provider, kept in the host page's sessionStorage by the
 * host SDK (the cross-site modal frame's own storage does not survive there): only a return
 * whose state matches it is handed to the modal, which finishes the flow with its intent and
 * proves with the secret that this browser started it.
 */
export interface PendingOAuthFlow {
  state: string
  provider: OAuthProvider
  /** A sign-in finishes with /oauth/authenticate, a link with /oauth/link. */
  intent: 'login' | 'link'
  /** 32 random bytes (base64url) whose SHA-256 went to /oauth/init. */
  secret: string
}

export interface LoginResult {
  user: User
  isNewUser: boolean
}

/** What `link()` accepts. */
export type LinkKind = 'email' | 'phone' | 'wallet' | 'passkey' | OAuthProvider

/** What `unlink()` accepts: the account to remove, as it appears in linkedAccounts. */
export type UnlinkTarget =
  | { type: 'email'; address: string }
  | { type: 'phone'; number: string }
  | { type: 'wallet'; address: Hex }
  | { type: OAuthAccount['type']; subject: string }

/** Claims of a Latch access token (ES256 JWT): aud is the app id, sub the user id. */
export interface AccessTokenClaims {
  iss: string
  aud: string
  sub: string
  sid: string
  iat: number
  exp: number
}
