/**
 * Which failures mean "the database is out of reach for now" rather than "this request is
 * wrong" or "Latch has a bug": a restart, a failover, a terminated backend, a refused or timed
 * out connection, or every pooled connection busy past the wait bound. The API answers these
 * with 503 and Retry-After (api.ts), never 500: the same request succeeds once the database is
 * back, and nothing about it needs a person to look.
 */
import { BaseError } from '@latch/shared'

/** Seconds a client is told to wait after a lost or refused database connection. */
export const DB_LOST_RETRY_AFTER_S = 2
/** Seconds a client is told to wait when the pool shed its request (every connection busy). */
export const DB_BUSY_RETRY_AFTER_S = 1

/** Why a request could not reach the database. */
export type UnavailableReason = 'busy' | 'lost'

/**
 * Thrown by the pool wrapper (db/index.ts) when a request would wait for a connection longer
 * than the bound: the request is answered 503 at once instead of queueing.
 */
export class DatabaseBusyError extends BaseError {
  override readonly name = 'DatabaseBusyError'
}

/**
 * SQLSTATEs of a connection the server ended or would not open: 57P01 admin_shutdown (a fast
 * restart, pg_terminate_backend), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting or
 * in recovery), 53300 too_many_connections, and class 08 (connection exceptions).
 */
function isLostState(code: string): boolean {
  return (
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '53300' ||
    /^08[0-9A-Z]{3}$/.test(code)
  )
}

/**
 * Node's socket errors, as the driver passes them on when a connection to the database fails
 * mid-statement. Read on the error itself only, never on a cause: an HTTP call to a provider
 * (fetch's "fetch failed", a LatchError wrapping an SMTP failure) carries the same codes one
 * level down, and is not the database.
 */
const SOCKET_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
])

/** The driver's own messages (pg and pg-pool throw plain Errors for these, without a code). */
const LOST_MESSAGES = [
  /^Connection terminated/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^Cannot use a pool after calling end on the pool/,
]
const BUSY_MESSAGE = /^timeout exceeded when trying to connect/

/** Thrown by the pool wrapper for a connection that could not be opened (see db/index.ts). */
export class DatabaseUnreachableError extends BaseError {
  override readonly name = 'DatabaseUnreachableError'
}

function reasonOf(e: unknown, top: boolean): UnavailableReason | null {
  if (e instanceof DatabaseBusyError) return 'busy'
  if (e instanceof DatabaseUnreachableError) return 'lost'
  if (typeof e !== 'object' || e === null) return null
  const { code, message, severity } = e as { code?: unknown; message?: unknown; severity?: unknown }
  // A PostgreSQL error answer (pg's DatabaseError carries the severity).
  if (typeof code === 'string' && typeof severity === 'string' && isLostState(code)) return 'lost'
  if (top && typeof code === 'string' && SOCKET_ERRNOS.has(code)) return 'lost'
  if (typeof message !== 'string') return null
  if (BUSY_MESSAGE.test(message)) return 'busy'
  return LOST_MESSAGES.some((m) => m.test(message)) ? 'lost' : null
}

/**
 * Why `e` (or an error it wraps through `cause`) is the database being out of reach; null
 * when it is any other failure.
 */
export function databaseUnavailable(e: unknown): UnavailableReason | null {
  let item = e
  for (let depth = 0; depth < 8 && typeof item === 'object' && item !== null; depth++) {
    const reason = reasonOf(item, depth === 0)
    if (reason) return reason
    item = (item as { cause?: unknown }).cause
  }
  return null
}
