/** Every number and default of the product, each named once (docs/behaviour.md cites them). */

export const SDK_VERSION = '0.1.0'
export const CLIENT_NAME = `latch-js:${SDK_VERSION}`

// Timeouts
export const API_TIMEOUT_MS = 10_000
/** How long the host SDK waits for the modal frame's penpal handshake. */
export const MODAL_CONNECT_TIMEOUT_MS = 20_000
export const WALLET_REQUEST_TIMEOUT_MS = 120_000
/** How long the modal waits for the wallet frame to load and shake hands. */
export const WALLET_FRAME_CONNECT_TIMEOUT_MS = 15_000
/**
 * How long the modal waits for one call of the wallet frame: creating with a
 * passcode is Argon2id (up to ~1 s) and three API round trips of at most API_TIMEOUT_MS each.
 */
export const WALLET_FRAME_CALL_TIMEOUT_MS = 60_000
export const TOKEN_EXPIRY_MARGIN_MS = 30_000
export const REFRESH_TOKEN_COOKIE_DAYS = 30
export const REFRESH_TOKEN_MAX_AGE_S = REFRESH_TOKEN_COOKIE_DAYS * 24 * 60 * 60

// Lengths
export const VERIFICATION_CODE_LENGTH = 6
export const PASSCODE_LENGTH = 6
export const PASSCODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
export const APP_ID_LENGTH = 25

// Flow limits and delays
export const WALLET_CONNECT_RETRIES = 2
export const SUCCESS_CLOSE_DELAY_MS = 1400
export const SUCCESS_CLOSE_BEFORE_WALLET_CREATION_MS = 500
/** Non-numeric code input: the boxes are cleared after this delay. */
export const CODE_ERROR_CLEAR_DELAY_MS = 1400
export const WALLET_CREATED_SCREEN_MS = 4500
export const CREATED_SCREEN_DELAY_AFTER_PASSCODE_MS = 350
export const PHANTOM_STILL_HERE_DELAY_MS = 1000
export const INJECTED_WALLET_WAIT_MS = 3000
export const KEY_EXPORT_MIN_DISPLAY_MS = 1000
export const GENERATED_LABEL_MS = 1000
export const COPIED_LABEL_MS = 1500

// Modal geometry
export const MODAL_WIDTH_PX = 360
export const MODAL_FULL_HEIGHT_PX = 620
export const MODAL_MEDIUM_MIN_HEIGHT_PX = 480
export const MOBILE_BREAKPOINT_PX = 440
export const SIGN_MESSAGE_MAX_HEIGHT_PX = 310

// Colours and appearance defaults
export const DEFAULT_THEME = 'light'
export const DEFAULT_ACCENT_COLOR = '#676FFF'
export const SUCCESS_COLOR = '#51BA81'
export const ERROR_COLOR = '#EC6351'
export const DARK_BACKGROUND_COLOR = '#1E1E1D'
export const LIGHT_BACKGROUND_COLOR = '#FFFFFF'
export const DEFAULT_CREATE_ON_LOGIN = 'off'
export const DEFAULT_SHOW_WALLET_LOGIN_FIRST = true
export const DEFAULT_RENDER_IN_DIALOG = true

// Displayed amounts
export const FIAT_DECIMALS = 2
export const FIAT_MINIMUM_TEXT = '< USD $0.01'
export const ETH_MAX_DECIMALS = 8

// QR codes
export const QR_ERROR_CORRECTION = 'H'
export const QR_DEFAULT_SIZE = 160

// Chains: Ethereum mainnet, the least surprising default.
export const DEFAULT_CHAIN_ID = 1

/** Server defaults: e-mail and wallet login on; SMS, social and passkeys off. */
export const SERVER_DEFAULT_LOGIN_METHODS = {
  emailAuth: true,
  walletAuth: true,
  smsAuth: false,
  googleOAuth: false,
  twitterOAuth: false,
  discordOAuth: false,
  githubOAuth: false,
  appleOAuth: false,
  passkeyAuth: false,
} as const

