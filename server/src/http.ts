/** What every route shares: the request context type, body reading, the app and auth checks. */
import { getConnInfo } from '@hono/node-server/conninfo'
import {
  type AccessTokenClaims,
  API_PREFIX,
  APP_ID_HEADER,
  CLIENT_HEADER,
  isLatchError,
  LatchError,
} from '@latch/shared'
import type { Context, MiddlewareHandler } from 'hono'
import type { z } from 'zod'
import { type AppRecord, findApp } from './apps/service.ts'
import type { Deps } from './context.ts'
import { clientAddress, ipKey, type TrustProxy } from './ratelimit.ts'
import { isSessionLive } from './sessions/service.ts'

export type HonoEnv = {
  Variables: {
    app: AppRecord
    auth: AccessTokenClaims
    maybeAuth: AccessTokenClaims | null
  }
}

/** The request body, parsed as JSON and checked against a schema; 400 with a clear message otherwise. */
export async function readBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await c.req.text()
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw LatchError.of('invalid_data', {
      message: text.trim() ? 'Request body is not valid JSON' : 'Request body is missing',
    })
  }
  if (holdsUnstorableText(value)) {
    throw LatchError.of('invalid_data', {
      message:
        'Request body is invalid: text may not contain NUL characters or unpaired surrogates',
    })
  }
  return parse(schema, value, 'Request body')
}

/** Half of a UTF-16 surrogate pair, alone. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Whether a parsed body holds text PostgreSQL cannot store (text refuses NUL, jsonb also the
 * escape of a lone surrogate): refused up front as bad input rather than failing as a 500 at
 * the first insert. Walks with its own stack: a 64 KB body may nest 30,000 levels deep.
 */
export function holdsUnstorableText(root: unknown): boolean {
  const bad = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s)
  const stack: unknown[] = [root]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value === 'string') {
      if (bad(value)) return true
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (bad(key)) return true
        stack.push(item)
      }
    }
  }
  return false
}

export function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const details = result.error.issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ')
  throw LatchError.of('invalid_data', { message: `${what} is invalid: ${details}` })
}

/**
 * The client's rate-limit key: its address (from X-Forwarded-For only as far as `trustProxy`
 * trusts it, see clientAddress), IPv6 reduced to its /64.
 */
export function clientIp(c: Context, trustProxy: TrustProxy): string {
  let socket = 'unknown'
  try {
    socket = getConnInfo(c).remote.address ?? 'unknown'
  } catch {
    // No socket (an in-process request): the forwarded chain alone, if trusted.
  }
  return ipKey(clientAddress(socket, c.req.header('x-forwarded-for'), trustProxy))
}

/** Requires the app id and client headers and loads the app (missing_or_invalid_latch_app_id). */
export function requireApp(deps: Deps): MiddlewareHandler<HonoEnv> {
  return async (c, next) => {
    if (c.req.method === 'OPTIONS') return next()
    const appId = c.req.header(APP_ID_HEADER)
    const app = appId ? await findApp(deps, appId) : undefined
    if (!app) throw LatchError.of('missing_or_invalid_latch_app_id')
    if (!c.req.header(CLIENT_HEADER)) {
      throw LatchError.of('invalid_data', { message: `Missing ${CLIENT_HEADER} header` })
    }
    c.set('app', app)
    await next()
  }
}

/**
 * The claims of the request's bearer token when it is a valid access token of a live session
 * of this app, else null. The one place the Authorization header is read.
 */
async function bearerClaims(deps: Deps, c: Context<HonoEnv>): Promise<AccessTokenClaims | null> {
  const token = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1]
  if (!token) return null
  const appId = c.get('app').id
  let claims: AccessTokenClaims
  try {
    claims = await deps.keys.verifyAccessToken(appId, token)
  } catch (e) {
    if (isLatchError(e) && e.code === 'not_authenticated') return null
    throw e
  }
  return (await isSessionLive(deps, appId, claims.sid)) ? claims : null
}

/** Requires a valid access token of a live session of this app (`auth`). */
export function requireAuth(deps: Deps): MiddlewareHandler<HonoEnv> {
  return async (c, next) => {
    const claims = await bearerClaims(deps, c)
    if (!claims) throw LatchError.of('not_authenticated')
    c.set('auth', claims)
    await next()
  }
}

/**
 * Reads the access token when there is one (`maybeAuth`, null without a valid token of a live
 * session): a stale or missing token does not stop the request.
 */
export function optionalAuth(deps: Deps): MiddlewareHandler<HonoEnv> {
  return async (c, next) => {
    c.set('maybeAuth', await bearerClaims(deps, c))
    await next()
  }
}

/** Paths that carry the app id in the URL and need no headers (a host backend reads them). */
export function isPublicAppPath(path: string): boolean {
  return path.startsWith(`${API_PREFIX}/apps/`)
}

export const SUCCESS = { success: true } as const
