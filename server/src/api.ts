/**
 * The HTTP API (the Hono application; "app" always means a tenant app): one sub-app per feature under /api/v1, one error handler that turns
 * every failure into `{ "error": { "type", "code", "message" } }` with its status.
 */
import {
  API_PREFIX,
  APP_ID_HEADER,
  CLIENT_HEADER,
  CODE_ROUTE_PATHS,
  isLatchError,
  LatchError,
  MAX_BODY_BYTES,
  mergeErrors,
  REFRESH_ID_HEADER,
  retryAfterHeader,
  SERVER_ERRORS,
  SIWE_HASH_HEADER,
  SIWE_SECRET_HEADER,
  toApiErrorBody,
} from '@latch/shared'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { cors } from 'hono/cors'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { linkApprovalRoutes } from './accounts/link-approval.ts'
import { adminRoutes } from './admin/routes.ts'
import { analyticsRoutes } from './analytics/routes.ts'
import { operatorRoutes } from './apps/operator.ts'
import { appRoutes } from './apps/routes.ts'
import { chainRoutes } from './chains/routes.ts'
import type { Deps } from './context.ts'
import {
  DB_BUSY_RETRY_AFTER_S,
  DB_LOST_RETRY_AFTER_S,
  databaseUnavailable,
} from './db/unavailable.ts'
import { type HonoEnv, isPublicAppPath, requireApp } from './http.ts'
import { oauthRoutes } from './oauth/routes.ts'
import { strictTransportSecurity } from './ops/hsts.ts'
import { packageRoutes } from './ops/packages.ts'
import { logFailure, observeRequests } from './ops/requests.ts'
import { passkeyRoutes } from './passkeys/routes.ts'
import { passwordlessRoutes } from './passwordless/routes.ts'
import { priceRoutes } from './price/routes.ts'
import { sessionRoutes } from './sessions/routes.ts'
import { siweRoutes } from './siwe/routes.ts'
import { smsRoutes } from './sms/routes.ts'
import { sponsorRoutes } from './sponsor/routes.ts'
import { forkPairRoutes } from './wallets/fork-pair.ts'
import { walletFrameRoutes } from './wallets/frame.ts'
import { walletRoutes } from './wallets/routes.ts'

// The errors only the user and operator APIs answer (shared's server-catalogue.ts): the
// clients' catalogue leaves them out, the server knows them all.
mergeErrors(SERVER_ERRORS)

/** The status an error answers with: its own, else 400 for validation errors, else 500. */
export function statusOf(err: LatchError): ContentfulStatusCode {
  const status = err.status ?? (err.type === 'validation_error' ? 400 : 500)
  return (status >= 400 && status <= 599 ? status : 500) as ContentfulStatusCode
}

/** Node's error when the client closed the connection before its request body was complete. */
function isAbortedRequest(e: unknown): boolean {
  return (
    e instanceof Error &&
    e.message === 'aborted' &&
    (e as NodeJS.ErrnoException).code === 'ECONNRESET'
  )
}

function toError(e: unknown): LatchError {
  // The client's fault, not the server's: no 500, nothing logged as a failure.
  if (isAbortedRequest(e)) {
    return LatchError.of('invalid_data', { message: 'Request body is incomplete' })
  }
  // The database out of reach (a restart, a failover, a lost connection, the pool busy past
  // its bound), thrown as is or wrapped in an internal error: the same request succeeds once
  // it is back. Every other catalogued error keeps its own answer.
  const unavailable = !isLatchError(e) || e.is('internal_error') ? databaseUnavailable(e) : null
  if (unavailable) {
    return LatchError.of('service_unavailable', {
      retryAfter: unavailable === 'busy' ? DB_BUSY_RETRY_AFTER_S : DB_LOST_RETRY_AFTER_S,
      cause: e,
    })
  }
  if (isLatchError(e)) return e
  if (e instanceof HTTPException) {
    if (e.status === 413) return LatchError.of('payload_too_large')
    if (e.status < 500) {
      return LatchError.of('invalid_data', {
        status: e.status,
        message: e.message || 'Bad request',
      })
    }
  }
  return LatchError.of('internal_error', { cause: e })
}

