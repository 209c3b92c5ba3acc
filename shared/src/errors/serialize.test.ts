import { describe, expect, test } from 'vitest'
import {
  deserializeError,
  LatchError,
  PENDING_REQUEST_HINT,
  serializeError,
  toLatchError,
} from './index.ts'

describe('serialization', () => {
  test('behavior: survives structured clone with class, code and message', () => {
    const original = LatchError.of('invalid_recovery_pin')
    const crossed = deserializeError(structuredClone(serializeError(original)))
    expect(crossed).toBeInstanceOf(LatchError)
    expect(crossed.code).toBe('invalid_recovery_pin')
    expect(crossed.type).toBe('embedded_wallet_error')
    expect(crossed.message).toBe('Invalid recovery passcode, please try again.')
    expect(crossed.retryable).toBe(true)
    expect(crossed.status).toBe(422)
  })

  test('behavior: survives JSON with details and rpc code', () => {
    const original = LatchError.of('rpc_wallet_locked')
    const crossed = deserializeError(JSON.parse(JSON.stringify(serializeError(original))))
    expect(crossed.details).toBe(PENDING_REQUEST_HINT)
    expect(crossed.rpcCode).toBe(-32002)
  })

  test('behavior: foreign failures become internal errors, never leaking their text', () => {
    const e = toLatchError(new TypeError('secret stack detail'))
    expect(e.code).toBe('internal_error')
    expect(e.message).toBe('Something went wrong')
  })

  test('behavior: an EIP-1193 error maps to its entry', () => {
    const e = toLatchError({ code: 4001, message: 'MetaMask Tx Signature: User denied' })
    expect(e.code).toBe('rpc_user_rejected')
    expect(e.rpcCode).toBe(4001)
  })

  test('behavior: the wait before a retry crosses frames on the error itself', () => {
    const original = LatchError.of('recovery_locked', { retryAfter: 60 })
    for (const crossed of [
      deserializeError(structuredClone(serializeError(original))),
      deserializeError(JSON.parse(JSON.stringify(serializeError(original)))),
    ]) {
      expect(crossed.code).toBe('recovery_locked')
      expect(crossed.retryAfter).toBe(60)
    }
    expect(deserializeError(serializeError(LatchError.of('recovery_locked'))).retryAfter).toBe(
      undefined,
    )
    const forged = { ...serializeError(original), retryAfter: '60; drop' }
    expect(deserializeError(forged).retryAfter).toBeUndefined()
  })

  test('error: a value that is not a serialized error', () => {
    expect(deserializeError({ code: 1 }).code).toBe('internal_error')
    expect(deserializeError(null).code).toBe('internal_error')
  })
})
