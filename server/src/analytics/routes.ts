/** POST /analytics_events: the events of ANALYTICS_EVENTS, stored with client id and payload. */
import { analyticsEventBody, LatchError } from '@latch/shared'
import { Hono } from 'hono'
import type { Deps } from '../context.ts'
import { json } from '../db/index.ts'
import { clientIp, type HonoEnv, readBody, SUCCESS } from '../http.ts'
import { hit, type Limit } from '../ratelimit.ts'

/** Largest payload stored, in bytes of its JSON: the modal's events carry a few short fields. */
export const MAX_PAYLOAD_BYTES = 2048
/**
 * Events per client IP. The endpoint needs no sign-in, so without a limit anyone could fill
 * the database; a sign-in records a handful of events.
 */
export const ANALYTICS_IP_LIMIT: Limit = { max: 120, windowMs: 5 * 60_000 }
const HOUR = 60 * 60_000

export function analyticsRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  routes.post('/', async (c) => {
    const app = c.get('app')
    const body = await readBody(c, analyticsEventBody)
    await hit(
      deps.db,
      deps.clock,
      `analytics:ip:${clientIp(c, deps.config.trustProxy)}`,
      ANALYTICS_IP_LIMIT,
    )
    // Many addresses together still stop at the app's hourly cap.
    await hit(deps.db, deps.clock, `analytics:app:${app.id}`, {
      max: deps.config.analyticsAppHourly,
      windowMs: HOUR,
    })
    const payload = json(body.payload ?? {})
    if (Buffer.byteLength(payload, 'utf8') > MAX_PAYLOAD_BYTES) {
      throw LatchError.of('payload_too_large', {
        message: `Analytics payload is over ${MAX_PAYLOAD_BYTES / 1024} KB`,
      })
    }
    await deps.db
      .insertInto('analytics_events')
      .values({
        app_id: app.id,
        event_name: body.event_name,
        client_id: body.client_id,
        payload,
        created_at: deps.clock.now(),
      })
      .execute()
    return c.json(SUCCESS)
  })
  return routes
}
