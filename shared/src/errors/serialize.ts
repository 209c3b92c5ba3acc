/** LatchErrors across frames (structured clone, JSON) and anything thrown turned into one. */
import {
  type ClientErrorCode,
  ERROR_TYPES,
  ERRORS,
  type ErrorSpec,
  errorSpec,
} from './catalogue.ts'
import { LatchError } from './latch-error.ts'

/** A LatchError as a plain object that survives structured clone and JSON: its catalogue entry, its code and wait. */
export type SerializedLatchError = ErrorSpec & {
  __latch_error__: true
  code: string
  retryAfter?: number
}

/** Any thrown value as a serialized LatchError; unknown failures become internal errors. */
export function serializeError(e: unknown): SerializedLatchError {
  const err = toLatchError(e)
  // Fields the error lacks stay undefined: JSON drops them and deserializeError reads none.
  return {
    __latch_error__: true,
    code: err.code,
    type: err.type,
    message: err.message,
    status: err.status,
    retryable: err.retryable,
    details: err.details,
    rpcCode: err.rpcCode,
    retryAfter: err.retryAfter,
  }
}

export function isSerializedError(value: unknown): value is SerializedLatchError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { __latch_error__?: unknown }).__latch_error__ === true &&
    typeof (value as { code?: unknown }).code === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  )
}

const number = (value: unknown): number | undefined =>
  typeof value === 'number' ? value : undefined

export function deserializeError(value: unknown): LatchError {
  if (!isSerializedError(value)) return toLatchError(value)
  const known = errorSpec(value.code)
  return new LatchError({
    code: value.code,
    type: ERROR_TYPES.includes(value.type) ? value.type : (known?.type ?? 'client_error'),
    message: value.message,
    status: number(value.status),
    retryable: typeof value.retryable === 'boolean' ? value.retryable : known?.retryable,
    details: typeof value.details === 'string' ? value.details : undefined,
    rpcCode: number(value.rpcCode),
    retryAfter: number(value.retryAfter),
  })
}

/**
 * EIP-1193 and JSON-RPC codes to their catalogue entries. The first `rpc_` entry with a code is
 * its generic form: -32002 maps to rpc_resource_unavailable, not to the three variants after it.
 */
const RPC_CODES = new Map<number, ClientErrorCode>()
for (const [code, spec] of Object.entries(ERRORS) as [ClientErrorCode, ErrorSpec][]) {
  const rpc = spec.rpcCode
  if (rpc !== undefined && code.startsWith('rpc_') && !RPC_CODES.has(rpc)) RPC_CODES.set(rpc, code)
}

/** The catalogue entry for a provider error code, if it is a standard one. */
export function rpcErrorCode(rpcCode: number): ClientErrorCode | undefined {
  return RPC_CODES.get(rpcCode)
}

/** Turns anything thrown (ours, an EIP-1193 error, an Error, a string) into a LatchError. */
export function toLatchError(e: unknown): LatchError {
  if (e instanceof LatchError) return e
  if (isSerializedError(e)) return deserializeError(e)
  if (typeof e === 'object' && e !== null) {
    const rpc = (e as { code?: unknown }).code
    if (typeof rpc === 'number') {
      const code = rpcErrorCode(rpc)
      if (code) {
        const message = (e as { message?: unknown }).message
        return LatchError.of(code, {
          message: typeof message === 'string' && message ? message : ERRORS[code].message,
          cause: e,
        })
      }
    }
  }
  return LatchError.of('internal_error', { cause: e })
}
