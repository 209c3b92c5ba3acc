/** The checks of a transaction request's fields (validation.ts re-exports them). */
import { LatchError } from './errors/latch-error.ts'
import { fail, ok, type Result } from './result.ts'
import type { Quantity, TransactionRequest } from './types.ts'

const QUANTITY_FIELDS = [
  'gasLimit',
  'gasPrice',
  'value',
  'maxPriorityFeePerGas',
  'maxFeePerGas',
] as const

export function isQuantity(value: unknown): value is Quantity {
  if (typeof value === 'bigint') return value >= 0n
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0
  return typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)
}

export function toBigInt(value: Quantity): bigint {
  return typeof value === 'bigint' ? value : BigInt(value)
}

/** Numeric fields are numbers, bigints or hex strings; chainId is a number. */
export function validateTransactionRequest(
  request: TransactionRequest,
): Result<TransactionRequest> {
  for (const field of QUANTITY_FIELDS) {
    const value = request[field]
    if (value !== undefined && !isQuantity(value)) {
      return fail(
        LatchError.of('invalid_transaction', {
          message: `Invalid transaction request: ${field} must be a number, bigint or hex string`,
        }),
      )
    }
  }
  if (request.chainId !== undefined && !Number.isSafeInteger(request.chainId)) {
    return fail(
      LatchError.of('invalid_transaction', {
        message: 'Invalid transaction request: chainId must be a number',
      }),
    )
  }
  return ok(request)
}
