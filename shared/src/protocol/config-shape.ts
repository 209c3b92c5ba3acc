/**
 * The host's configuration as a shape (shape.ts), not zod: the modal checks it on its way to the
 * first screen, and its landing then carries no validator library. The rules the shapes and the
 * zod/mini schemas of payloads.ts share are here too.
 */

import { LOGIN_METHODS } from '../constants.ts'
import type { HostTexts } from '../i18n/messages.ts'
import * as s from '../shape.ts'
import type { Color, HostAppConfig, ThemeSetting } from '../types.ts'

// Rules the shapes below and the zod schemas of payloads.ts share.

export const COLOR_PATTERN = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/
/** An http(s) URL of at most 2048 characters: links the modal renders. */
export const HTTP_URL_RULES = {
  max: 2048,
  refine: [(v: string) => /^https?:\/\//i.test(v), 'must be an http(s) URL'],
} satisfies s.StringRules
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
