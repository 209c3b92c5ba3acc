/**
 * Delivery: every API process runs this loop. It leases due deliveries (FOR UPDATE SKIP LOCKED,
 * so two processes never take the same row, and a lease that outlives its process expires so
 * another one takes the row over), signs and sends each, and records the attempt. A failure is
 * retried with exponential backoff and jitter until 24 hours after the event, then the delivery
 * is marked failed. A process killed after the commit of a change, before or during the
 * delivery, loses nothing: the row waits in the table for the next lease.
 */
import { createHmac } from 'node:crypto'
import { hostname } from 'node:os'
import { sql } from 'kysely'
import type { Deps } from '../context.ts'
import { randomId } from '../crypto.ts'
import { rowMacHolds } from '../row-mac.ts'
import { openSecret } from './endpoints.ts'
import { retryUntil } from './events.ts'
import { type Resolver, SEND_TIMEOUT_MS, type SendOutcome, sendWebhook } from './send.ts'

/** How often a process looks for due deliveries. */
export const POLL_MS = 1000
/**
 * How long a lease holds a delivery: the send's whole 10 s and time to record the outcome.
 * A process that dies holding one delays that delivery by this much, no more.
 */
export const LEASE_MS = SEND_TIMEOUT_MS + 10_000
const BATCH = 10
/** Backoff: 5 s after the first failure, doubling, at most 2 hours apart, ±20 % jitter. */
const FIRST_RETRY_MS = 5_000
const MAX_RETRY_MS = 2 * 60 * 60_000
/** Finished deliveries and their attempts are kept this long for the log and replays. */
export const KEEP_FINISHED_MS = 7 * 24 * 60 * 60_000
const PRUNE_EVERY_MS = 10 * 60_000
const MAX_ERROR_LENGTH = 500

type WorkerDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'secrets' | 'log'>

export interface WorkerOptions {
  /** Host names to addresses (tests); the system resolver otherwise. */
  resolve?: Resolver
  pollMs?: number
  /** Jitter's randomness, in [0, 1). */
  random?: () => number
}

/** The Standard Webhooks signature header value: `v1,` and the base64 HMAC-SHA256. */
export function signPayload(secret: string, id: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64')}`
}

/** Milliseconds before the next try after the n-th failed attempt. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS)
  return Math.round(base * (0.8 + 0.4 * random()))
}

interface Leased {
  id: string
  event_id: string
  payload: string
  attempts: number
  retry_until: Date
  endpoint_id: string
  app_id: string
  url: string
  secret_sealed: string
  endpoint_mac: string
}

export interface Worker {
  /** One pass: lease what is due, send it, record it. Answers how many were leased. */
  runOnce(): Promise<number>
  /** Runs a pass now, then every POLL_MS (sooner while full batches keep coming). */
  start(): void
  /** Stops looking; sends under way are cut and their leases left to expire. */
  stop(): Promise<void>
}

