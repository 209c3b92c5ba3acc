/**
 * Prometheus metrics (prom-client), on when LATCH_METRICS=1: `GET /metrics` on the API origin,
 * answered only to `Authorization: Bearer <LATCH_METRICS_TOKEN>`.
 *
 * Every count is taken from the request as it leaves the API (route pattern, status, the
 * catalogued error code), so no feature has to call into metrics and none can forget to. Labels
 * only ever hold values from fixed sets: route patterns (`/api/v1/apps/:appId`, never the path),
 * status classes, sign-in methods, catalogued error codes. Never a user id, an address, an app
 * id or a raw path: each would make a new series per visitor (Prometheus's memory) and put
 * people in the monitoring system.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { API_PREFIX, CODE_ROUTE_PATHS, LatchError, toApiErrorBody } from '@latch/shared'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { Clock } from '../clock.ts'
import type { SmsBudget } from '../config.ts'
import type { Db, PoolStats } from '../db/index.ts'
import { peek } from '../ratelimit.ts'
import { newRequestId, REQUEST_ID_HEADER } from './log.ts'

export const METRICS_PATH = '/metrics'

/** One API request as it left: what every metric is counted from. */
export interface ObservedRequest {
  method: string
  /** The matched route's pattern, `unmatched` when none matched. */
  route: string
  status: number
  durationS: number
  /** The catalogued code of the error answered, if any. */
  errorCode?: string
}

/** SMS codes counted against the global budget in the current hour and day windows. */
export type SmsSpend = () => Promise<{ hour: number; day: number }>

const HOUR_MS = 60 * 60_000
/** The global windows sms/guard.ts counts every SMS code in (per-app ones would label an app). */
export function smsSpend(db: Db, clock: Clock, budget: SmsBudget): SmsSpend {
  return async () => {
    const [hour, day] = await Promise.all([
      peek(db, clock, 'sms:all:hour', { max: budget.globalHourly, windowMs: HOUR_MS }),
      peek(db, clock, 'sms:all:day', { max: budget.globalDaily, windowMs: 24 * HOUR_MS }),
    ])
    return { hour: hour.count, day: day.count }
  }
}

export interface Metrics {
  registry: Registry
  observe(request: ObservedRequest): void
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** Which requests are which event; keyed `METHOD pattern`. */
const SIGN_INS: Record<string, string> = {
  [`POST ${API_PREFIX}${CODE_ROUTE_PATHS.email}/authenticate`]: 'email',
  [`POST ${API_PREFIX}${CODE_ROUTE_PATHS.sms}/authenticate`]: 'sms',
  [`POST ${API_PREFIX}/oauth/authenticate`]: 'oauth',
  [`POST ${API_PREFIX}/siwe/authenticate`]: 'wallet',
}
const CODES_SENT: Record<string, string> = {
  [`POST ${API_PREFIX}${CODE_ROUTE_PATHS.email}/init`]: 'email',
  [`POST ${API_PREFIX}${CODE_ROUTE_PATHS.sms}/init`]: 'sms',
}
const SPONSORED_BATCHES = `POST ${API_PREFIX}/calls`
const WALLET_OPERATIONS: Record<string, string> = {
  [`POST ${API_PREFIX}/wallets`]: 'create',
  [`POST ${API_PREFIX}/wallets/recover`]: 'recover',
  [`POST ${API_PREFIX}/wallets/passcode/verify`]: 'passcode_verify',
}

/** `success`, else the catalogued error code (a fixed set), else `error`. */
function outcomeOf(r: ObservedRequest): string {
  if (r.status < 400) return 'success'
  return r.errorCode ?? (r.status >= 500 ? 'internal_error' : 'error')
}

export function createMetrics(
  options: { pool?: () => PoolStats | null; sms?: { spend: SmsSpend; budget: SmsBudget } } = {},
): Metrics {
  // A registry of its own: several servers in one process (tests) keep their counts apart.
  const registry = new Registry()
  const registers = [registry]
  collectDefaultMetrics({ register: registry })
  const requestLabels = ['method', 'route', 'status_class'] as const
  const requests = new Counter({
    name: 'latch_http_requests_total',
    help: 'API requests answered, by route pattern and status class',
    labelNames: requestLabels,
    registers,
  })
  const duration = new Histogram({
    name: 'latch_http_request_duration_seconds',
    help: 'Time to answer an API request, by route pattern and status class',
    labelNames: requestLabels,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  })
  const signIns = new Counter({
    name: 'latch_sign_ins_total',
    help: 'Sign-in attempts by method (email, sms, oauth, wallet) and outcome (success or the error code)',
    labelNames: ['method', 'outcome'] as const,
    registers,
  })
  const codesSent = new Counter({
    name: 'latch_codes_sent_total',
    help: 'Sign-in codes sent, by channel (email, sms)',
    labelNames: ['channel'] as const,
    registers,
  })
  const wallets = new Counter({
    name: 'latch_wallet_operations_total',
    help: 'In-app wallet creations, recoveries and passcode checks, by outcome (success or the error code; invalid_recovery_pin is a wrong passcode)',
    labelNames: ['operation', 'outcome'] as const,
    registers,
  })
  const sponsored = new Counter({
    name: 'latch_sponsored_batches_total',
    help: "Batches of calls the apps' sponsors were asked to pay for, by outcome (success or the refusal's error code)",
    labelNames: ['outcome'] as const,
    registers,
  })
  const refusals = new Counter({
    name: 'latch_rate_limit_refusals_total',
    help: 'Requests refused with 429, by route pattern and error code',
    labelNames: ['route', 'code'] as const,
    registers,
  })
  if (options.pool) {
    const read = options.pool
    new Gauge({
      name: 'latch_db_pool_connections',
      help: 'PostgreSQL pool connections by state (in_use, idle) and requests waiting for one',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const stats = read()
        if (!stats) return
        this.set({ state: 'in_use' }, stats.total - stats.idle)
        this.set({ state: 'idle' }, stats.idle)
        this.set({ state: 'waiting' }, stats.waiting)
      },
    })
    // Counted by the pool as it refuses, read at each scrape: a counter that only grows.
    new Counter({
      name: 'latch_db_pool_shed_total',
      help: 'Requests answered 503 at once because every PostgreSQL connection stayed busy past LATCH_PG_POOL_WAIT_MS or LATCH_PG_POOL_QUEUE_MAX requests already waited',
      registers,
      collect() {
        const stats = read()
        if (!stats) return
        this.reset()
        this.inc(stats.shed)
      },
    })
    new Counter({
      name: 'latch_db_connection_errors_total',
      help: 'PostgreSQL connections the server ended (a restart, a failover, a terminated backend) or that failed to open',
      registers,
      collect() {
        const stats = read()
        if (!stats) return
        this.reset()
        this.inc(stats.lost)
      },
    })
  }

