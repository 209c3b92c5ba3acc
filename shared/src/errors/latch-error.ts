/** The one error class of Latch. */
import { type ErrorCode, type ErrorType, errorSpec } from './catalogue.ts'

export interface LatchErrorInit {
  code: string
  type: ErrorType
  message: string
  status?: number | undefined
  retryable?: boolean | undefined
  details?: string | undefined
  rpcCode?: number | undefined
  /** Seconds to wait before trying again; the API answers it as the Retry-After header. */
  retryAfter?: number | undefined
  cause?: unknown
}

/** `code` is an ErrorCode wherever the error is ours. */
export class LatchError extends Error {
  override readonly name = 'LatchError'
  // Declared only (no class fields): the constructor sets each, and every host page's SDK
  // would otherwise carry the field definitions too.
  declare readonly code: string
  declare readonly type: ErrorType
  declare readonly status: number | undefined
  declare readonly retryable: boolean
  declare readonly details: string | undefined
  declare readonly rpcCode: number | undefined
  declare readonly retryAfter: number | undefined

  constructor(init: LatchErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.code = init.code
    this.type = init.type
    this.status = init.status
    this.retryable = init.retryable ?? false
    this.details = init.details
    this.rpcCode = init.rpcCode
    this.retryAfter = init.retryAfter
  }

  /**
   * An error of the catalogue, optionally with another message or details.
   * @example throw LatchError.of('invalid_verification_code')
   * @example throw LatchError.of('too_many_requests', { retryAfter: 30 })
   */
  static of(
    code: ErrorCode,
    overrides: Partial<Omit<LatchErrorInit, 'code' | 'type'>> = {},
  ): LatchError {
    const spec = errorSpec(code)
    // A server code the server has not merged (mergeErrors): a mistake in Latch, never input.
    if (!spec) throw TypeError(code)
    return new LatchError({ code, ...spec, ...overrides })
  }

  is(code: ErrorCode): boolean {
    return this.code === code
  }
}

export function isLatchError(e: unknown): e is LatchError {
  return e instanceof LatchError
}
