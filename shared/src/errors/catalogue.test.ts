import { describe, expect, test } from 'vitest'
import {
  type ClientErrorCode,
  ERROR_TYPES,
  ERRORS,
  type ErrorCode,
  type ErrorSpec,
  fillTemplate,
  LatchError,
  OAUTH_ERROR_DISPLAY,
  PENDING_REQUEST_HINT,
  rpcErrorCode,
} from './index.ts'

describe('catalogue', () => {
  test('behavior: server codes carry the latch name', () => {
    expect(ERRORS.missing_or_invalid_latch_app_id.type).toBe('api_error')
    for (const code of ['invalid_data', 'linked_to_another_user', 'allowlist_rejected'] as const) {
      expect(ERRORS[code].status).toBeGreaterThanOrEqual(400)
    }
    expect(ERRORS.client_request_timeout.message).toBe('Request timed out')
  })

  test.each([
    ['email_submit_failed', 'Issue submitting email'],
    ['phone_submit_failed', 'Issue submitting phone number'],
    ['invalid_verification_code', 'Invalid or expired verification code'],
    ['code_verification_failed', 'Issue verifying code'],
    ['code_not_numeric', 'Code should be numeric'],
    ['oauth_failed', 'Authentication failed.'],
    ['oauth_invalid_code', 'Invalid code during oauth flow.'],
    ['oauth_user_denied', 'User denied confirmation during OAuth flow'],
    ['wallet_linked_to_another_user', 'User already exists for this address'],
    ['wallet_request_timeout', 'Wallet request timed out'],
    ['wallet_login_failed', 'Could not log in with wallet'],
    ['wallet_request_rejected', 'You rejected the request'],
    ['signature_rejected', 'Signature rejected'],
    ['unable_to_build_connector', 'Unable to connect to wallet.'],
    ['wallet_retries_exhausted', 'Unable to connect wallet'],
    ['wallet_not_connected', 'Wallet is not connected'],
    ['wallet_not_currently_connected', 'Wallet is not currently connected.'],
    ['connector_not_initialized', 'Connector not initialized'],
    ['rpc_disconnected', 'Disconnected'],
    ['invalid_recovery_pin', 'Invalid recovery passcode, please try again.'],
    ['recovery_failed', 'An error has occurred, please try again.'],
    [
      'recovery_not_allowed',
      'User must be authenticated and have a wallet before it can be recovered',
    ],
    ['recovery_exited', 'User exited before their wallet could be recovered'],
    ['create_failed', 'An error has occurred, please try again.'],
    ['unable_to_create_wallet', 'Unable to create wallet'],
    ['create_exited', 'User exited before creating a wallet'],
    ['create_not_authenticated', 'User must be authenticated before creating a wallet'],
    ['wallet_already_exists', 'Only one wallet per user is currently allowed'],
    ['transaction_prepare_failed', 'There was an error preparing transaction'],
    ['transaction_submit_failed', 'An error has occurred, please try again.'],
    ['transaction_exited', 'User exited the modal before submitting the transaction'],
    ['unsupported_transaction', 'Unsupported transaction.'],
    ['sign_failed', 'An error has occurred, please try again.'],
    ['invalid_sign_message', 'Message must be a non-empty string'],
    ['sign_without_wallet', 'Must have a wallet before signing'],
    ['something_went_wrong', 'Something went wrong'],
    ['embedded_wallet_link_forbidden', 'Cannot link or login with embedded wallet'],
    ['embedded_wallet_unlink_forbidden', 'Cannot unlink an embedded wallet'],
    ['not_authenticated', 'User is not authenticated.'],
    ['siwe_not_initialized', 'Must initialize SIWE flow first.'],
    ['oauth_not_initialized', 'Must initialize OAuth flow before calling loginWithOAuth'],
    ['passwordless_not_initialized', 'Must initialize a passwordless code flow first'],
    ['passcode_invalid_characters', 'Passcode can only be letters and numbers'],
    ['passcode_invalid_length', 'Passcode must be exactly 6 letters and numbers'],
    ['unsupported_chain', 'Unsupported chainId'],
    ['invalid_app_id', 'Cannot initialize the provider with an invalid app ID'],
    [
      'social_requires_email_or_sms',
      'To enable social logins you must also enable either SMS or Email login',
    ],
    ['no_login_method', 'You must enable at least one login method'],
  ] satisfies [ErrorCode, string][])('behavior: %s reads %j', (code, message) => {
    expect(LatchError.of(code).message).toBe(message)
  })

  test('behavior: details lines of the spec', () => {
    expect(ERRORS.wallet_linked_to_another_user.details).toBe('Try another address!')
    expect(ERRORS.wallet_linked_to_another_user.retryable).toBe(false)
    expect(ERRORS.wallet_request_timeout.details).toBe('Please try connecting again.')
    expect(ERRORS.signature_rejected.details).toBe('Please try signing again.')
    expect(ERRORS.signature_rejected.rpcCode).toBe(4001)
    expect(ERRORS.something_went_wrong.details).toBe('We’re on it. Please try again later.')
  })

  test('behavior: the three -32002 variants carry the hint', () => {
    expect(PENDING_REQUEST_HINT).toBe(
      'Don’t see your wallet modal? Check your other browser windows.',
    )
    for (const code of [
      'rpc_connection_pending',
      'rpc_request_pending',
      'rpc_wallet_locked',
    ] as const) {
      expect(ERRORS[code].rpcCode).toBe(-32002)
      expect(ERRORS[code].details).toBe(PENDING_REQUEST_HINT)
    }
  })

  test('behavior: every standard provider code has an entry with a retryable flag', () => {
    const codes = [4001, 4100, 4200, 4900, 4901, -32700, -32600, -32601, -32602, -32603]
    for (let c = -32000; c >= -32006; c--) codes.push(c)
    for (const rpc of codes) {
      const code = rpcErrorCode(rpc)
      expect(code, String(rpc)).toBeDefined()
      expect(typeof ERRORS[code as ClientErrorCode].retryable).toBe('boolean')
    }
    expect(rpcErrorCode(4001)).toBe('rpc_user_rejected')
    expect(rpcErrorCode(-32002)).toBe('rpc_resource_unavailable')
    expect(rpcErrorCode(12345)).toBeUndefined()
  })

  test('behavior: every error the API answers with has its status in the catalogue', () => {
    // Callers never patch a status in: a refused login method is 403 wherever it is thrown.
    expect(ERRORS.method_not_available.status).toBe(403)
    expect(LatchError.of('method_not_available').status).toBe(403)
    expect(ERRORS.unsupported_chain.status).toBe(400)
    for (const [code, spec] of Object.entries(ERRORS) as [ErrorCode, ErrorSpec][]) {
      if (spec.type === 'api_error') expect(spec.status, code).toBeGreaterThanOrEqual(400)
      expect(ERROR_TYPES, code).toContain(spec.type)
    }
  })

  test('behavior: the OAuth table', () => {
    expect(OAUTH_ERROR_DISPLAY.linked_to_another_user).toEqual({
      message: 'This account has already been linked to another user.',
      retryable: false,
    })
    expect(OAUTH_ERROR_DISPLAY.oauth_invalid_code).toEqual({
      message: 'Something went wrong. Try again.',
      retryable: true,
    })
    expect(
      fillTemplate(OAUTH_ERROR_DISPLAY.oauth_user_denied.message, { providerName: 'GitHub' }),
    ).toBe('Retry and check GitHub to finish connecting your account.')
    expect(
      ERRORS.linked_to_another_user.message.startsWith('Another user has already linked this'),
    ).toBe(true)
  })
})
