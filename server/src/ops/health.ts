/**
 * `GET /healthz` and `GET /readyz` for load balancers and orchestrators, on the API origin and
 * on the modal origin. `/healthz` says the process answers (restart it when this fails);
 * `/readyz` says it can serve visitors (send it traffic only when this passes): the database
 * answers and its schema is the one this release expects.
 */
import { type Kysely, sql } from 'kysely'
import { migrationState } from './migrations.ts'

export const HEALTH_PATH = '/healthz'
export const READY_PATH = '/readyz'

export interface Readiness {
  ready: boolean
  /** Why not, in words safe to show anyone: no host names, no driver messages. */
  reason?: string
}

export type ReadinessCheck = () => Promise<Readiness>

/** How long a readiness probe waits for the database before answering not ready. */
export const READY_TIMEOUT_MS = 2_000

/** How long one readiness answer serves every probe that arrives meanwhile. */
export const READY_REUSE_MS = 1_000

/**
 * `check`, run at most once per `ms`: probes arriving meanwhile (or while it runs) share its
 * answer. The probe paths are public, so a flood of them costs at most one database round
 * trip a second per process.
 */
export function reuseFor(ms: number, check: ReadinessCheck): ReadinessCheck {
  let last: { at: number; answer: Promise<Readiness> } | undefined
  return () => {
    const now = Date.now()
    if (last && now - last.at < ms) return last.answer
    last = { at: now, answer: check() }
    return last.answer
  }
}

/** The database answers a query and has run every migration this release knows. */
export function databaseReadiness(db: Kysely<unknown>): ReadinessCheck {
  return reuseFor(READY_REUSE_MS, async () => {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<Readiness>((resolve) => {
      timer = setTimeout(
        () => resolve({ ready: false, reason: 'the database did not answer in time' }),
        READY_TIMEOUT_MS,
      )
    })
    const check = (async (): Promise<Readiness> => {
      try {
        await sql`SELECT 1`.execute(db)
      } catch {
        return { ready: false, reason: 'the database is unreachable' }
      }
      const { pending } = await migrationState(db).catch(() => ({ pending: ['(unreadable)'] }))
      if (pending.length > 0) {
        return {
          ready: false,
          reason: `${pending.length} migration(s) pending: run latch migrate`,
        }
      }
      return { ready: true }
    })()
    try {
      return await Promise.race([check, late])
    } finally {
      clearTimeout(timer)
    }
  })
}

/** The answer to a probe path, or null for any other path. */
export async function probeAnswer(
  pathname: string,
  ready: ReadinessCheck,
): Promise<{ status: number; body: Record<string, unknown> } | null> {
  if (pathname === HEALTH_PATH) return { status: 200, body: { status: 'ok' } }
  if (pathname !== READY_PATH) return null
  const state = await ready()
  return state.ready
    ? { status: 200, body: { status: 'ready' } }
    : { status: 503, body: { status: 'not_ready', reason: state.reason } }
}

/** `fetch` with the probe paths answered in front of it (GET and HEAD; never cached). */
export function withProbes<E>(
  fetch: (request: Request, env: E) => Response | Promise<Response>,
  ready: ReadinessCheck,
): (request: Request, env: E) => Promise<Response> {
  // `env` carries the node adapter's socket, which the client address (and so every per-address
  // rate limit) is read from: dropping it would put every client in one budget.
  return async (request, env) => {
    const { pathname } = new URL(request.url)
    if ((pathname === HEALTH_PATH || pathname === READY_PATH) && isRead(request.method)) {
      const answer = await probeAnswer(pathname, ready)
      if (answer) {
        return new Response(request.method === 'HEAD' ? null : JSON.stringify(answer.body), {
          status: answer.status,
          headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
        })
      }
    }
    return fetch(request, env)
  }
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD'
