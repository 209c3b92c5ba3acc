/**
 * zod/mini schemas of the payloads that cross a frame boundary past the modal's first screen:
 * the signing and transaction options, the wallet frame's messages, and the enums api.ts builds
 * on. zod/mini is tree-shakable (full zod cost the frames ~17 KB gzip more) and its schemas are
 * zod 4 schemas all the same, usable inside full-zod objects as api.ts does. They live apart
 * from protocol/ so that a bundle importing the contracts (the modal's landing) carries none
 * of them: each lands in the chunk of the screen that checks it.
 */
import * as z from 'zod/mini'
import { ANALYTICS_EVENTS, LOGIN_METHODS, OAUTH_PROVIDERS } from './constants.ts'
import { ADDRESS_PATTERN } from './protocol/call-shapes.ts'
import { HTTP_URL_RULES } from './protocol/config-shape.ts'
import type {
  WalletAddPasskeyParams,
  WalletApprovalParams,
  WalletConfirmForkParams,
  WalletConnectParams,
  WalletCreateParams,
  WalletPasskeyOptionsParams,
  WalletRecoverParams,
  WalletRpcParams,
  WalletSendCallsParams,
} from './protocol/modal-wallet.ts'
import { isQuantity } from './transaction-check.ts'
import type {
  Hex,
  LinkKind,
  SignMessageUIOptions,
  TransactionRequest,
  TransactionUIOptions,
} from './types.ts'

const hex = z.string().check(z.regex(/^0x[0-9a-fA-F]*$/)) as unknown as z.ZodMiniType<Hex>
const address = z.string().check(z.regex(ADDRESS_PATTERN)) as unknown as z.ZodMiniType<Hex>
const httpUrl = z
  .string()
  .check(z.maxLength(HTTP_URL_RULES.max), z.refine(...HTTP_URL_RULES.refine))
const text = z.string().check(z.maxLength(1000))
const short = (max: number) => z.string().check(z.maxLength(max))
const nonEmpty = (max: number) => z.string().check(z.minLength(1), z.maxLength(max))

export const oauthProviderSchema = z.enum(OAUTH_PROVIDERS)
export const loginMethodSchema = z.enum(LOGIN_METHODS)
export const analyticsEventSchema = z.enum(ANALYTICS_EVENTS)

export const linkKindSchema: z.ZodMiniType<LinkKind> = z.union([
  z.enum(['email', 'phone', 'wallet', 'passkey']),
  oauthProviderSchema,
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

const recoveryMethod = z.optional(z.literal('passkey'))
const credentialId = z.optional(z.string().check(z.regex(/^[A-Za-z0-9_-]{16,1366}$/)))
export const walletCreateSchema: z.ZodMiniType<WalletCreateParams> = z.object({
  accessToken,
  recoveryPin,
  recoveryMethod,
  credentialId,
})
export const walletConnectSchema: z.ZodMiniType<WalletConnectParams> = z.object({
  address,
  accessToken,
})
export const walletRecoverSchema: z.ZodMiniType<WalletRecoverParams> = z.object({
  address,
  accessToken,
  recoveryPin,
  recoveryMethod,
})
export const walletAddPasskeySchema: z.ZodMiniType<WalletAddPasskeyParams> = z.object({
  address,
  accessToken,
  credentialId,
})
export const walletPasskeyOptionsSchema: z.ZodMiniType<WalletPasskeyOptionsParams> = z.object({
  accessToken,
})
const hexColor = z.string().check(z.regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/))
export const walletApprovalSchema: z.ZodMiniType<WalletApprovalParams> = z.object({
  accessToken,
  kind: z.enum(['fork-show-code', 'fork-enter-code', 'link']),
  locale: z.optional(nonEmpty(16)),
  method: z.optional(
    z.object({
      type: z.enum(['email', 'phone', 'oauth', 'siwe', 'passkey']),
      identifier: nonEmpty(320),
    }),
  ),
  colors: z.optional(
    z.object({
      background: z.optional(hexColor),
      foreground: z.optional(hexColor),
      accent: z.optional(hexColor),
      accentForeground: z.optional(hexColor),
    }),
  ),
})
const callValue = z.string().check(z.regex(/^(0|[1-9][0-9]{0,77}|0x[0-9a-fA-F]{1,64})$/))
export const walletSendCallsSchema: z.ZodMiniType<WalletSendCallsParams> = z.object({
  address,
  accessToken,
  chainId: z.number().check(z.int(), z.positive()),
  calls: z
    .array(
      z.object({
        to: address,
        value: z.optional(callValue),
        data: z.optional(z.string().check(z.regex(/^0x(?:[0-9a-fA-F]{2})*$/), z.maxLength(65_538))),
      }),
    )
    .check(z.minLength(1), z.maxLength(16)),
  // The dapp's own id for the batch (EIP-5792), as the modal lowercased it.
  id: z.optional(z.string().check(z.regex(/^0x[0-9a-f]{1,8192}$/))),
  locale: z.optional(nonEmpty(16)),
  colors: z.optional(
    z.object({
      background: z.optional(hexColor),
      foreground: z.optional(hexColor),
      accent: z.optional(hexColor),
      accentForeground: z.optional(hexColor),
    }),
  ),
})
export const walletConfirmForkSchema: z.ZodMiniType<WalletConfirmForkParams> = z.object({
  accessToken,
  forkToken: nonEmpty(512),
})
export const walletRpcSchema: z.ZodMiniType<WalletRpcParams> = z.object({
  address,
  accessToken,
  request: z.object({ method: nonEmpty(64), params: z.optional(z.unknown()) }),
})
