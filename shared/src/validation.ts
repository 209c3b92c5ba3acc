/**
 * The input rules as pure functions (docs/behaviour.md, "Input rules"); every failure carries
 * its catalogued error, with the message the visitor reads.
 */
import { isSupportedChainId } from './chains.ts'
import {
  APP_ID_LENGTH,
  type LoginMethod,
  OAUTH_PROVIDERS,
  PASSCODE_LENGTH,
  VERIFICATION_CODE_LENGTH,
} from './constants.ts'
import { LatchError } from './errors/latch-error.ts'
import { isWeakPasscode } from './passcode.ts'
import { fail, ok, type Result } from './result.ts'
import type { HostAppConfig } from './types.ts'

export type { Result } from './result.ts'

// A pragmatic address check: one @, no spaces, a dotted domain with a 2+ letter top level.
const EMAIL =
  /^[^\s@"<>()[\]\\,;:]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/

/** Trims and lowercases an e-mail address, or says it is not one. */
export function validateEmail(input: string): Result<string> {
  const value = input.trim().toLowerCase()
  if (value.length > 254 || !EMAIL.test(value)) return fail(LatchError.of('invalid_email'))
  return ok(value)
}

// In its own module so a browser bundle can load the phone metadata only when it needs it.
export { dialCode, validatePhone } from './phone.ts'
// A module of its own: the modal's landing reaches this file, and only its wallet code these.
export { isQuantity, toBigInt, validateTransactionRequest } from './transaction-check.ts'

/** A verification code: trimmed, six digits. */
export function validateCode(input: string): Result<string> {
  const value = input.trim()
  if (/\D/.test(value)) return fail(LatchError.of('code_not_numeric'))
  if (value.length !== VERIFICATION_CODE_LENGTH) return fail(LatchError.of('code_incomplete'))
  return ok(value)
}

/** A passcode: exactly 6 letters and digits. */
export function validatePasscode(input: string): Result<string> {
  if (/[^A-Za-z0-9]/.test(input)) return fail(LatchError.of('passcode_invalid_characters'))
  if (input.length !== PASSCODE_LENGTH) return fail(LatchError.of('passcode_invalid_length'))
  return ok(input)
}

/**
 * A passcode being chosen for a new wallet: validatePasscode, then not one of the common weak
 * passcodes (isWeakPasscode). Recovery checks only validatePasscode: an existing wallet's
 * passcode must keep working whatever the list says.
 */
export function validateNewPasscode(input: string): Result<string> {
  const valid = validatePasscode(input)
  if (!valid.ok) return valid
  if (isWeakPasscode(input)) return fail(LatchError.of('passcode_too_common'))
  return ok(input)
}

// A host name as the URL parser leaves it (lowercase, IDNs in punycode) or an IPv6 literal.
const HOST_NAME =
  /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)$/

/**
 * An origin an app registers (its host pages, the modal's origin): `http(s)://host[:port]`,
 * answered as the browser writes it. It becomes a CSP `frame-ancestors` source and the list a
 * page's origin is matched against, where a `*` would admit every site, so a wildcard in any
 * form, a user name or password, a path, a query or a fragment is refused with a sentence
 * saying which (a lone trailing `/` is allowed).
 * @example validateOrigin('https://App.example.com:8443/') // ok: 'https://app.example.com:8443'
 */
export function validateOrigin(input: string): Result<string> {
  const value = input.trim()
  const shown = value.length > 200 ? `${value.slice(0, 200)}…` : value
  const refuse = (why: string) =>
    fail<string>(LatchError.of('invalid_data', { message: `'${shown}' ${why}` }))
  const example = 'e.g. https://app.example.com'
  if (value.includes('*')) {
    return refuse(`is not allowed: wildcards are refused, list each origin exactly (${example})`)
  }
  if (!URL.canParse(value))
    return refuse(`is not an origin: write scheme://host[:port] (${example})`)
  const url = new URL(value)
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return refuse('is not an origin: use http: or https:')
  }
  if (url.username || url.password || value.slice(url.protocol.length + 2).includes('@')) {
    return refuse('is not an origin: a user name or password is not allowed')
  }
  if (url.pathname !== '/' || /^https?:\/\/[^/?#]*\/./.test(value)) {
    return refuse(`is not an origin: a path is not allowed (${example})`)
  }
  if (value.includes('?')) return refuse('is not an origin: a query is not allowed')
  if (value.includes('#')) return refuse('is not an origin: a fragment is not allowed')
  // Percent-encoding reaches the host decoded (%2A is a *), so the host itself is checked too.
  if (!HOST_NAME.test(url.hostname)) {
    return refuse(`is not an origin: '${url.hostname}' is not a host name (${example})`)
  }
  return ok(url.origin)
}

