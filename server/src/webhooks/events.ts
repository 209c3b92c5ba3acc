/**
 * The webhook outbox: an event is written as one delivery row per endpoint of the app that
 * wants it, by one INSERT ... SELECT that runs inside the transaction (or the single statement)
 * of the change it reports. A change that rolls back takes its event with it, and a committed
 * change has its event stored before any process could die before sending it.
 */
import { type RawBuilder, sql } from 'kysely'
import { randomId } from '../crypto.ts'
import type { Db } from '../db/index.ts'

export const WEBHOOK_EVENT_TYPES = [
  'user.created',
  'user.authenticated',
  'user.linked_account',
  'user.unlinked_account',
  'user.deleted',
  'wallet.created',
  'wallet.recovered',
  'wallet.recovery_failed',
  'wallet.batch_sponsored',
] as const

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** How long a delivery is retried before it is marked failed. */
export const RETRY_WINDOW_MS = 24 * 60 * 60_000

export const retryUntil = (from: Date): Date => new Date(from.getTime() + RETRY_WINDOW_MS)

/** The filter that takes every event type. */
export const ALL_EVENTS = '*'

export interface WebhookEvent {
  appId: string
  type: WebhookEventType
  /** What the event says; never a token, a key share or a secret. */
  data: Record<string, unknown>
  /** When the change happened (the payload's `timestamp`). */
  now: Date
}

/** A new event id: `msg_` and 27 random characters (no `.`, which the signed content separates on). */
export function newEventId(): string {
  return `msg_${randomId(27)}`
}

/** The body every delivery of the event sends, byte for byte: `{ type, timestamp, data }`. */
export function eventBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.now.toISOString(), data: event.data })
}

/**
 * The outbox insert for one event, as a statement of its own (or, through eventCte, part of the
 * change's statement: `db.with('webhook_event', () => eventCte(event))...`). It writes
 * nothing when no live endpoint of the app wants the type, so an app without webhooks pays one
 * indexed lookup of its endpoints.
 */
export function eventInsert(
  event: WebhookEvent,
  id = newEventId(),
): RawBuilder<Record<string, unknown>> {
  const type = event.type
  return sql`INSERT INTO webhook_deliveries
      (id, event_id, endpoint_id, app_id, event_type, payload, status, attempts,
       next_attempt_at, retry_until, created_at)
    SELECT 'dlv_' || replace(CAST(gen_random_uuid() AS text), '-', ''), CAST(${id} AS text),
      e.id, e.app_id, CAST(${type} AS text), CAST(${eventBody(event)} AS text), 'pending', 0,
      CAST(${event.now} AS timestamptz), CAST(${retryUntil(event.now)} AS timestamptz),
      CAST(${event.now} AS timestamptz)
    FROM webhook_endpoints e
    WHERE e.app_id = ${event.appId} AND e.disabled_at IS NULL
      AND (e.events @> CAST(${JSON.stringify([ALL_EVENTS])} AS jsonb)
        OR e.events @> CAST(${JSON.stringify([type])} AS jsonb))`
}

/** The outbox insert as a data-modifying CTE of the change's own statement (parenthesized). */
export function eventCte(event: WebhookEvent): RawBuilder<Record<string, unknown>> {
  return sql`(${eventInsert(event)})`
}

/**
 * Writes an event to the outbox with `db`, which should be the transaction of the change it
 * reports (the user API's deletion calls it with its own). Answers the event id.
 * @example await enqueueEvent(trx, { appId, type: 'user.deleted', data: { id }, now })
 */
export async function enqueueEvent(db: Db, event: WebhookEvent): Promise<string> {
  const id = newEventId()
  await eventInsert(event, id).execute(db)
  return id
}

/**
 * Deletes every outbox row and logged delivery of the app whose payload names the user: for a
 * user's deletion, before it enqueues user.deleted, so no copy of the user's data waits in the
 * outbox (an event not yet delivered is dropped with it). Answers how many rows went.
 */
export async function forgetUserEvents(db: Db, appId: string, userId: string): Promise<number> {
  const result = await db
    .deleteFrom('webhook_deliveries')
    .where('app_id', '=', appId)
    .where(sql<boolean>`position(${JSON.stringify(userId)} in payload) > 0`)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
