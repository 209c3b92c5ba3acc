/** LatchErrors in the HTTP API: the JSON body of every error answer and its Retry-After header. */
import { ERROR_TYPES, type ErrorType, errorSpec } from './catalogue.ts'
import { LatchError } from './latch-error.ts'

/** The JSON body of every API error answer. */
export interface ApiErrorBody {
  error: { type: ErrorType; code: string; message: string }
  /** The API's id of the request (its `X-Request-Id` answer header), added by the server. */
  requestId?: string
}

export function toApiErrorBody(err: LatchError): ApiErrorBody {
  return { error: { type: err.type, code: err.code, message: err.message } }
}

/** The Retry-After header of an error answer (whole seconds, at least 1), if the error has a wait. */
export function retryAfterHeader(err: LatchError): string | undefined {
  return err.retryAfter === undefined ? undefined : String(Math.max(1, Math.ceil(err.retryAfter)))
}

/** A Retry-After header as seconds; only a positive number counts (an HTTP date or junk is no wait). */
export function parseRetryAfter(header: string | null | undefined): number | undefined {
  const seconds = Number(header)
  return seconds > 0 && seconds < Number.POSITIVE_INFINITY ? seconds : undefined
}

/**
 * Rebuilds the LatchError an API answered with; anything unreadable is an internal error.
 * `retryAfter`: the answer's Retry-After in seconds (parseRetryAfter), where the caller needs it.
 */
export function fromApiError(status: number, body: unknown, retryAfter?: number): LatchError {
  const error = (body as { error?: unknown } | null)?.error
  if (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  ) {
    const { code, message, type } = error as { code: string; message: string; type?: ErrorType }
    const known = errorSpec(code)
    return new LatchError({
      code,
      type: type && ERROR_TYPES.includes(type) ? type : (known?.type ?? 'api_error'),
      message,
      status,
      retryable: known?.retryable ?? status >= 500,
      details: known?.details,
      retryAfter,
    })
  }
  return LatchError.of('internal_error', { status, retryAfter })
}
