/** POST /analytics_events: the nine events of SPEC section 1, stored with client id and payload. */
import { analyticsEventBody } from '@latch/shared'
import { Hono } from 'hono'
import type { Deps } from '../context.ts'
import { json } from '../db/index.ts'
import { type HonoEnv, readBody, SUCCESS } from '../http.ts'

export function analyticsRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  routes.post('/', async (c) => {
    const body = await readBody(c, analyticsEventBody)
    await deps.db
      .insertInto('analytics_events')
      .values({
        app_id: c.get('app').id,
        event_name: body.event_name,
        client_id: body.client_id,
        payload: json(body.payload ?? {}),
        created_at: deps.clock.now(),
      })
      .execute()
    return c.json(SUCCESS)
  })
  return routes
}
