import { describe, expect, test } from 'vitest'
import {
  fromApiError,
  LatchError,
  parseRetryAfter,
  retryAfterHeader,
  toApiErrorBody,
} from './index.ts'

describe('API body', () => {
  test('behavior: round trip through the API body keeps code, type, status', () => {
    const err = LatchError.of('allowlist_rejected')
    const body = JSON.parse(JSON.stringify(toApiErrorBody(err)))
    expect(body).toEqual({
      error: { type: 'api_error', code: 'allowlist_rejected', message: err.message },
    })
    const back = fromApiError(403, body)
    expect(back).toBeInstanceOf(LatchError)
    expect(back.code).toBe('allowlist_rejected')
    expect(back.status).toBe(403)
    expect(back.message).toBe(err.message)
  })

  test('behavior: Retry-After travels from the error to the header and back', () => {
    const err = LatchError.of('too_many_requests', { retryAfter: 42 })
    expect(retryAfterHeader(err)).toBe('42')
    expect(retryAfterHeader(LatchError.of('too_many_requests', { retryAfter: 0.2 }))).toBe('1')
    expect(retryAfterHeader(LatchError.of('too_many_requests'))).toBeUndefined()
    const back = fromApiError(429, toApiErrorBody(err), parseRetryAfter(retryAfterHeader(err)))
    expect(back.code).toBe('too_many_requests')
    expect(back.retryAfter).toBe(42)
    expect(fromApiError(502, 'bad gateway', parseRetryAfter('5')).retryAfter).toBe(5)
  })

  test('error: a Retry-After that is not a positive number of seconds is no wait', () => {
    const junk = [null, undefined, '', ' ', 'soon', '-5', '0', 'Infinity', '1e999']
    for (const header of [...junk, 'Wed, 21 Oct 2026 07:28:00 GMT']) {
      expect(parseRetryAfter(header), String(header)).toBeUndefined()
    }
  })

  test('error: an unreadable body is an internal error with the status', () => {
    const e = fromApiError(502, '<html>bad gateway</html>')
    expect(e.code).toBe('internal_error')
    expect(e.status).toBe(502)
  })
})