  if (options.sms) {
    const { spend, budget } = options.sms
    new Gauge({
      name: 'latch_sms_budget_used',
      help: 'SMS codes sent in the current global hour and day windows (the toll-fraud budget)',
      labelNames: ['window'] as const,
      registers,
      async collect() {
        // A scrape while the database is away still answers the other metrics.
        const used = await spend().catch(() => null)
        if (!used) return
        this.set({ window: 'hour' }, used.hour)
        this.set({ window: 'day' }, used.day)
      },
    })
    new Gauge({
      name: 'latch_sms_budget_limit',
      help: 'The global SMS budget per window (LATCH_SMS_GLOBAL_HOURLY, LATCH_SMS_GLOBAL_DAILY)',
      labelNames: ['window'] as const,
      registers,
      collect() {
        this.set({ window: 'hour' }, budget.globalHourly)
        this.set({ window: 'day' }, budget.globalDaily)
      },
    })
  }

  return {
    registry,
    observe(r) {
      const method = METHODS.has(r.method) ? r.method : 'OTHER'
      const labels = { method, route: r.route, status_class: `${Math.floor(r.status / 100)}xx` }
      requests.inc(labels)
      duration.observe(labels, r.durationS)
      const key = `${method} ${r.route}`
      const outcome = outcomeOf(r)
      const signIn = SIGN_INS[key]
      if (signIn) signIns.inc({ method: signIn, outcome })
      const channel = CODES_SENT[key]
      if (channel && r.status < 400) codesSent.inc({ channel })
      const operation = WALLET_OPERATIONS[key]
      if (operation) wallets.inc({ operation, outcome })
      if (key === SPONSORED_BATCHES) sponsored.inc({ outcome })
      if (r.status === 429) refusals.inc({ route: r.route, code: r.errorCode ?? 'unknown' })
    },
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest()

/** Constant-time: the comparison takes as long whatever the guess shares with the token. */
function tokenMatches(header: string | null, token: string): boolean {
  const given = /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1]
  if (!given) return false
  return timingSafeEqual(digest(given), digest(token))
}

/**
 * `fetch` with `GET /metrics` answered in front of it: the metrics to the bearer of `token`,
 * 401 to anyone else. Outside the API's routes, so scrapes are neither logged nor counted.
 */
export function withMetrics<E>(
  fetch: (request: Request, env: E) => Response | Promise<Response>,
  metrics: Metrics,
  token: string,
): (request: Request, env: E) => Promise<Response> {
  return async (request, env) => {
    const { pathname } = new URL(request.url)
    if (pathname !== METRICS_PATH) return fetch(request, env)
    const id = newRequestId()
    const headers = { 'cache-control': 'no-store', [REQUEST_ID_HEADER]: id }
    if (!tokenMatches(request.headers.get('authorization'), token)) {
      const body = {
        ...toApiErrorBody(
          LatchError.of('not_authenticated', { message: 'The metrics need the metrics token' }),
        ),
        requestId: id,
      }
      return Response.json(body, {
        status: 401,
        headers: { ...headers, 'www-authenticate': 'Bearer' },
      })
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return Response.json(
        {
          ...toApiErrorBody(LatchError.of('invalid_data', { status: 405, message: 'Use GET' })),
          requestId: id,
        },
        { status: 405, headers },
      )
    }
    const text = await metrics.registry.metrics()
    return new Response(request.method === 'HEAD' ? null : text, {
      status: 200,
      headers: { ...headers, 'content-type': metrics.registry.contentType },
    })
  }
}
