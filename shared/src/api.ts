/** The HTTP API: request bodies as zod schemas, answers as types. */
import { z } from 'zod'
import { LOCALES } from './i18n/locales.ts'
import { analyticsEventSchema, oauthProviderSchema } from './payloads.ts'
import type { RecoveryMethod, User, WalletAccount } from './types.ts'

export const API_PREFIX = '/api/v1'

/** The two channels a sign-in code is sent by. */
export type CodeChannel = 'email' | 'sms'
/** Where each channel's code routes (init, authenticate, link, unlink) live under API_PREFIX. */
export const CODE_ROUTE_PATHS = {
  email: '/passwordless',
  sms: '/passwordless_sms',
} as const satisfies Record<CodeChannel, string>
/** Largest request body the API reads. */
export const MAX_BODY_BYTES = 64 * 1024

const refreshToken = z.string().min(1).max(512)
const email = z.string().min(1).max(320)
const phoneNumber = z.string().min(1).max(32)
const code = z.string().min(1).max(32)
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address')

export const refreshBody = z.object({ refresh_token: refreshToken })
/** The visitor's language, one of the shipped locales: the code e-mail or SMS is in it. */
const locale = z.enum(LOCALES).optional()
export const emailInitBody = z.object({ email, locale })
export const emailCodeBody = z.object({ email, code })
export const emailUnlinkBody = z.object({ address: email })
export const smsInitBody = z.object({ phoneNumber, locale })
export const smsCodeBody = z.object({ phoneNumber, code })
export const smsUnlinkBody = z.object({ phoneNumber })
export const siweInitBody = z.object({ address })
export const siweAuthenticateBody = z.object({
  message: z.string().min(1).max(4096),
  /**
   * Hex; a contract wallet's EIP-6492 signature carries its factory's deployment call and, for
   * passkey wallets, WebAuthn data: kilobytes, hence the room.
   */
  signature: z
    .string()
    .regex(/^0x[0-9a-fA-F]+$/)
    .max(32_768),
  chainId: z.union([z.string().max(64), z.number().int().positive()]),
  walletClientType: z.string().max(64),
  connectorType: z.string().max(64),
})
export const siweUnlinkBody = z.object({ address })
/**
 * The statement of every Sign-In with Ethereum message: the modal writes it and the server
 * refuses a message without it, so the visitor reads in their wallet that signing is free.
 */
export const SIWE_STATEMENT =
  'Sign this message to prove you own this wallet and sign in. It sends no transaction and costs no fees.'
/**
 * Optional header of /siwe/init: base64url SHA-256 of 32 random bytes the asking browser keeps.
 * A nonce issued with it is used only by a request carrying the secret (SIWE_SECRET_HEADER).
 */
export const SIWE_HASH_HEADER = 'latch-siwe-hash'
/** Header of /siwe/authenticate and /siwe/link: the secret whose hash went to /siwe/init. */
export const SIWE_SECRET_HEADER = 'latch-siwe-secret'
/** 32 random bytes in base64url: the browser secret of an OAuth flow, and its SHA-256. */
const base64url32 = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be 32 bytes in base64url')
export const oauthInitBody = z.object({
  provider: oauthProviderSchema,
  redirect_to: z.string().url().max(2048),
  /** SHA-256 of the secret the starting browser keeps; only that browser can finish the flow. */
  browser_hash: base64url32,
})
export const oauthAuthenticateBody = z.object({
  authorization_code: z.string().min(1).max(4096),
  state_code: z.string().min(1).max(512),
  /** The secret whose hash went to /oauth/init. */
  browser_secret: base64url32,
})
/** The browser binding of a passkey ceremony, as OAuth's: the hash at the start, the secret at the end. */
export const passkeyOptionsBody = z.object({ browser_hash: base64url32 })
/**
 * A WebAuthn credential as the browser's `PublicKeyCredential.toJSON()` gives it (registration
 * or assertion); the server library reads the fields, this only bounds the size.
 */
const webauthnCredential = z
  .object({
    id: z.string().min(1).max(1024),
    rawId: z.string().min(1).max(1024),
    type: z.literal('public-key'),
    response: z.record(z.string(), z.unknown()),
    authenticatorAttachment: z.string().max(32).optional(),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  })
  .passthrough()
export const passkeyFinishBody = z.object({
  credential: webauthnCredential,
  /** The secret whose hash went to the options request. */
  browser_secret: base64url32,
  /** A registration's name for the new passkey (default: "Passkey"). */
  name: z.string().trim().min(1).max(64).optional(),
})
const credentialId = z.string().regex(/^[A-Za-z0-9_-]{1,1024}$/, 'must be base64url')
export const passkeyRenameBody = z.object({
  credential_id: credentialId,
  name: z.string().trim().min(1).max(64),
})
export const passkeyUnlinkBody = z.object({ credential_id: credentialId })
export const oauthUnlinkBody = z.object({
  provider: oauthProviderSchema,
  subject: z.string().min(1).max(256),
})
export const analyticsEventBody = z.object({
  event_name: analyticsEventSchema,
  client_id: z.string().min(1).max(128),
  payload: z.record(z.string(), z.unknown()).optional(),
})
export const tokenPriceQuery = z.object({ chainId: z.coerce.number().int().positive() })

/**
 * What every authenticate call answers. The refresh token is not in it: it travels only in the
 * API origin's `HttpOnly` refresh cookie the same answer sets, which no script can read
 * (server/src/sessions/refresh-cookie.ts).
 */
