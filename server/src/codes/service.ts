/**
 * One-time codes for e-mail and SMS: stored only as an HMAC under the server secret, with
 * attempts counted in the same statement that reads the code, so parallel guesses cannot
 * spend more than the budget.
 */
import { type CodeChannel, LatchError } from '@latch/shared'
import { sql } from 'kysely'
import type { Deps } from '../context.ts'
import { randomCode, sameDigest } from '../crypto.ts'
import type { Db } from '../db/index.ts'
import { type Count, countEach, hit, peek, refund, tooManyRequests } from '../ratelimit.ts'
import { refusal } from '../refusals.ts'
import { CODE_TTL_MS } from './lifetimes.ts'

// Where it always was, for its readers; it lives in lifetimes.ts (delivery.ts reads it there).
export { CODE_TTL_MS }

/** Wrong tries that burn a code. */
export const MAX_CODE_ATTEMPTS = 5
/** A new code no sooner than this after the last one. */
export const RESEND_INTERVAL_MS = 60_000
/** Codes per identifier per hour. */
export const SENDS_PER_HOUR = 5
const SEND_LIMIT = { max: SENDS_PER_HOUR, windowMs: 60 * 60_000 }
/**
 * Wrong codes per identifier per day, across every code sent to it. A new code starts with
 * fresh tries, so without this an identifier could be guessed at about 25 times an hour
 * forever.
 */
export const FAILED_ATTEMPTS = { max: 20, windowMs: 24 * 60 * 60_000 }
/** Init and authenticate calls per client IP. */
export const IP_LIMIT = { max: 30, windowMs: 5 * 60_000 }

type CodeDeps = Pick<Deps, 'db' | 'clock' | 'secrets'>

function digest(
  deps: CodeDeps,
  appId: string,
  channel: CodeChannel,
  identifier: string,
  code: string,
) {
  return deps.secrets.hmac(`${appId}\n${channel}\n${identifier}\n${code}`)
}

function failuresKey(appId: string, channel: CodeChannel, identifier: string): string {
  return `fail:${appId}:${channel}:${identifier}`
}

function ipLimitKey(ip: string): string {
  return `ip:${ip}`
}

/** Counts a call against the client IP's budget. */
export function limitIp(deps: CodeDeps, ip: string): Promise<void> {
  return hit(deps.db, deps.clock, ipLimitKey(ip), IP_LIMIT)
}

/**
 * A fresh code for the identifier, replacing any earlier one. Throws 429 within 60 s of the
 * last unused code (a resend), past 5 codes in the hour, or once the identifier's wrong codes
 * of the day are spent (a code that could not be tried is not worth sending). `charge` counts
 * the send against further budgets in the same transaction: when it throws, no code is stored
 * and no budget spent.
 */
export async function issueCode(
  deps: CodeDeps,
  appId: string,
  channel: CodeChannel,
  identifier: string,
  charge?: (trx: Db) => Promise<void>,
): Promise<string> {
  const failures = await peek(
    deps.db,
    deps.clock,
    failuresKey(appId, channel, identifier),
    FAILED_ATTEMPTS,
  )
  if (failures.count >= FAILED_ATTEMPTS.max) {
    throw refusal('too_many_failed_attempts', failures.retryAfterS)
  }
  const code = randomCode()
  const now = deps.clock.now()
  const hmac = digest(deps, appId, channel, identifier, code)
  const resendAfter = new Date(now.getTime() - RESEND_INTERVAL_MS)
  /** Stores the code, or throws 429 while the last one is within the resend interval. */
  const store = async (db: Db): Promise<void> => {
    // Insert, or replace a code that was used or is older than the resend interval: one atomic
    // statement, so two parallel sends cannot both pass.
    const row = await db
      .insertInto('verification_codes')
      .values({
        app_id: appId,
        channel,
        identifier,
        code_hmac: hmac,
        created_at: now,
        expires_at: new Date(now.getTime() + CODE_TTL_MS[channel]),
        attempts: 0,
        consumed_at: null,
      })
      .onConflict((oc) =>
        oc
          .columns(['app_id', 'channel', 'identifier'])
          .doUpdateSet((eb) => ({
            code_hmac: eb.ref('excluded.code_hmac'),
            created_at: eb.ref('excluded.created_at'),
            expires_at: eb.ref('excluded.expires_at'),
            attempts: 0,
            consumed_at: null,
          }))
          // A used code never delays the next sign-in; only a live or burnt one does.
          .where((eb) =>
            eb.or([
              eb('verification_codes.created_at', '<=', resendAfter),
              eb('verification_codes.consumed_at', 'is not', null),
            ]),
          ),
      )
      .returning('created_at')
      .executeTakeFirst()
    if (!row) {
      const last = await db
        .selectFrom('verification_codes')
        .select('created_at')
        .where('app_id', '=', appId)
        .where('channel', '=', channel)
        .where('identifier', '=', identifier)
        .executeTakeFirst()
      const wait = last ? last.created_at.getTime() + RESEND_INTERVAL_MS - now.getTime() : 1000
      throw tooManyRequests(Math.max(1, Math.ceil(wait / 1000)))
    }
  }
  const sends = `send:${appId}:${channel}:${identifier}`
  if (charge) {
    // Further budgets (SMS): all or nothing in one transaction.
    await deps.db.transaction().execute(async (trx) => {
      await store(trx)
      await hit(trx, deps.clock, sends, SEND_LIMIT)
      await charge(trx)
    })
  } else {
    // One budget needs no transaction (two round trips fewer): the hour's count first, then the
    // code; a code refused for the resend interval gives the count back, so neither a refused
    // send nor a refused resend spends the hour's budget.
    await hit(deps.db, deps.clock, sends, SEND_LIMIT)
    try {
      await store(deps.db)
    } catch (e) {
      await refund(deps.db, sends)
      throw e
    }
  }
  return code
}