export const ANALYTICS_EVENTS = [
  'modal_open',
  'modal_closed',
  'sdk_initialize',
  'embedded_wallet_creation_started',
  'embedded_wallet_creation_completed',
  'recovery_started',
  'recovery_completed',
  'sign_message_started',
  'sign_message_completed',
] as const
export type AnalyticsEventName = (typeof ANALYTICS_EVENTS)[number]

export const OAUTH_PROVIDERS = ['google', 'twitter', 'discord', 'github', 'apple'] as const
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number]

/** How each provider is named to a person. */
export const OAUTH_PROVIDER_NAMES: Record<OAuthProvider, string> = {
  google: 'Google',
  twitter: 'Twitter',
  discord: 'Discord',
  github: 'GitHub',
  apple: 'Apple',
}

/**
 * The events a webhook endpoint can subscribe to: the server sends them, the Node SDK's
 * verifier types them.
 */
export const WEBHOOK_EVENT_TYPES = [
  'user.created',
  'user.authenticated',
  'user.linked_account',
  'user.unlinked_account',
  'user.deleted',
  'wallet.created',
  'wallet.recovered',
  'wallet.recovery_failed',
  'wallet.batch_sponsored',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

export const LOGIN_METHODS = [
  'wallet',
  'email',
  'sms',
  'google',
  'twitter',
  'discord',
  'github',
  'apple',
  'passkey',
] as const
export type LoginMethod = (typeof LOGIN_METHODS)[number]

/** Each login method's flag in the server's app configuration (`ServerAppConfig`). */
export const LOGIN_METHOD_FLAGS = {
  wallet: 'walletAuth',
  email: 'emailAuth',
  sms: 'smsAuth',
  google: 'googleOAuth',
  twitter: 'twitterOAuth',
  discord: 'discordOAuth',
  github: 'githubOAuth',
  apple: 'appleOAuth',
  passkey: 'passkeyAuth',
} as const satisfies Record<LoginMethod, keyof typeof SERVER_DEFAULT_LOGIN_METHODS>
export type LoginMethodFlag = (typeof LOGIN_METHOD_FLAGS)[LoginMethod]

/** The server configuration's method flags, each set by `on`. */
export function loginMethodFlags(
  on: (method: LoginMethod) => boolean,
): Record<LoginMethodFlag, boolean> {
  return Object.fromEntries(LOGIN_METHODS.map((m) => [LOGIN_METHOD_FLAGS[m], on(m)])) as Record<
    LoginMethodFlag,
    boolean
  >
}

/**
 * A comma-separated list of login methods, as an operator types it (`--login-methods
 * email,google`): the known names in their order, and the names Latch does not know.
 */
export function splitLoginMethods(text: string): { methods: LoginMethod[]; unknown: string[] } {
  const names = text
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean)
  const known = (m: string): m is LoginMethod => (LOGIN_METHODS as readonly string[]).includes(m)
  return { methods: names.filter(known), unknown: names.filter((m) => !known(m)) }
}

/** The provider's own in-app wallet client name. */
export const LATCH_WALLET_CLIENT = 'latch'

/** EIP-6963: how the host SDK's provider presents itself to wallet-selection libraries. */
export const ANNOUNCED_NAME = 'Latch'
export const ANNOUNCED_RDNS = 'dev.latch.wallet'
/** A 96×96 rounded square with a latch, as an SVG data URI (EIP-6963 asks for a square image). */
export const ANNOUNCED_ICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 96 96'%3E%3Crect width='96' height='96' rx='20' fill='%235F66EB'/%3E%3Cpath d='M30 44V34a18 18 0 0 1 36 0v10' fill='none' stroke='%23fff' stroke-width='8'/%3E%3Crect x='22' y='44' width='52' height='34' rx='6' fill='%23fff'/%3E%3C/svg%3E"

/**
 * The message of the 401 `invalid_refresh_token` a refresh or fork without the refresh cookie
 * gets: the modal tells by it a cookie the browser never sent from one the server refused.
 */
export const NO_REFRESH_COOKIE_MESSAGE = 'No refresh token: the session cookie was not sent'
