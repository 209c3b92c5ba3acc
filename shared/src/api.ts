/** The HTTP API of SPEC section 7: request bodies as zod schemas, answers as types. */
import { z } from 'zod'
import { analyticsEventSchema, oauthProviderSchema } from './protocol.ts'
import type { User } from './types.ts'

export const API_PREFIX = '/api/v1'
/** Largest request body the API reads. */
export const MAX_BODY_BYTES = 64 * 1024

const refreshToken = z.string().min(1).max(512)
const email = z.string().min(1).max(320)
const phoneNumber = z.string().min(1).max(32)
const code = z.string().min(1).max(32)
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address')

export const refreshBody = z.object({ refresh_token: refreshToken })
export const emailInitBody = z.object({ email })
export const emailCodeBody = z.object({ email, code })
export const emailUnlinkBody = z.object({ address: email })
export const smsInitBody = z.object({ phoneNumber })
export const smsCodeBody = z.object({ phoneNumber, code })
export const smsUnlinkBody = z.object({ phoneNumber })
export const siweInitBody = z.object({ address })
export const siweAuthenticateBody = z.object({
  message: z.string().min(1).max(4096),
  signature: z
    .string()
    .regex(/^0x[0-9a-fA-F]+$/)
    .max(4096),
  chainId: z.union([z.string().max(64), z.number().int().positive()]),
  walletClientType: z.string().max(64),
  connectorType: z.string().max(64),
})
export const siweUnlinkBody = z.object({ address })
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

/** What every authenticate call answers. */
export interface AuthResponse {
  user: User
  token: string
  refresh_token: string
  is_new_user: boolean
}

export interface RefreshResponse {
  user: User
  token: string
  refresh_token: string
}

export interface ForkResponse {
  token: string
  refresh_token: string
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

/** Claims of a Latch access token (ES256 JWT): aud is the app id, sub the user id. */
export interface AccessTokenClaims {
  iss: string
  aud: string
  sub: string
  sid: string
  iat: number
  exp: number
}