export function createWebhookWorker(deps: WorkerDeps, options: WorkerOptions = {}): Worker {
  const owner = `${hostname()}:${process.pid}:${randomId(8)}`
  const random = options.random ?? Math.random
  const stopping = new AbortController()
  let lastPrune = 0
  /**
   * Whether any app had an endpoint at the last look. Without one there is nothing to deliver
   * and nothing to report: a pass that fails then (the database restarting, closed under a
   * stopping process) says nothing about webhooks.
   */
  let endpointsSeen = false
  /** When a failing pass was last reported: a database down for a while is one line a minute. */
  let lastFailureLog = Number.NEGATIVE_INFINITY

  async function anyEndpoint(): Promise<boolean> {
    const row = await deps.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .limit(1)
      .executeTakeFirst()
    endpointsSeen = row !== undefined
    return endpointsSeen
  }

  async function lease(): Promise<Leased[]> {
    const now = deps.clock.now()
    const until = new Date(now.getTime() + LEASE_MS)
    const { rows } = await sql<Leased>`
      WITH due AS (
        SELECT d.id FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}
          AND (d.lease_until IS NULL OR d.lease_until <= ${now})
        ORDER BY d.next_attempt_at
        LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE webhook_deliveries d
      SET lease_owner = ${owner}, lease_until = ${until}, attempts = d.attempts + 1
      FROM due, webhook_endpoints e
      WHERE d.id = due.id AND e.id = d.endpoint_id
      RETURNING d.id, d.event_id, d.payload, d.attempts, d.retry_until, e.id AS endpoint_id,
        e.app_id, e.url, e.secret_sealed, e.mac AS endpoint_mac`.execute(deps.db)
    return rows
  }

  /**
   * The signed request to the endpoint, or the outcome of one never sent: a URL not written
   * with this server secret, or a signing secret that does not open with it.
   */
  async function send(row: Leased, timestampS: number): Promise<SendOutcome> {
    let secret: string | null = null
    // The URL counts only under its MAC: one changed in the database without the server secret
    // is never sent to (the events carry users' addresses and numbers, validly signed).
    const urlHolds = rowMacHolds(
      deps,
      'webhook_endpoint',
      { id: row.endpoint_id, app_id: row.app_id, url: row.url },
      row.endpoint_mac,
      row.endpoint_id,
    )
    try {
      if (urlHolds) secret = openSecret(deps, row.endpoint_id, row.secret_sealed)
    } catch {
      // Sealed under another server secret: an attempt that fails like any other, so the
      // delivery still ends (failed after 24 hours) instead of being leased forever.
    }
    if (secret === null) {
      return {
        status: null,
        error: urlHolds
          ? "the endpoint's signing secret does not open with this server secret"
          : "the endpoint's URL was not written with this server secret: not sent",
        retryAfterS: null,
        bytesRead: 0,
        address: null,
      }
    }
    return sendWebhook({
      url: row.url,
      headers: {
        'user-agent': 'Latch-Webhooks/1',
        'webhook-id': row.event_id,
        'webhook-timestamp': String(timestampS),
        'webhook-signature': signPayload(secret, row.event_id, timestampS, row.payload),
      },
      body: row.payload,
      production: deps.config.production,
      resolve: options.resolve,
      signal: stopping.signal,
    })
  }

  /**
   * When a failed attempt is tried again: after the backoff or the receiver's Retry-After,
   * whichever is later (at most MAX_RETRY_MS), and never past the delivery's retry window;
   * null once the window is over.
   */
  function nextAttempt(row: Leased, outcome: SendOutcome, now: Date): Date | null {
    const wait = Math.min(
      Math.max(retryDelayMs(row.attempts, random), (outcome.retryAfterS ?? 0) * 1000),
      MAX_RETRY_MS,
    )
    const at = Math.min(now.getTime() + wait, row.retry_until.getTime())
    return now.getTime() < row.retry_until.getTime() ? new Date(at) : null
  }

  /** One delivery: sent, then its attempt and its new state recorded under this lease. */
  async function deliver(row: Leased): Promise<void> {
    const started = deps.clock.now()
    const t0 = performance.now()
    const outcome = await send(row, Math.floor(started.getTime() / 1000))
    // A process that is stopping leaves the row leased: another one (or this one started
    // again) sends it once the lease ends. The receiver may see it twice, as the spec allows.
    if (stopping.signal.aborted) return
    const now = deps.clock.now()
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status <= 299
    const error =
      outcome.error ?? (ok ? null : `answered ${outcome.status}${redirectNote(outcome.status)}`)
    const attempt = {
      delivery_id: row.id,
      attempted_at: started,
      duration_ms: Math.round(performance.now() - t0),
      status_code: outcome.status,
      error: error?.slice(0, MAX_ERROR_LENGTH) ?? null,
    }
    if (outcome.status === 410) {
      await gone(row, attempt, now).catch(unlessDeleted)
      return
    }
    const next = ok ? null : nextAttempt(row, outcome, now)
    const status = ok ? 'delivered' : next ? 'pending' : 'failed'
    await deps.db
      .with('attempt', (db) => db.insertInto('webhook_attempts').values(attempt))
      .updateTable('webhook_deliveries')
      .set({
        status,
        next_attempt_at: next ?? now,
        finished_at: status === 'pending' ? null : now,
        last_status: outcome.status,
        last_error: attempt.error,
        lease_owner: null,
        lease_until: null,
      })
      .where('id', '=', row.id)
      .where('lease_owner', '=', owner)
      .execute()
      .catch(unlessDeleted)
  }

  /** 410 Gone: the receiver wants no more; the endpoint is disabled and its queue failed. */
  async function gone(
    row: Leased,
    attempt: {
      delivery_id: string
      attempted_at: Date
      duration_ms: number
      status_code: number | null
      error: string | null
    },
    now: Date,
  ): Promise<void> {
    await deps.db.transaction().execute(async (trx) => {
      await trx.insertInto('webhook_attempts').values(attempt).execute()
      await trx
        .updateTable('webhook_endpoints')
        .set({ disabled_at: now, disabled_reason: 'answered 410 Gone' })
        .where('id', '=', row.endpoint_id)
        .execute()
      await trx
        .updateTable('webhook_deliveries')
        .set({
          status: 'failed',
          finished_at: now,
          last_status: 410,
          last_error: 'the endpoint answered 410 Gone and was disabled',
          lease_owner: null,
          lease_until: null,
        })
        .where('endpoint_id', '=', row.endpoint_id)
        .where('status', '=', 'pending')
        .execute()
    })
    deps.log(`[latch] webhook endpoint ${row.endpoint_id} answered 410 Gone: disabled`)
  }

  async function prune(): Promise<void> {
    const now = deps.clock.now().getTime()
    if (now - lastPrune < PRUNE_EVERY_MS) return
    lastPrune = now
    await deps.db
      .deleteFrom('webhook_deliveries')
      .where('status', '!=', 'pending')
      .where('finished_at', '<', new Date(now - KEEP_FINISHED_MS))
      .execute()
  }

  async function runOnce(): Promise<number> {
    if (stopping.signal.aborted) return 0
    // Deliveries belong to endpoints (removing one removes its queue): none, nothing to do.
    if (!(await anyEndpoint())) return 0
    await prune()
    const rows = await lease()
    await Promise.all(
      rows.map((row) =>
        deliver(row).catch((e: unknown) => {
          if (!stopping.signal.aborted) {
            deps.log(`[latch] webhook delivery ${row.id} failed: ${(e as Error).message}`)
          }
        }),
      ),
    )
    return rows.length
  }

  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  const loop = () => {
    running = (async () => {
      try {
        // A full batch: more may be due at once.
        while ((await runOnce()) === BATCH && !stopping.signal.aborted) {}
      } catch (e) {
        const now = performance.now()
        if (!stopping.signal.aborted && endpointsSeen && now - lastFailureLog >= 60_000) {
          lastFailureLog = now
          deps.log(`[latch] webhook delivery failed: ${(e as Error).message}`)
        }
      }
      if (!stopping.signal.aborted) {
        timer = setTimeout(loop, options.pollMs ?? POLL_MS)
        timer.unref()
      }
    })()
  }

  return {
    runOnce,
    start() {
      loop()
    },
    async stop() {
      stopping.abort()
      clearTimeout(timer)
      await running
    },
  }
}

