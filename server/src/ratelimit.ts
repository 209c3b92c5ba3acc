/**
 * Fixed-window counters in the database, so every server process shares them, and the client
 * address they are keyed by.
 */
import { isIP } from 'node:net'
import { LatchError } from '@latch/shared'
import { sql } from 'kysely'
import type { Clock } from './clock.ts'
import type { Db } from './db/index.ts'

// Whose address a request is: read by config.ts, which must not import this file (it would run
// in a circle through context.ts), so it lives in trust-proxy.ts, below both.
export {
  clientAddress,
  parseTrustProxy,
  peerIsTrusted,
  TRUST_NONE,
  type TrustProxy,
} from './trust-proxy.ts'

export interface Limit {
  max: number
  windowMs: number
}

export interface Count {
  /** Hits in the current window, this one included. */
  count: number
  /** Seconds until the window ends (at least 1). */
  retryAfterS: number
}

/**
 * Counts one hit on `key` and answers the window's count, without judging it. The count and
 * the window roll-over are one atomic statement, so parallel hits never lose one.
 */
export async function count(db: Db, clock: Clock, key: string, limit: Limit): Promise<Count> {
  const [counted] = await countEach(db, clock, [{ key, limit }])
  return counted as Count
}

/**
 * Counts one hit on each key, with its own window, in one statement (one round trip for the
 * several budgets a request spends), and answers the counts in the order given. Keys must
 * differ. Rows are locked in key order, so two requests sharing keys never wait on each other
 * in a cycle.
 */
export async function countEach(
  db: Db,
  clock: Clock,
  hits: readonly { key: string; limit: Limit }[],
): Promise<Count[]> {
  const now = clock.now()
  const sorted = [...hits].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  // Each row carries its window as expires_at - window_start of the values it would insert, so
  // one statement serves keys with different windows.
  const window = sql`(excluded.expires_at - excluded.window_start)`
  const stale = sql`rate_limits.window_start <= excluded.window_start - ${window}`
  const rows = await db
    .insertInto('rate_limits')
    .values(
      sorted.map(({ key, limit }) => ({
        key,
        window_start: now,
        count: 1,
        expires_at: new Date(now.getTime() + limit.windowMs),
      })),
    )
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql<number>`CASE WHEN ${stale} THEN 1 ELSE rate_limits.count + 1 END`,
        window_start: sql<Date>`CASE WHEN ${stale} THEN excluded.window_start ELSE rate_limits.window_start END`,
        expires_at: sql<Date>`CASE WHEN ${stale} THEN excluded.expires_at ELSE rate_limits.window_start + ${window} END`,
      }),
    )
    .returning(['key', 'count', 'window_start'])
    .execute()
  const byKey = new Map(rows.map((r) => [r.key, r]))
  return hits.map(({ key, limit }) => {
    const row = byKey.get(key)
    if (!row) throw new Error(`no rate-limit row for ${key}`)
    return { count: row.count, retryAfterS: secondsLeft(row.window_start, limit, now) }
  })
}

/** The window's count without adding to it (0 when the window is over or never began). */
export async function peek(db: Db, clock: Clock, key: string, limit: Limit): Promise<Count> {
  const now = clock.now()
  const row = await db
    .selectFrom('rate_limits')
    .select(['count', 'window_start'])
    .where('key', '=', key)
    .where('window_start', '>', new Date(now.getTime() - limit.windowMs))
    .executeTakeFirst()
  return row
    ? { count: row.count, retryAfterS: secondsLeft(row.window_start, limit, now) }
    : { count: 0, retryAfterS: 1 }
}

/** Takes back one hit counted on `key` (a reserved try that turned out to be allowed). */
export async function refund(db: Db, key: string): Promise<void> {
  await db
    .updateTable('rate_limits')
    .set({ count: sql<number>`count - 1` })
    .where('key', '=', key)
    .where('count', '>', 0)
    .execute()
}

function secondsLeft(windowStart: Date, limit: Limit, now: Date): number {
  return Math.max(1, Math.ceil((windowStart.getTime() + limit.windowMs - now.getTime()) / 1000))
}

/**
 * Counts one hit on `key` and throws too_many_requests (429, with the seconds to wait) when
 * the window already holds `max`; `error` replaces the generic 429 with a more telling one.
 */
export async function hit(
  db: Db,
  clock: Clock,
  key: string,
  limit: Limit,
  error: (retryAfterS: number) => LatchError = tooManyRequests,
): Promise<void> {
  const seen = await count(db, clock, key, limit)
  if (seen.count > limit.max) throw error(seen.retryAfterS)
}

/** A 429 carrying its Retry-After in seconds. */
export function tooManyRequests(retryAfterS: number): LatchError {
  return LatchError.of('too_many_requests', { retryAfter: retryAfterS })
}

/**
 * The rate-limit key of an address: IPv4 as is, IPv6 as its /64 prefix, since one subscriber
 * commonly holds a whole /64 and could otherwise rotate through 2^64 addresses.
 */
export function ipKey(address: string): string {
  if (isIP(address) !== 6) return address
  const groups = expandIpv6(address)
  if (!groups) return address
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it does not parse. */
function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase().split('%')[0] ?? ''
  // A trailing dotted IPv4 part (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is two groups.
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []
  const head = parse(halves[0])
  const tail = parse(halves[1])
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0
  const groups = [...head, ...new Array<number>(fill).fill(0), ...tail]
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) {
    return undefined
  }
  return groups
}
