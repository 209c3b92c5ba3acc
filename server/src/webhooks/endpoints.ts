/**
 * An app's webhook endpoints: where events go, which ones, and the signing secret of each
 * (Standard Webhooks' `whsec_` form, shown once when the endpoint is made, kept sealed under
 * the server secret because every delivery is signed with it).
 */
import { randomBytes } from 'node:crypto'
import { isIP } from 'node:net'
import { LatchError, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@latch/shared'
import type { Deps } from '../context.ts'
import { randomId } from '../crypto.ts'
import { json } from '../db/index.ts'
import { rowMac } from '../row-mac.ts'
import { isLoopbackHost, refusedAddress } from './addresses.ts'
import { ALL_EVENTS } from './events.ts'

const MAX_URL_LENGTH = 2048
/** Endpoints one app may have: each event is written once per endpoint. */
export const MAX_ENDPOINTS_PER_APP = 20
const SECRET_PREFIX = 'whsec_'

type EndpointDeps = Pick<Deps, 'db' | 'config' | 'secrets' | 'clock'>

export interface WebhookEndpoint {
  id: string
  appId: string
  url: string
  /** Event types it receives; `['*']` for every one. */
  events: string[]
  createdAt: string
  disabledAt: string | null
  disabledReason: string | null
}

const invalid = (message: string) => LatchError.of('invalid_data', { message })

/**
 * The URL as stored, or invalid_data saying why not: https (plain http only to a loopback
 * host outside production), no credentials, no fragment; in production no IP address that is
 * not public (host names are checked at every send, once resolved).
 */
export function checkEndpointUrl(raw: string, production: boolean): string {
  if (raw.length > MAX_URL_LENGTH) throw invalid('The webhook URL is too long')
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw invalid(`The webhook URL is not a URL: '${raw}'`)
  }
  const loopback = isLoopbackHost(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback && !production)) {
    throw invalid(
      production
        ? 'The webhook URL must use https:'
        : 'The webhook URL must use https: (plain http: only to localhost, 127.0.0.1 or [::1])',
    )
  }
  if (url.username || url.password)
    throw invalid('The webhook URL may not carry a user name or password')
  if (url.hash) throw invalid('The webhook URL may not carry a fragment')
  if (production) {
    const host = url.hostname.replace(/^\[|\]$/g, '')
    const why = loopback ? 'is not a public address' : isIP(host) ? refusedAddress(host) : null
    if (why) throw invalid(`The webhook URL's host ${url.hostname} ${why}`)
  }
  return url.href
}

/** The event filter from a comma-separated list (`*` or nothing: every event). */
export function parseEventFilter(list: string | undefined): string[] {
  const items = (list ?? ALL_EVENTS)
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
  if (items.length === 0 || items.includes(ALL_EVENTS)) return [ALL_EVENTS]
  const unknown = items.filter((e) => !WEBHOOK_EVENT_TYPES.includes(e as WebhookEventType))
  if (unknown.length > 0) {
    throw invalid(
      `Unknown webhook event(s): ${unknown.join(', ')} (known: ${WEBHOOK_EVENT_TYPES.join(', ')}, or *)`,
    )
  }
  return [...new Set(items)].sort()
}

function secretPlace(endpointId: string): string {
  return `webhook-secret:${endpointId}`
}

/** The endpoint's signing secret, opened (only the sender and its tests need it). */
export function openSecret(
  deps: Pick<Deps, 'secrets'>,
  endpointId: string,
  sealed: string,
): string {
  return deps.secrets.decrypt(sealed, secretPlace(endpointId))
}

function toEndpoint(row: {
  id: string
  app_id: string
  url: string
  events: string[]
  created_at: Date
  disabled_at: Date | null
  disabled_reason: string | null
}): WebhookEndpoint {
  return {
    id: row.id,
    appId: row.app_id,
    url: row.url,
    events: row.events,
    createdAt: row.created_at.toISOString(),
    disabledAt: row.disabled_at?.toISOString() ?? null,
    disabledReason: row.disabled_reason,
  }
}

/** Adds an endpoint; answers it with its signing secret, which is never shown again. */
export async function addEndpoint(
  deps: EndpointDeps,
  appId: string,
  input: { url: string; events?: string },
): Promise<WebhookEndpoint & { secret: string }> {
  const url = checkEndpointUrl(input.url, deps.config.production)
  const events = parseEventFilter(input.events)
  const app = await deps.db
    .selectFrom('apps')
    .select('id')
    .where('id', '=', appId)
    .executeTakeFirst()
  if (!app) throw LatchError.of('not_found', { message: `No app with id '${appId}'` })
  const { count } = await deps.db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('app_id', '=', appId)
    .executeTakeFirstOrThrow()
  if (Number(count) >= MAX_ENDPOINTS_PER_APP) {
    throw invalid(`An app has at most ${MAX_ENDPOINTS_PER_APP} webhook endpoints`)
  }
  const id = `ep_${randomId(20)}`
  // 32 random bytes: within the specification's 24 to 64.
  const secret = `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
  const now = deps.clock.now()
  await deps.db
    .insertInto('webhook_endpoints')
    .values({
      id,
      app_id: appId,
      url,
      mac: rowMac(deps.secrets, 'webhook_endpoint', { id, app_id: appId, url }),
      secret_sealed: deps.secrets.encrypt(secret, secretPlace(id)),
      events: json(events),
      created_at: now,
    })
    .execute()
  return {
    id,
    appId,
    url,
    events,
    createdAt: now.toISOString(),
    disabledAt: null,
    disabledReason: null,
    secret,
  }
}

export async function listEndpoints(deps: EndpointDeps, appId: string): Promise<WebhookEndpoint[]> {
  const rows = await deps.db
    .selectFrom('webhook_endpoints')
    .select(['id', 'app_id', 'url', 'events', 'created_at', 'disabled_at', 'disabled_reason'])
    .where('app_id', '=', appId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map(toEndpoint)
}

/** Removes an endpoint of the app, and its deliveries with it; false when there was none. */
export async function removeEndpoint(
  deps: EndpointDeps,
  appId: string,
  endpointId: string,
): Promise<boolean> {
  const result = await deps.db
    .deleteFrom('webhook_endpoints')
    .where('app_id', '=', appId)
    .where('id', '=', endpointId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** One delivery as the log shows it (times in ISO 8601). */
export interface DeliveryLogRow {
  id: string
  event_id: string
  endpoint_id: string
  event_type: string
  status: string
  attempts: number
  next_attempt_at: string
  last_status: number | null
  last_error: string | null
  created_at: string
  finished_at: string | null
}

/** The app's deliveries, newest first: `latch apps webhook deliveries` and the operator API. */
export async function deliveryLog(
  db: EndpointDeps['db'],
  appId: string,
  limit: number,
): Promise<DeliveryLogRow[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select([
      'id',
      'event_id',
      'endpoint_id',
      'event_type',
      'status',
      'attempts',
      'next_attempt_at',
      'last_status',
      'last_error',
      'created_at',
      'finished_at',
    ])
    .where('app_id', '=', appId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute()
  return rows.map((r) => ({
    ...r,
    next_attempt_at: r.next_attempt_at.toISOString(),
    created_at: r.created_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
  }))
}
