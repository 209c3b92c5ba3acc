/** Fixed-window counters in the database, so every server process shares them. */
import { LatchError } from '@latch/shared'
import { sql } from 'kysely'
import type { Clock } from './context.ts'
import type { Db } from './db/index.ts'

export interface Limit {
  max: number
  windowMs: number
}

/**
 * Counts one hit on `key` and throws too_many_requests (429, with the seconds to wait) when
 * the window already holds `max`. The count and the check are one atomic statement.
 */
export async function hit(db: Db, clock: Clock, key: string, limit: Limit): Promise<void> {
  const now = clock.now()
  const stale = new Date(now.getTime() - limit.windowMs)
  const row = await db
    .insertInto('rate_limits')
    .values({ key, window_start: now, count: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql<number>`CASE WHEN rate_limits.window_start <= ${stale} THEN 1 ELSE rate_limits.count + 1 END`,
        window_start: sql<Date>`CASE WHEN rate_limits.window_start <= ${stale} THEN ${now} ELSE rate_limits.window_start END`,
      }),
    )
    .returning(['count', 'window_start'])
    .executeTakeFirstOrThrow()
  if (row.count > limit.max) {
    const retryAfterS = Math.max(
      1,
      Math.ceil((row.window_start.getTime() + limit.windowMs - now.getTime()) / 1000),
    )
    throw tooManyRequests(retryAfterS)
  }
}

/** A 429 carrying its Retry-After in seconds. */
export function tooManyRequests(retryAfterS: number): LatchError {
  const err = LatchError.of('too_many_requests')
  retryAfter.set(err, retryAfterS)
  return err
}

const retryAfter = new WeakMap<LatchError, number>()

/** Seconds a 429 asks the client to wait, if the error carries one. */
export function retryAfterOf(err: LatchError): number | undefined {
  return retryAfter.get(err)
}