/**
 * The delivery was deleted while it was being sent (its endpoint removed, or its user deleted
 * by the user API): its attempt has no row left to belong to, and nothing is to be recorded.
 */
function unlessDeleted(e: unknown): void {
  if ((e as { code?: unknown }).code !== '23503') throw e
}

function redirectNote(status: number | null): string {
  return status !== null && status >= 300 && status < 400 ? ' (redirects are not followed)' : ''
}

/** Starts the delivery loop of this process; the function it answers stops it. */
export function startWebhookWorker(
  deps: WorkerDeps,
  options: WorkerOptions = {},
): () => Promise<void> {
  const worker = createWebhookWorker(deps, options)
  worker.start()
  return () => worker.stop()
}

/**
 * Sends a delivery again (`dlv_…`), or every delivery of an event (`msg_…`), with the same
 * webhook-id: retried from now for another 24 hours. Answers how many were queued.
 */
export async function replay(
  deps: Pick<Deps, 'db' | 'clock'>,
  id: string,
): Promise<{ queued: number; disabled: string[] }> {
  const now = deps.clock.now()
  const column = id.startsWith('msg_') ? 'event_id' : 'id'
  const rows = await deps.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select(['d.id', 'e.id as endpoint_id', 'e.disabled_at'])
    .where(`d.${column}`, '=', id)
    .execute()
  const live = rows.filter((r) => r.disabled_at === null).map((r) => r.id)
  if (live.length > 0) {
    await deps.db
      .updateTable('webhook_deliveries')
      .set({
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        retry_until: retryUntil(now),
        finished_at: null,
      })
      .where('id', 'in', live)
      .execute()
  }
  return {
    queued: live.length,
    disabled: [...new Set(rows.filter((r) => r.disabled_at !== null).map((r) => r.endpoint_id))],
  }
}
