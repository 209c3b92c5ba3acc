import { expect, test } from 'vitest'
import {
  ERRORS,
  type ErrorCode,
  type ErrorSpec,
  fromApiError,
  isErrorCode,
  LatchError,
  mergeErrors,
  SERVER_ERRORS,
} from './index.ts'

// In this order: a client's view first (nothing merged), then the server's.
test('behavior: a client knows none of the server-only codes and still reads them from an answer', () => {
  for (const code of Object.keys(SERVER_ERRORS)) {
    expect(Object.hasOwn(ERRORS, code), code).toBe(false)
    expect(isErrorCode(code), code).toBe(false)
  }
  expect(() => LatchError.of('invalid_admin_key')).toThrow(/invalid_admin_key/)
  const answered = fromApiError(401, {
    error: { type: 'api_error', code: 'invalid_app_secret', message: 'Invalid app secret' },
  })
  expect(answered).toBeInstanceOf(LatchError)
  expect(answered).toMatchObject({
    code: 'invalid_app_secret',
    type: 'api_error',
    message: 'Invalid app secret',
    status: 401,
    retryable: false,
  })
  // Only the tables' own keys are codes.
  expect(isErrorCode('toString')).toBe(false)
  expect(isErrorCode('__proto__')).toBe(false)
})

test('behavior: merged, the server raises them with their catalogued status and message', () => {
  mergeErrors(SERVER_ERRORS)
  expect(isErrorCode('invalid_admin_key')).toBe(true)
  expect(isErrorCode('toString')).toBe(false)
  expect(LatchError.of('invalid_admin_key')).toMatchObject({
    code: 'invalid_admin_key',
    type: 'api_error',
    status: 401,
    message: 'Invalid operator key',
    retryable: false,
  })
  expect(LatchError.of('missing_or_invalid_latch_account_id').status).toBe(400)
  expect(LatchError.of('app_secret_from_browser').status).toBe(403)
  expect(LatchError.of('admin_key_from_browser').message).toBe(
    'The operator key is refused from browsers',
  )
  // The client catalogue is as it was.
  expect(LatchError.of('not_found').status).toBe(404)
  for (const [code, spec] of Object.entries(SERVER_ERRORS) as [ErrorCode, ErrorSpec][]) {
    expect(spec.type, code).toBe('api_error')
    expect(spec.status, code).toBeGreaterThanOrEqual(400)
  }
})
