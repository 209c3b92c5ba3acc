/** GET /apps/{appId} (the server app configuration) and /apps/{appId}/jwks.json. */
import { LatchError } from '@latch/shared'
import { Hono } from 'hono'
import type { Deps } from '../context.ts'
import type { HonoEnv } from '../http.ts'
import { findApp, toServerAppConfig } from './service.ts'

export function appRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()

  async function app(id: string) {
    const found = await findApp(deps, id)
    if (!found) throw LatchError.of('missing_or_invalid_latch_app_id')
    return found
  }

  routes.get('/:appId', async (c) => {
    return c.json(await toServerAppConfig(deps, await app(c.req.param('appId'))))
  })

  routes.get('/:appId/jwks.json', async (c) => {
    const found = await app(c.req.param('appId'))
    c.header('cache-control', 'public, max-age=300')
    return c.json(await deps.keys.jwks(found.id))
  })

  return routes
}
