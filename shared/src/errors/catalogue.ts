/**
 * Every error a client of Latch can receive, as data: each code with its type, message,
 * HTTP status (where the API answers with it), retryability and provider code. The host SDK's
 * build cuts `ERRORS` to the codes it names (host-sdk/build.ts), so keep it one literal. Codes
 * only the server's own callers receive are in server-catalogue.ts.
 */
import type { ServerErrorCode } from './server-catalogue.ts'

/** The kinds of error, once; `ErrorType` is derived from it. */
export const ERROR_TYPES = [
  'api_error',
  'client_error',
  'validation_error',
  'oauth_error',
  'wallet_error',
  'embedded_wallet_error',
  'flow_error',
] as const

export type ErrorType = (typeof ERROR_TYPES)[number]

export interface ErrorSpec {
  type: ErrorType
  message: string
  /** HTTP status when the error is answered by the API. */
  status?: number
  retryable: boolean
  /** A second line shown under the message. */
  details?: string
  /** EIP-1193 or JSON-RPC error code. */
  rpcCode?: number
}

/** The hint every -32002 variant carries. */
export const PENDING_REQUEST_HINT = 'Don’t see your wallet modal? Check your other browser windows.'
const GENERIC_RETRY = 'An error has occurred, please try again.'

export const ERRORS = {
  // The API's error codes and the statuses it answers with.
  missing_or_invalid_latch_app_id: {
    type: 'api_error',
    status: 400,
    message: 'Missing or invalid Latch app ID',
    retryable: false,
  },
  invalid_data: {
    type: 'api_error',
    status: 400,
    message: 'Invalid request data',
    retryable: false,
  },
  linked_to_another_user: {
    type: 'api_error',
    status: 400,
    message: 'Another user has already linked this account.',
    retryable: false,
  },
  allowlist_rejected: {
    type: 'api_error',
    status: 403,
    message: 'This account is not allowed to use this app',
    retryable: false,
  },
  client_request_timeout: {
    type: 'api_error',
    status: 408,
    message: 'Request timed out',
    retryable: true,
  },
  invalid_verification_code: {
    type: 'api_error',
    status: 422,
    message: 'Invalid or expired verification code',
    retryable: true,
  },
  not_authenticated: {
    type: 'api_error',
    status: 401,
    message: 'User is not authenticated.',
    retryable: false,
  },
  invalid_refresh_token: {
    type: 'api_error',
    status: 401,
    message: 'Invalid or expired refresh token',
    retryable: false,
  },
  // A session fork's token (POST /sessions/fork/recover), refused with the reason the user acts on.
  fork_token_used: {
    type: 'api_error',
    status: 401,
    message: 'This session link has already been used',
    retryable: false,
  },
  fork_token_expired: {
    type: 'api_error',
    status: 401,
    message: 'This session link has expired',
    retryable: false,
  },
  /**
   * A session opened by a fork link asked for automatic wallet recovery, and the visitor who
   * forked never confirmed handing the wallet over (their click on a wallet app, recorded by
   * the wallet frame): whoever intercepted the link gets the session, not the key.
   */
  fork_wallet_not_confirmed: {
    type: 'embedded_wallet_error',
    status: 403,
    message: 'This link did not hand over your wallet. Sign in again here to use it.',
    retryable: false,
  },
  origin_not_allowed: {
    type: 'api_error',
    status: 403,
    message: 'This origin is not allowed for this app',
    retryable: false,
  },
  too_many_requests: {
    type: 'api_error',
    status: 429,
    message: 'Too many requests, please try again later',
    retryable: true,
  },
  not_found: { type: 'api_error', status: 404, message: 'Not found', retryable: false },
  payload_too_large: {
    type: 'api_error',
    status: 413,
    message: 'Request body is too large',
    retryable: false,
  },
  price_unavailable: {
    type: 'api_error',
    status: 503,
    message: 'Token price is unavailable',
    retryable: true,
  },
  /**
   * The database is out of reach for a moment (a restart, a failover, a lost connection) or
   * every connection is busy. The request did not finish; send it again after Retry-After.
   */
  service_unavailable: {
    type: 'api_error',
    status: 503,
    message: 'The service is briefly unavailable, please try again',
    retryable: true,
  },
  internal_error: {
    type: 'api_error',
    status: 500,
    message: 'Something went wrong',
    details: 'We’re on it. Please try again later.',
    retryable: true,
  },

  // E-mail and SMS submit, code verification.
  email_submit_failed: { type: 'client_error', message: 'Issue submitting email', retryable: true },
  phone_submit_failed: {
    type: 'client_error',
    message: 'Issue submitting phone number',
    retryable: true,
  },
  code_verification_failed: {
    type: 'client_error',
    message: 'Issue verifying code',
    retryable: true,
  },

  // OAuth. The server answers with the server detail; the modal shows the display text.
  oauth_failed: { type: 'oauth_error', message: 'Authentication failed.', retryable: true },
  oauth_invalid_code: {
    type: 'oauth_error',
    status: 400,
    message: 'Invalid code during oauth flow.',
    retryable: true,
  },
  oauth_user_denied: {
    type: 'oauth_error',
    status: 400,
    message: 'User denied confirmation during OAuth flow',
    retryable: true,
  },

  // External wallets.
  wallet_linked_to_another_user: {
    type: 'wallet_error',
    message: 'User already exists for this address',
    details: 'Try another address!',
    retryable: false,
  },
  wallet_request_timeout: {
    type: 'wallet_error',
    message: 'Wallet request timed out',
    details: 'Please try connecting again.',
    retryable: true,
  },
  wallet_login_failed: {
    type: 'wallet_error',
    status: 401,
    message: 'Could not log in with wallet',
    retryable: true,
  },
  wallet_request_rejected: {
    type: 'wallet_error',
    message: 'You rejected the request',
    retryable: true,
  },
  signature_rejected: {
    type: 'wallet_error',
    message: 'Signature rejected',
    details: 'Please try signing again.',
    rpcCode: 4001,
    retryable: true,
  },
  unable_to_build_connector: {
    type: 'wallet_error',
    message: 'Unable to connect to wallet.',
    retryable: true,
  },
  wallet_retries_exhausted: {
    type: 'wallet_error',
    message: 'Unable to connect wallet',
    retryable: false,
  },
  wallet_not_connected: {
    type: 'wallet_error',
    message: 'Wallet is not connected',
    retryable: true,
  },
  wallet_not_currently_connected: {
    type: 'wallet_error',
    message: 'Wallet is not currently connected.',
    retryable: true,
  },
  connector_not_initialized: {
    type: 'wallet_error',
    message: 'Connector not initialized',
    retryable: false,
  },

  // EIP-1193 provider errors. Retryable means the same request can succeed if the person
  // acts (approves, unlocks, reconnects); a malformed or unsupported request cannot.
  rpc_user_rejected: {
    type: 'wallet_error',
    rpcCode: 4001,
    message: 'User rejected the request.',
    retryable: true,
  },
  rpc_unauthorized: {
    type: 'wallet_error',
    rpcCode: 4100,
    message: 'The requested method and/or account has not been authorized by the user.',
    retryable: true,
  },
  rpc_unsupported_method: {
    type: 'wallet_error',
    rpcCode: 4200,
    message: 'The provider does not support the requested method.',
    retryable: false,
  },
  // EIP-5792's own provider errors (wallet_sendCalls, wallet_getCallsStatus).
  calls_capability_unsupported: {
    type: 'wallet_error',
    rpcCode: 5700,
    message: 'The wallet does not support a capability the request requires',
    retryable: false,
  },
  calls_chain_unsupported: {
    type: 'wallet_error',
    rpcCode: 5710,
    message: 'The wallet does not send batches of calls on this chain',
    retryable: false,
  },
  calls_duplicate_id: {
    type: 'wallet_error',
    status: 409,
    rpcCode: 5720,
    message: 'A batch with this id was already sent',
    retryable: false,
  },
  calls_unknown_id: {
    type: 'wallet_error',
    rpcCode: 5730,
    message: 'No batch of calls with this id',
    retryable: false,
  },
  calls_too_many: {
    type: 'wallet_error',
    rpcCode: 5740,
    message: 'The batch has more calls than the wallet sends at once',
    retryable: false,
  },
  calls_atomic_unsupported: {
    type: 'wallet_error',
    rpcCode: 5760,
    message: 'The wallet cannot send these calls atomically on this chain',
    retryable: false,
  },
  rpc_disconnected: {
    type: 'wallet_error',
    rpcCode: 4900,
    message: 'Disconnected',
    retryable: true,
  },
  rpc_chain_disconnected: {
    type: 'wallet_error',
    rpcCode: 4901,
    message: 'The provider is not connected to the requested chain.',
    retryable: true,
  },
  // JSON-RPC 2.0 and EIP-1474 codes.
  rpc_parse_error: {
    type: 'wallet_error',
    rpcCode: -32700,
    message: 'Invalid JSON',
    retryable: false,
  },
  rpc_invalid_request: {
    type: 'wallet_error',
    rpcCode: -32600,
    message: 'JSON is not a valid request object',
    retryable: false,
  },
  rpc_method_not_found: {
    type: 'wallet_error',
    rpcCode: -32601,
    message: 'Method does not exist',
    retryable: false,
  },
  rpc_invalid_params: {
    type: 'wallet_error',
    rpcCode: -32602,
    message: 'Invalid method parameters',
    retryable: false,
  },
  // An internal wallet or node failure is usually transient.
  rpc_internal: {
    type: 'wallet_error',
    rpcCode: -32603,
    message: 'Internal JSON-RPC error',
    retryable: true,
  },
  rpc_invalid_input: {
    type: 'wallet_error',
    rpcCode: -32000,
    message: 'Missing or invalid parameters',
    retryable: false,
  },
  // A resource that is missing now (a block, a pending transaction) may exist shortly.
  rpc_resource_not_found: {
    type: 'wallet_error',
    rpcCode: -32001,
    message: 'Requested resource not found',
    retryable: true,
  },
  rpc_resource_unavailable: {
    type: 'wallet_error',
    rpcCode: -32002,
    message: 'Requested resource not available',
    details: PENDING_REQUEST_HINT,
    retryable: true,
  },
  rpc_transaction_rejected: {
    type: 'wallet_error',
    rpcCode: -32003,
    message: 'Transaction creation failed',
    retryable: false,
  },
  rpc_method_not_supported: {
    type: 'wallet_error',
    rpcCode: -32004,
    message: 'Method is not implemented',
    retryable: false,
  },
  // Rate limits pass with time.
  rpc_limit_exceeded: {
    type: 'wallet_error',
    rpcCode: -32005,
    message: 'Request exceeds defined limit',
    retryable: true,
  },
  rpc_version_not_supported: {
    type: 'wallet_error',
    rpcCode: -32006,
    message: 'Version of JSON-RPC protocol is not supported',
    retryable: false,
  },
  // The three -32002 variants: the wallet already shows a prompt somewhere else.
  rpc_connection_pending: {
    type: 'wallet_error',
    rpcCode: -32002,
    message: 'Connection request already pending',
    details: PENDING_REQUEST_HINT,
    retryable: true,
  },
  rpc_request_pending: {
    type: 'wallet_error',
    rpcCode: -32002,
    message: 'Request already pending',
    details: PENDING_REQUEST_HINT,
    retryable: true,
  },
  rpc_wallet_locked: {
    type: 'wallet_error',
    rpcCode: -32002,
    message: 'Wallet is locked',
    details: PENDING_REQUEST_HINT,
    retryable: true,
  },

  // The in-app wallet's errors.
  embedded_wallet_error: {
    type: 'embedded_wallet_error',
    message: GENERIC_RETRY,
    retryable: true,
  },
  invalid_request_arguments: {
    type: 'embedded_wallet_error',
    status: 400,
    message: 'Invalid request arguments',
    retryable: false,
  },
  /**
   * The wallet API needs, besides the access token, the wallet credential that a sign-in in this
   * browser set (server/src/wallets/credential.ts): missing (a browser that keeps no cookie in a
   * cross-site frame, a session older than the credential) or not this session's.
   */
  wallet_sign_in_required: {
    type: 'embedded_wallet_error',
    status: 401,
    message: 'Sign in again on this device to use your wallet.',
    retryable: false,
  },
  /**
   * Linking or unlinking a sign-in method without the session's credential from the browser that
   * signed in (a token alone, as the host page, its backend and its logs hold it), or from a
   * session opened by a fork link whose wallet handover was not confirmed.
   */
  link_sign_in_required: {
    type: 'flow_error',
    status: 401,
    message: 'Sign in again on this device to change how you sign in.',
    retryable: false,
  },
  /**
   * A new sign-in method for a user whose wallet recovers automatically, without the visitor's
   * approval of that very method in the wallet frame (a click there, recorded by its own fetch).
   */
  link_not_approved: {
    type: 'flow_error',
    status: 403,
    message: 'Approve the new sign-in method in your wallet first.',
    retryable: false,
  },
  /**
   * The server's record of a wallet does not hold together (a sealed value moved from another
   * row, an attempt state written without the server secret): refused, never guessed around.
   */
  wallet_record_invalid: {
    type: 'embedded_wallet_error',
    status: 409,
    message: 'This wallet cannot be used. Contact the app’s support.',
    retryable: false,
  },
  /**
   * A row that would grant access (an identity, a passkey, a session) does not carry the server
   * secret's MAC of what it grants and to whom: written, moved or copied in the database by
   * someone without the secret. Refused, and logged on the server.
   */
  account_record_invalid: {
    type: 'api_error',
    status: 409,
    message: 'This account cannot be used. Contact the app’s support.',
    retryable: false,
  },
  wallet_not_on_device: {
    type: 'embedded_wallet_error',
    message: 'Wallet is not on this device',
    retryable: false,
  },
  invalid_recovery_pin: {
    type: 'embedded_wallet_error',
    status: 422,
    message: 'Invalid recovery passcode, please try again.',
    retryable: true,
  },
  /** Five wrong passcodes lock recovery of the wallet for a while (answered with Retry-After). */
  recovery_locked: {
    type: 'embedded_wallet_error',
    status: 429,
    message: 'Too many incorrect passcodes. Recovery is locked, please try again later.',
    retryable: true,
  },
  /** The authenticator answered no PRF output: it cannot seal a recovery share (offer the passcode). */
  passkey_prf_unsupported: {
    type: 'embedded_wallet_error',
    status: 422,
    message: 'This passkey cannot protect your wallet. Use a passcode instead.',
    retryable: false,
  },
  /** The passkey ceremony was cancelled, timed out, or found none of the wallet's passkeys. */
  passkey_failed: {
    type: 'embedded_wallet_error',
    message: 'Your passkey was not used, please try again.',
    retryable: true,
  },
  insufficient_funds: {
    type: 'embedded_wallet_error',
    message: 'Insufficient funds for this transaction',
    retryable: false,
  },

  // Recovery.
  recovery_failed: { type: 'flow_error', message: GENERIC_RETRY, retryable: true },
  recovery_not_allowed: {
    type: 'flow_error',
    message: 'User must be authenticated and have a wallet before it can be recovered',
    retryable: false,
  },
  recovery_exited: {
    type: 'flow_error',
    message: 'User exited before their wallet could be recovered',
    retryable: true,
  },

  // Create.
  create_failed: { type: 'flow_error', message: GENERIC_RETRY, retryable: true },
  unable_to_create_wallet: {
    type: 'flow_error',
    message: 'Unable to create wallet',
    retryable: true,
  },
  create_exited: {
    type: 'flow_error',
    message: 'User exited before creating a wallet',
    retryable: true,
  },
  create_not_authenticated: {
    type: 'flow_error',
    message: 'User must be authenticated before creating a wallet',
    retryable: false,
  },
  wallet_already_exists: {
    type: 'flow_error',
    status: 409,
    message: 'Only one wallet per user is currently allowed',
    retryable: false,
  },

  // Send transaction.
  transaction_prepare_failed: {
    type: 'flow_error',
    message: 'There was an error preparing transaction',
    retryable: true,
  },
  transaction_submit_failed: { type: 'flow_error', message: GENERIC_RETRY, retryable: true },
  transaction_exited: {
    type: 'flow_error',
    message: 'User exited the modal before submitting the transaction',
    retryable: true,
  },
  unsupported_transaction: {
    type: 'flow_error',
    message: 'Unsupported transaction.',
    retryable: false,
  },

  // Export.
  export_not_allowed: {
    type: 'flow_error',
    message: 'User must be authenticated and have a wallet before it can be exported',
    retryable: false,
  },
  export_exited: {
    type: 'flow_error',
    message: 'User exited before their wallet could be exported',
    retryable: true,
  },

  // Sign.
  sign_failed: { type: 'flow_error', message: GENERIC_RETRY, retryable: true },
  invalid_sign_message: {
    type: 'validation_error',
    message: 'Message must be a non-empty string',
    retryable: false,
  },
  sign_without_wallet: {
    type: 'flow_error',
    message: 'Must have a wallet before signing',
    retryable: false,
  },

  // General and flow errors.
  something_went_wrong: {
    type: 'flow_error',
    message: 'Something went wrong',
    details: 'We’re on it. Please try again later.',
    retryable: false,
  },
  embedded_wallet_link_forbidden: {
    type: 'flow_error',
    status: 400,
    message: 'Cannot link or login with embedded wallet',
    retryable: false,
  },
  embedded_wallet_unlink_forbidden: {
    type: 'flow_error',
    status: 400,
    message: 'Cannot unlink an embedded wallet',
    retryable: false,
  },
  siwe_not_initialized: {
    type: 'flow_error',
    status: 400,
    message: 'Must initialize SIWE flow first.',
    retryable: false,
  },
  // Passkeys (server/src/passkeys): every refusal of a ceremony.
  passkey_not_initialized: {
    type: 'flow_error',
    status: 400,
    message: 'Passkey request expired',
    retryable: false,
  },
  passkey_verification_failed: {
    type: 'flow_error',
    status: 401,
    message: 'Could not verify passkey',
    retryable: true,
  },
  oauth_not_initialized: {
    type: 'flow_error',
    message: 'Must initialize OAuth flow before calling loginWithOAuth',
    retryable: false,
  },
  passwordless_not_initialized: {
    type: 'flow_error',
    message: 'Must initialize a passwordless code flow first',
    retryable: false,
  },
  login_exited: {
    type: 'flow_error',
    message: 'User exited the modal before logging in',
    retryable: true,
  },
  link_exited: {
    type: 'flow_error',
    message: 'User exited the modal before linking an account',
    retryable: true,
  },
  connect_exited: {
    type: 'flow_error',
    message: 'User exited the modal before connecting a wallet',
    retryable: true,
  },
  fork_exited: {
    type: 'flow_error',
    message: 'User exited the modal before opening a wallet app',
    retryable: true,
  },
  /**
   * The session a sign-in in this page started ended at its first refresh or fork, which came
   * without the refresh cookie the sign-in set: this browser refuses the API's cookie in the
   * modal's cross-site frame (WebKit's and Safari's default), so no session outlives one access
   * token here.
   */
  session_cookie_refused: {
    type: 'flow_error',
    status: 401,
    message:
      'This browser refused the sign-in cookie in this app’s frame. Allow cross-site cookies for this app, or use another browser.',
    retryable: false,
  },
  method_not_available: {
    type: 'flow_error',
    status: 403,
    message: 'This login method is not available',
    retryable: false,
  },
  last_account_unlink_forbidden: {
    type: 'flow_error',
    status: 400,
    message: 'Cannot unlink the last sign-in method of a user',
    retryable: false,
  },
  modal_unreachable: {
    type: 'client_error',
    message: 'Could not connect to the Latch modal',
    retryable: true,
  },

  // Validation (docs/behaviour.md, "Input rules").
  code_not_numeric: {
    type: 'validation_error',
    message: 'Code should be numeric',
    retryable: true,
  },
  code_incomplete: {
    type: 'validation_error',
    message: 'Code must be 6 digits',
    retryable: true,
  },
  invalid_email: {
    type: 'validation_error',
    message: 'Please enter a valid email address',
    retryable: true,
  },
  invalid_phone: {
    type: 'validation_error',
    message: 'Please enter a valid US phone number',
    retryable: true,
  },
  /** The phone field with another country than the US chosen. */
  invalid_phone_number: {
    type: 'validation_error',
    message: 'Please enter a valid phone number',
    retryable: true,
  },
  passcode_invalid_characters: {
    type: 'validation_error',
    message: 'Passcode can only be letters and numbers',
    retryable: true,
  },
  passcode_invalid_length: {
    type: 'validation_error',
    message: 'Passcode must be exactly 6 letters and numbers',
    retryable: true,
  },
  passcode_too_common: {
    type: 'validation_error',
    message: 'This passcode is too easy to guess, please choose another',
    retryable: true,
  },
  unsupported_chain: {
    type: 'validation_error',
    status: 400,
    message: 'Unsupported chainId',
    retryable: false,
  },
  invalid_app_id: {
    type: 'validation_error',
    message: 'Cannot initialize the provider with an invalid app ID',
    retryable: false,
  },
  social_requires_email_or_sms: {
    type: 'validation_error',
    message: 'To enable social logins you must also enable either SMS or Email login',
    retryable: false,
  },
  no_login_method: {
    type: 'validation_error',
    message: 'You must enable at least one login method',
    retryable: false,
  },
  invalid_transaction: {
    type: 'validation_error',
    message: 'Invalid transaction request',
    retryable: false,
  },
} as const satisfies Record<string, ErrorSpec>

/** The codes of `ERRORS`: every code the modal and the host SDK know. */
export type ClientErrorCode = keyof typeof ERRORS
export type ErrorCode = ClientErrorCode | ServerErrorCode

/**
 * Every entry known here, without a prototype (no `toString` is a code): the catalogue's, and
 * the server's once it has merged them (mergeErrors); in a browser, the catalogue's only.
 */
const known: Record<string, ErrorSpec> = Object.assign(Object.create(null), ERRORS)

/** Adds the server's entries (SERVER_ERRORS) to what LatchError.of and isErrorCode know. */
export function mergeErrors(entries: Partial<Record<ServerErrorCode, ErrorSpec>>): void {
  Object.assign(known, entries)
}

/** A code's entry, if it has one here. */
export const errorSpec = (code: string): ErrorSpec | undefined => known[code]

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && errorSpec(code) !== undefined
}