export function createApi(deps: Deps): Hono<HonoEnv> {
  const api = new Hono<HonoEnv>()

  api.onError((e, c) => {
    const err = toError(e)
    const status = statusOf(err)
    // A 503 for the database is the database's state, not a failure of this request to look into.
    if (status >= 500 && !isLatchError(e) && !err.is('service_unavailable')) logFailure(deps, c, e)
    // The request's log line and metrics name the code answered.
    if (err.is('service_unavailable')) c.error = err
    const wait = retryAfterHeader(err)
    if (wait !== undefined) c.header('retry-after', wait)
    return c.json(toApiErrorBody(err), status)
  })
  api.notFound((c) =>
    c.json(
      toApiErrorBody(
        LatchError.of('not_found', { message: `No route ${c.req.method} ${c.req.path}` }),
      ),
      404,
    ),
  )

  // First: every request gets its id, its log line and its count, refusals included.
  api.use('*', observeRequests(deps))
  const hsts = strictTransportSecurity(deps.config.production, deps.config.publicUrl)
  if (hsts !== null) {
    // After the handler, so errors and 404s carry it too.
    api.use('*', async (c, next) => {
      await next()
      c.header('strict-transport-security', hsts)
    })
  }
  const modalOrigin = deps.config.modalOrigin
  api.use(
    '*',
    cors({
      origin: (origin) => (modalOrigin && origin === modalOrigin ? origin : null),
      credentials: true,
      allowHeaders: [
        'content-type',
        'authorization',
        APP_ID_HEADER,
        CLIENT_HEADER,
        REFRESH_ID_HEADER,
        SIWE_HASH_HEADER,
        SIWE_SECRET_HEADER,
      ],
      allowMethods: ['GET', 'POST', 'OPTIONS'],
      // The modal reads how long to wait after a 429 or a 503.
      exposeHeaders: ['retry-after'],
      maxAge: 600,
    }),
  )

  // One body limit for every API route, OAuth's included.
  api.use(
    `${API_PREFIX}/*`,
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw LatchError.of('payload_too_large')
      },
    }),
  )

  const v1 = new Hono<HonoEnv>()
  const withApp = requireApp(deps)
  v1.use('*', async (c, next) => (isPublicAppPath(c.req.path) ? next() : withApp(c, next)))
  v1.route('/apps', appRoutes(deps))
  v1.route('/sessions', sessionRoutes(deps))
  v1.route(CODE_ROUTE_PATHS.email, passwordlessRoutes(deps))
  v1.route(CODE_ROUTE_PATHS.sms, smsRoutes(deps))
  v1.route('/analytics_events', analyticsRoutes(deps))
  v1.route('/token_price', priceRoutes(deps))
  v1.route('/chains', chainRoutes(deps))
  // Before walletRoutes, which would run its own gates again for this path: the same two.
  v1.route('/wallets/fork/pair', forkPairRoutes(deps))
  v1.route('/wallets/approvals', linkApprovalRoutes(deps))
  v1.route('/wallets', walletRoutes(deps))
  v1.route('/siwe', siweRoutes(deps))
  v1.route('/passkeys', passkeyRoutes(deps))
  v1.route('/calls', sponsorRoutes(deps))

  // The user API authenticates by app secret, not by the app id header.
  api.route(`${API_PREFIX}/admin`, adminRoutes(deps))
  // The operator API (app settings) authenticates by LATCH_ADMIN_KEY, not by the app id header.
  api.route(`${API_PREFIX}/operator`, operatorRoutes(deps))
  // OAuth ahead of the API: its provider callback carries no app id header (see oauth/routes.ts).
  api.route(`${API_PREFIX}/oauth`, oauthRoutes(deps))
  api.route(API_PREFIX, v1)
  // The wallet frame's page and assets (the export page of the next issue mounts beside them).
  api.route('/', walletFrameRoutes(deps))
  // This release's npm packages (ops/packages.ts), until the registry has them.
  api.route(
    '/',
    packageRoutes({
      ...(deps.config.packagesDir ? { dir: deps.config.packagesDir } : {}),
      publicUrl: deps.config.publicUrl,
    }),
  )
  return api
}
