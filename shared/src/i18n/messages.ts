/** The message table's types: every locale has every key (a missing one fails the typecheck). */
import type { ErrorCode } from '../errors/index.ts'
import type { en } from './en.ts'
import type { enScreens } from './en-screens.ts'
import type { Locale } from './locales.ts'

export type Messages = Record<keyof typeof en | keyof typeof enScreens, string>
export type MessageKey = keyof Messages

/**
 * The error codes whose message the modal shows on screen, translated in every locale. In
 * English these are the catalogue's messages (the host-facing contract); the host always
 * receives the English `message`.
 */
export type ShownErrorCode = Extract<
  ErrorCode,
  | 'code_not_numeric'
  | 'code_incomplete'
  | 'invalid_verification_code'
  | 'code_verification_failed'
  | 'too_many_requests'
  | 'client_request_timeout'
  | 'invalid_email'
  | 'invalid_phone'
  | 'invalid_phone_number'
  | 'email_submit_failed'
  | 'phone_submit_failed'
  | 'passcode_invalid_characters'
  | 'passcode_invalid_length'
  | 'passcode_too_common'
  | 'create_failed'
  | 'invalid_recovery_pin'
  | 'recovery_locked'
  | 'something_went_wrong'
  | 'oauth_failed'
  | 'linked_to_another_user'
  | 'allowlist_rejected'
  | 'wallet_sign_in_required'
  | 'link_sign_in_required'
  | 'wallet_record_invalid'
  | 'unable_to_create_wallet'
  | 'wallet_login_failed'
  | 'wallet_request_rejected'
  | 'signature_rejected'
  | 'unable_to_build_connector'
  | 'wallet_retries_exhausted'
  | 'wallet_request_timeout'
  | 'wallet_linked_to_another_user'
  | 'insufficient_funds'
  | 'transaction_prepare_failed'
  | 'fork_token_used'
  | 'fork_token_expired'
  | 'fork_wallet_not_confirmed'
  | 'passkey_prf_unsupported'
  | 'passkey_failed'
  | 'passkey_not_initialized'
  | 'passkey_verification_failed'
  | 'last_account_unlink_forbidden'
>

/** One shipped translation: the messages and the error texts the modal shows. */
export interface LocaleTable {
  m: Messages
  e: Record<ShownErrorCode, string>
  /** The code e-mail's subject and text and the SMS, with {code}, {app} and {minutes}. */
  mail: { subject: string; text: string; sms: string }
}

/** What a host may override, per locale and per key (`config.texts`). */
export type HostTexts = Partial<Record<Locale, Partial<Messages>>>
