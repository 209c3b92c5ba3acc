/**
 * Shapes the modal checks only past its landing, in code loaded apart: an OAuth return, the flow
 * the host keeps for it, an unlink target. A module of its own: the modal's landing reaches
 * config-shape.ts, and only code loaded after it these (modal-app/build.ts keeps them out of the
 * landing).
 */
import { OAUTH_PROVIDERS } from '../constants.ts'
import * as s from '../shape.ts'
import type { Hex, OAuthReturnParams, PendingOAuthFlow, UnlinkTarget } from '../types.ts'

export const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/

const sShort = (max: number) => s.string({ max })
const sNonEmpty = (max: number) => s.string({ min: 1, max })

export const oauthReturnParamsSchema: s.Shape<OAuthReturnParams> = s.object({
  code: sNonEmpty(4096),
  state: sNonEmpty(512),
  provider: s.oneOf(OAUTH_PROVIDERS),
  token: s.optional(sShort(4096)),
  connector: s.optional(sShort(128)),
  walletClient: s.optional(sShort(128)),
})

export const pendingOAuthFlowSchema: s.Shape<PendingOAuthFlow> = s.object({
  state: sNonEmpty(512),
  provider: s.oneOf(OAUTH_PROVIDERS),
  intent: s.oneOf(['login', 'link']),
  secret: s.string({ pattern: /^[A-Za-z0-9_-]{43}$/ }),
})

export const unlinkTargetSchema: s.Shape<UnlinkTarget> = s.union<UnlinkTarget>([
  s.object({ type: s.literal('email'), address: sShort(320) }),
  s.object({ type: s.literal('phone'), number: sShort(32) }),
  s.object({ type: s.literal('wallet'), address: s.string<Hex>({ pattern: ADDRESS_PATTERN }) }),
  s.object({
    type: s.oneOf([
      'google_oauth',
      'twitter_oauth',
      'discord_oauth',
      'github_oauth',
      'apple_oauth',
    ]),
    subject: sNonEmpty(256),
  }),
])