export interface AuthResponse {
  user: User
  token: string
  is_new_user: boolean
}

/**
 * What every link call (/passwordless/link, /passwordless_sms/link, /oauth/link) answers: the
 * updated user, bare.
 */
export type LinkResponse = User

/** What every unlink call answers: the updated user, bare. */
export type UnlinkResponse = User

/** What a refresh (and a fork redemption) answers; the rotated refresh token is in the cookie. */
export interface RefreshResponse {
  user: User
  token: string
}

/** What the signed-in user's read answers (`POST /sessions/user`): the user as stored now. */
export interface SessionUserResponse {
  user: User
}

/** What a fork answers; this session's rotated refresh token is in the cookie. */
export interface ForkResponse {
  token: string
  new_session_refresh_token: string
}

export interface SiweInitResponse {
  nonce: string
}

export interface OAuthInitResponse {
  url: string
}

export interface TokenPriceResponse {
  usd: number
}

// The in-app wallet's share store (server/src/wallets). Bytes travel as lowercase hex.
/** Lowercase hex of n bytes; marked free of side effects so bundles that import api.ts for its types and constants drop the schemas (and full zod with them). */
const hexBytes = /* @__NO_SIDE_EFFECTS__ */ (n: number) =>
  z.string().regex(new RegExp(`^[0-9a-f]{${n * 2}}$`), `must be ${n} bytes in lowercase hex`)
/** A Shamir share of the 32-byte key: 32 bytes and its x coordinate. */
const walletShare = hexBytes(33)
/** A ristretto255 point (RFC 9497 OPRF element). */
const oprfElement = hexBytes(32)
/** AES-256-GCM of a share: 12-byte IV, 33-byte share, 16-byte tag. */
const sealedShare = hexBytes(12 + 33 + 16)
export const walletAddressBody = z.object({ address })
/** A WebAuthn credential id in base64url. */
const walletCredentialId = /* @__NO_SIDE_EFFECTS__ */ () =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,1366}$/, 'must be a credential id in base64url (16 to 1023 bytes)')
/**
 * A share sealed in the wallet frame under a key derived from a passkey's PRF output
 * (wallet-frame/src/passkey.ts): the credential's id, the PRF salt, the sealing.
 */
export const walletPasskeyAddBody = z.object({
  address,
  credentialId: walletCredentialId(),
  salt: hexBytes(32),
  ciphertext: sealedShare,
})
export const walletPasscodeBeginBody = z.object({ blinded: oprfElement })
export const walletCreateBody = z.object({
  address,
  /** CAIP-2 chain id, 'eip155:1' when absent. */
  chainId: z
    .string()
    .regex(/^eip155:[1-9][0-9]{0,19}$/, 'must be a CAIP-2 eip155 chain id')
    .optional(),
  authShare: walletShare,
  recovery: z.discriminatedUnion('method', [
    z.object({ method: z.literal('latch'), key: hexBytes(32), ciphertext: sealedShare }),
    z.object({
      method: z.literal('user-passcode'),
      salt: hexBytes(16),
      ciphertext: sealedShare,
      verifier: hexBytes(32),
      /** What /wallets/passcode/begin answered: names the OPRF key the passcode was bound to. */
      ticket: z.string().min(1).max(512),
    }),
    z.object({
      method: z.literal('passkey'),
      credentialId: walletCredentialId(),
      salt: hexBytes(32),
      ciphertext: sealedShare,
    }),
  ]),
  /** The new key's proof of possession (wallet-proof.ts): the challenge and the signature. */
  proof: z.object({
    challenge: z.string().min(1).max(1024),
    signature: z
      .string()
      .regex(/^0x[0-9a-f]{130}$/, 'must be a 65-byte signature in 0x lowercase hex'),
  }),
})
export const walletEvaluateBody = z.object({ address, blinded: oprfElement })
export const walletVerifyBody = z.object({ address, verifier: hexBytes(32) })

export interface WalletChallengeResponse {
  challenge: string
}

export interface WalletPasscodeBeginResponse {
  evaluated: string
  ticket: string
}
export interface WalletCreateResponse {
  user: User
  wallet: WalletAccount
}
/** How the owner's wallet is recovered; the salt of the passcode KDF for 'user-passcode'. */
export interface WalletInfoResponse {
  recoveryMethod: RecoveryMethod
  salt: string | null
}
export interface WalletSharesResponse {
  authShare: string
  /** On recovery only: the sealed recovery share, and its key for method 'latch'. */
  recovery?: { ciphertext: string; key?: string }
}
/** What the frame needs to run a passkey ceremony for the signed-in user's wallet. */
export interface WalletPasskeyOptionsResponse {
  /** The WebAuthn RP ID: the API's registrable domain, or LATCH_PASSKEY_RP_ID. */
  rpId: string
  rpName: string
  /** The user the sealing is bound to (its associated data). */
  userId: string
}
export interface WalletPasskeySealing {
  credentialId: string
  salt: string
  ciphertext: string
}
/** The auth share and every passkey sealing of the wallet's share (each useless without its passkey). */
export interface WalletPasskeyRecoverResponse {
  authShare: string
  rpId: string
  userId: string
  passkeys: WalletPasskeySealing[]
}
export interface WalletEvaluateResponse {
  evaluated: string
}
