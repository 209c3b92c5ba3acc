/**
 * The API's first middleware: gives each request its id (answered in `X-Request-Id`), and when
 * the answer leaves writes the request's log line and counts it in the metrics. A failure the
 * error handler answers with a 500 is logged through `logFailure`, with the same id.
 */
import { getConnInfo } from '@hono/node-server/conninfo'
import { isLatchError } from '@latch/shared'
import type { Context, MiddlewareHandler } from 'hono'
import { matchedRoutes } from 'hono/route'
import type { Deps } from '../context.ts'
import type { HonoEnv } from '../http.ts'
import { REQUEST_ID_HEADER, requestIdFor } from './log.ts'

declare module 'hono' {
  interface ContextVariableMap {
    /** This request's id (ops/requests.ts), in its log lines and its X-Request-Id answer. */
    requestId: string
  }
}

/**
 * The pattern of the route that answered (`/api/v1/apps/:appId`), or `unmatched`: the label a
 * log line and a metric carry instead of the path, which may hold ids. Middleware registered
 * for every method (`use`) is not a route; a request refused by one still names the route it
 * was for.
 */
export function routePattern(c: Context): string {
  const routes = matchedRoutes(c).filter((r) => r.method !== 'ALL')
  return routes.at(-1)?.path ?? 'unmatched'
}

function socketAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address
  } catch {
    return undefined // an in-process request has no socket
  }
}

export function observeRequests(deps: Deps): MiddlewareHandler<HonoEnv> {
  return async (c, next) => {
    const started = performance.now()
    const id = requestIdFor(
      c.req.header(REQUEST_ID_HEADER),
      socketAddress(c),
      deps.config.trustProxy,
    )
    c.set('requestId', id)
    await next()
    await addRequestId(c, id)
    const durationMs = performance.now() - started
    try {
      c.res.headers.set(REQUEST_ID_HEADER, id)
    } catch {
      // A response with immutable headers (one passed through from fetch): copy it.
      c.res = new Response(c.res.body, c.res)
      c.res.headers.set(REQUEST_ID_HEADER, id)
    }
    const status = c.res.status
    const route = routePattern(c)
    const errorCode = isLatchError(c.error) ? c.error.code : undefined
    const app = c.get('app') as HonoEnv['Variables']['app'] | undefined
    deps.logger.request({
      level: status >= 500 ? 'error' : 'info',
      msg: 'request',
      requestId: id,
      method: c.req.method,
      route,
      status,
      durationMs: Math.round(durationMs * 10) / 10,
      appId: app?.id,
      error: errorCode,
    })
    deps.metrics?.observe({
      method: c.req.method,
      route,
      status,
      durationS: durationMs / 1000,
      errorCode,
    })
  }
}

/**
 * Writes the request id into an error answer's JSON body (`requestId`, beside `error`), so
 * whoever reports a failure quotes the id of its log line from what they were shown. Done here,
 * once, for every error body any route or handler wrote; clients read `error` and ignore the rest.
 */
async function addRequestId(c: Context, id: string): Promise<void> {
  const res = c.res
  if (res.status < 400 || c.req.method === 'HEAD' || res.body === null) return
  if (!res.headers.get('content-type')?.startsWith('application/json')) return
  let body: unknown
  try {
    body = await res.clone().json()
  } catch {
    return
  }
  if (typeof body !== 'object' || body === null || !('error' in body)) return
  const headers = new Headers(res.headers)
  headers.delete('content-length')
  // Unset first: Hono would otherwise copy the old answer's headers over the new one's.
  c.res = undefined
  c.res = new Response(JSON.stringify({ ...body, requestId: id }), {
    status: res.status,
    headers,
  })
}

/**
 * A request that failed with a 500: its stack, never its headers or body. The human line keeps
 * the path (as it always read); the JSON record names the route pattern.
 */
export function logFailure(deps: Deps, c: Context, e: unknown): void {
  const stack = (e as Error)?.stack ?? String(e)
  const requestId = c.get('requestId')
  if (deps.logger.format === 'text') {
    deps.log(`[latch] request ${requestId}: ${c.req.method} ${c.req.path} failed: ${stack}`)
    return
  }
  deps.logger.write({
    level: 'error',
    msg: 'request failed',
    requestId,
    method: c.req.method,
    route: routePattern(c),
    error: stack,
  })
}