/**
 * Consumes the code if it is right; otherwise counts a try and throws 422. Every try first
 * takes one of the identifier's wrong codes of the day (atomically, so parallel guesses cannot
 * overdraw it) and a right code gives it back; past the budget: too_many_failed_attempts.
 * The call also counts against the client IP's budget (429 past it).
 */
export async function verifyCode(
  deps: CodeDeps,
  appId: string,
  channel: CodeChannel,
  identifier: string,
  code: string,
  ip: string,
): Promise<void> {
  const now = deps.clock.now()
  const failures = failuresKey(appId, channel, identifier)
  // The IP's call and the reserved try in one statement; an IP over its budget is refused
  // first, as before, and gets the try back.
  const [call, reserved] = (await countEach(deps.db, deps.clock, [
    { key: ipLimitKey(ip), limit: IP_LIMIT },
    { key: failures, limit: FAILED_ATTEMPTS },
  ])) as [Count, Count]
  if (call.count > IP_LIMIT.max) {
    await refund(deps.db, failures)
    throw tooManyRequests(call.retryAfterS)
  }
  if (reserved.count > FAILED_ATTEMPTS.max) {
    throw refusal('too_many_failed_attempts', reserved.retryAfterS)
  }
  const expected = digest(deps, appId, channel, identifier, code.trim())
  // A code sent before a rotation of the server secret was digested under the previous one.
  const before = deps.secrets.previous
    ? digest({ ...deps, secrets: deps.secrets.previous }, appId, channel, identifier, code.trim())
    : expected
  // One statement (it was three): the try is counted, the code consumed when it is the right
  // one, and the try taken from the day's budget given back then. The row lock of the UPDATE
  // orders parallel tries, so no more than MAX_CODE_ATTEMPTS of them pass and one code is
  // consumed once; the refund sees only this statement's consumption.
  const { rows } = await sql<{ code_hmac: string; consumed_at: Date | null }>`
    WITH tried AS (
      UPDATE verification_codes
      SET attempts = attempts + 1,
        consumed_at = CASE WHEN code_hmac IN (${expected}, ${before}) THEN ${now}::timestamptz END
      WHERE app_id = ${appId} AND channel = ${channel} AND identifier = ${identifier}
        AND consumed_at IS NULL AND expires_at > ${now} AND attempts < ${MAX_CODE_ATTEMPTS}
      RETURNING code_hmac, consumed_at
    ), refunded AS (
      UPDATE rate_limits SET count = count - 1
      WHERE key = ${failures} AND count > 0
        AND EXISTS (SELECT 1 FROM tried WHERE consumed_at IS NOT NULL)
    )
    SELECT code_hmac, consumed_at FROM tried`.execute(deps.db)
  const tried = rows[0]
  // The digest comparison stays constant-time in this process as well.
  if (
    !tried ||
    tried.consumed_at === null ||
    !(sameDigest(tried.code_hmac, expected) || sameDigest(tried.code_hmac, before))
  ) {
    throw LatchError.of('invalid_verification_code')
  }
}