/** A provider sends the literal code 'undefined' when the person denied the request. */
export function isOAuthDenial(code: string | null | undefined): boolean {
  return code === 'undefined'
}

export function validateChainId(chainId: unknown): Result<number> {
  return isSupportedChainId(chainId) ? ok(chainId) : fail(LatchError.of('unsupported_chain'))
}

const APP_ID = new RegExp(`^[A-Za-z0-9]{${APP_ID_LENGTH}}$`)

/**
 * An app id as the server makes them: 25 letters and digits. The one check of an app id on its
 * way (the host SDK's createLatch, the modal server, the API's app lookup), so no part admits
 * what another refuses.
 */
export function isAppId(value: unknown): value is string {
  return typeof value === 'string' && APP_ID.test(value)
}

/** isAppId, with the error the host page hears: 'invalid_app_id'. */
export function validateAppId(appId: unknown): Result<string> {
  return isAppId(appId) ? ok(appId) : fail(LatchError.of('invalid_app_id'))
}

export function validateSignMessage(message: unknown): Result<string> {
  if (typeof message !== 'string' || message.length === 0) {
    return fail(LatchError.of('invalid_sign_message'))
  }
  return ok(message)
}

export const EMAIL_AND_SMS_WARNING =
  'Email and SMS login cannot both be enabled; SMS login has been disabled.'

/**
 * SPEC's two renderings are a dialog or inside a parent element: `inDialog: false` names no
 * parent, so the modal stays a dialog (the host SDK mounts one, the modal acts as one).
 */
export const INLINE_WITHOUT_PARENT_WARNING =
  'render.inDialog is false but no render.inParentNodeId is given; the modal opens as a dialog.'

export function backgroundColorWarning(color: string): string {
  return `The background color ${color} is neither light nor dark enough for readable text; choose a lighter or a darker one.`
}

export interface ValidatedHostConfig {
  config: HostAppConfig
  warnings: string[]
}

/**
 * Checks a host configuration: e-mail with SMS disables SMS (a warning), social logins need
 * e-mail or SMS, and at least one method must be on. Throws the catalogued error otherwise.
 */
export function validateHostConfig(input: HostAppConfig): ValidatedHostConfig {
  const warnings: string[] = []
  const config: HostAppConfig = { ...input }
  if (config.loginMethods) {
    let methods: LoginMethod[] = [...new Set(config.loginMethods)]
    if (methods.includes('email') && methods.includes('sms')) {
      methods = methods.filter((m) => m !== 'sms')
      warnings.push(EMAIL_AND_SMS_WARNING)
    }
    if (methods.length === 0) throw LatchError.of('no_login_method')
    const social = methods.some((m) => (OAUTH_PROVIDERS as readonly string[]).includes(m))
    if (social && !methods.includes('email') && !methods.includes('sms')) {
      throw LatchError.of('social_requires_email_or_sms')
    }
    config.loginMethods = methods
  }
  const theme = config.appearance?.theme
  if (theme && theme !== 'light' && theme !== 'dark') {
    if (colorTone(theme) === 'neither') warnings.push(backgroundColorWarning(theme))
  }
  if (config.render?.inDialog === false && !config.render.inParentNodeId) {
    warnings.push(INLINE_WITHOUT_PARENT_WARNING)
  }
  return { config, warnings }
}

/** WCAG relative luminance of a #rgb or #rrggbb colour, or undefined if not one. */
export function relativeLuminance(color: string): number | undefined {
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim())
  if (!m?.[1]) return undefined
  const hex = m[1].length === 3 ? [...m[1]].map((c) => c + c).join('') : m[1]
  const channel = (i: number): number => {
    const v = Number.parseInt(hex.slice(i, i + 2), 16) / 255
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4)
}

/**
 * 'light' when black text on it reaches the WCAG AAA contrast of 7:1, 'dark' when white text
 * does, 'neither' in between (luminance between 0.1 and 0.3), undefined for a non-colour.
 */
export function colorTone(color: string): 'light' | 'dark' | 'neither' | undefined {
  const l = relativeLuminance(color)
  if (l === undefined) return undefined
  if ((l + 0.05) / 0.05 >= 7) return 'light'
  if (1.05 / (l + 0.05) >= 7) return 'dark'
  return 'neither'
}
