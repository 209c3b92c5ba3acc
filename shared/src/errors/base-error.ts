/**
 * The base of Latch's errors outside the catalogue (a configuration refused at start, a CLI
 * usage error, a webhook that does not verify, an EIP-1193 provider error, ...), as viem's
 * BaseError is for viem: each class has a fixed `name`, a short message, optional details and a
 * cause. The message is the short message alone, so what a CLI prints or a caller reads stays
 * one line. LatchError is the catalogue's own class (codes, HTTP status, retryability).
 */
export interface BaseErrorOptions {
  /** More than the short message says: what was seen, what to do. */
  details?: string | undefined
  cause?: unknown
}

export abstract class BaseError extends Error {
  abstract override readonly name: string
  // Declared only (no class fields), as LatchError's: the constructor sets them.
  declare readonly shortMessage: string
  declare readonly details: string | undefined

  constructor(shortMessage: string, options: BaseErrorOptions = {}) {
    super(shortMessage, options.cause === undefined ? undefined : { cause: options.cause })
    this.shortMessage = shortMessage
    this.details = options.details
  }
}
