/**
 * The user API, `/api/v1/admin/apps/{appId}/...`, for the app's backend with one of its server
 * secrets as the bearer. Never from a browser: a request carrying `Origin`, `Referer` or fetch
 * metadata is refused before the secret is even read, so a secret pasted into a page (or sent
 * by a page's script) does nothing. Rate limited per client address and per app; every call
 * that presented a valid secret is audited (admin_audit), and so are refused calls naming an
 * existing app, up to a budget per app and per address.
 */
import { LatchError, OAUTH_PROVIDERS, validateEmail, validatePhone } from '@latch/shared'
import { type Context, Hono, type MiddlewareHandler } from 'hono'
import { matchedRoutes } from 'hono/route'
import { z } from 'zod'
import type { AppRecord } from '../apps/service.ts'
import { findApp } from '../apps/service.ts'
import type { Deps } from '../context.ts'
import { clientIp, holdsUnstorableText, parse, readBody } from '../http.ts'
import { countEach, hit, type Limit } from '../ratelimit.ts'
import { claimedSecretId, verifyAppSecret } from './secrets.ts'
import {
  deleteUser,
  exportUsers,
  importUsers,
  isLoginMethod,
  listUsers,
  userByAccount,
  userById,
} from './users.ts'

/** Calls per app: generous for a backend, a ceiling for a leaked secret's owner. */
export const ADMIN_APP_LIMIT: Limit = { max: 600, windowMs: 60_000 }
/** Calls per client address, counted before the secret is checked: guessing costs a budget. */
export const ADMIN_IP_LIMIT: Limit = { max: 600, windowMs: 60_000 }
export const MAX_IMPORT_BATCH = 100
/**
 * Refused calls written to the audit, per app and per client address: past either, a flood of
 * refusals writes nothing more until the window ends (the rate limits above still answer it),
 * so it cannot fill the table or bury the calls that matter.
 */
export const REFUSAL_AUDIT_APP_LIMIT: Limit = { max: 100, windowMs: 10 * 60_000 }
export const REFUSAL_AUDIT_IP_LIMIT: Limit = { max: 20, windowMs: 10 * 60_000 }

/**
 * Headers only a browser sends: Origin, Referer and the fetch metadata every current browser
 * puts on every request. Not Sec-Fetch-Mode alone: Node's own fetch sends `cors` there.
 */
const BROWSER_HEADERS = ['origin', 'referer', 'sec-fetch-site', 'sec-fetch-dest', 'sec-fetch-user']

type AdminEnv = {
  Variables: {
    app: AppRecord
    secretId: string
    /** What the call acted on, MACed for the audit (set by the handler). */
    auditTarget: string | null
  }
}

/** The action an audited call is recorded under: its method and route pattern. */
function actionOf(c: Context<AdminEnv>): string {
  const path = c.req.routePath.replace(/^.*\/apps\/:appId/, '')
  return `${c.req.method} ${path || '/'}`
}

/**
 * Writes a refused call to the audit: the app it named (only an existing one), the secret id
 * the value claimed (empty when it has no secret's shape), the route, `refused:<code>` as the
 * target, the status and the address, within the refusal budgets. A failure to write is logged
 * and never changes the answer.
 */
async function auditRefusal(
  deps: Deps,
  c: Context<AdminEnv>,
  ip: string,
  presented: string | undefined,
  refusal: unknown,
): Promise<void> {
  if (!(refusal instanceof LatchError)) return
  try {
    const app = await findApp(deps, c.req.param('appId') ?? '')
    if (!app) return
    const [perApp, perIp] = await countEach(deps.db, deps.clock, [
      { key: `admin:refusal-audit:${app.id}`, limit: REFUSAL_AUDIT_APP_LIMIT },
      { key: `admin:refusal-audit:${app.id}:${ip}`, limit: REFUSAL_AUDIT_IP_LIMIT },
    ])
    if (
      (perApp?.count ?? Infinity) > REFUSAL_AUDIT_APP_LIMIT.max ||
      (perIp?.count ?? Infinity) > REFUSAL_AUDIT_IP_LIMIT.max
    ) {
      return
    }
    // The route the call would have reached, the first handler matched (its pattern, never the
    // path's values); `/*` for a path no route of the user API serves.
    const route = matchedRoutes(c).find(
      (r) => r.method !== 'ALL' && r.path.includes('/apps/:appId'),
    )?.path
    const path = route?.replace(/^.*\/apps\/:appId/, '') || '/*'
    await deps.db
      .insertInto('admin_audit')
      .values({
        app_id: app.id,
        secret_id: presented ? (claimedSecretId(presented) ?? '') : '',
        action: `${c.req.method} ${path}`,
        target: `refused:${refusal.code}`,
        status: refusal.status ?? 400,
        ip,
        created_at: deps.clock.now(),
      })
      .execute()
  } catch (e) {
    deps.log(`[latch] could not audit a refused user-API call: ${(e as Error).message}`)
  }
}

function authenticate(deps: Deps): MiddlewareHandler<AdminEnv> {
  return async (c, next) => {
    const ip = clientIp(c, deps.config.trustProxy)
    let presented: string | undefined
    let app: AppRecord | undefined
    let secretId: string
    try {
      if (BROWSER_HEADERS.some((h) => c.req.header(h) !== undefined)) {
        throw LatchError.of('app_secret_from_browser')
      }
      await hit(deps.db, deps.clock, `admin:ip:${ip}`, ADMIN_IP_LIMIT)
      presented = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1]
      const appId = c.req.param('appId') ?? ''
      app = presented ? await findApp(deps, appId) : undefined
      if (!presented || !app) throw LatchError.of('invalid_app_secret')
      secretId = await verifyAppSecret(deps, app.id, presented)
    } catch (e) {
      await auditRefusal(deps, c, ip, presented, e)
      throw e
    }
    c.set('app', app)
    c.set('secretId', secretId)
    c.set('auditTarget', null)
    let status = 500
    try {
      await hit(deps.db, deps.clock, `admin:app:${app.id}`, ADMIN_APP_LIMIT)
      await next()
      status = c.res.status
    } catch (e) {
      status = e instanceof LatchError ? (e.status ?? 400) : 500
      throw e
    } finally {
      await deps.db
        .insertInto('admin_audit')
        .values({
          app_id: app.id,
          secret_id: secretId,
          action: actionOf(c),
          target: c.get('auditTarget'),
          status,
          ip,
          created_at: deps.clock.now(),
        })
        .execute()
    }
  }
}

const listQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z.string().min(1).max(512).optional(),
    created_since: z.iso.datetime({ offset: true }).optional(),
    has_wallet: z.enum(['true', 'false']).optional(),
    login_method: z.string().refine(isLoginMethod, 'is not a login method').optional(),
  })
  .strict()

const importBody = z
  .object({
    users: z
      .array(
        z.union([
          z.object({ email: z.string().max(320) }).strict(),
          z.object({ phone: z.string().max(64) }).strict(),
        ]),
      )
      .min(1)
      .max(MAX_IMPORT_BATCH),
  })
  .strict()

const WALLET_ADDRESS = /^0x[0-9a-fA-F]{40}$/

/** Text PostgreSQL cannot store (NUL, a lone surrogate) is bad input here, not a 500 later. */
function storable(value: unknown, what: string): void {
  if (holdsUnstorableText(value)) {
    throw LatchError.of('invalid_data', {
      message: `${what} is invalid: text may not contain NUL characters or unpaired surrogates`,
    })
  }
}

function query<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const values = c.req.query()
  storable(values, 'Query')
  return parse(schema, values, 'Query')
}

/** A Latch user id as the server makes them (accounts/service.ts): `did:latch:` and an id. */
const USER_ID = /^did:latch:[a-z0-9]{1,64}$/

/**
 * The path's user id. Text PostgreSQL cannot store is invalid_data, as everywhere; anything
 * else that is not a Latch user id is the catalogue's missing_or_invalid_latch_account_id (400),
 * so a caller passing an e-mail address or its own id for the user's learns it at once, apart
 * from a well-formed id of no user (404 not_found).
 */
function userIdParam(c: Context): string {
  const userId = c.req.param('userId') ?? ''
  storable(userId, 'User id')
  if (!USER_ID.test(userId)) throw LatchError.of('missing_or_invalid_latch_account_id')
  return userId
}

export function adminRoutes(deps: Deps): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>().basePath('/apps/:appId')
  routes.use('*', authenticate(deps))
  /** The audit's target: a MAC of what the call named, so the audit keeps no personal data. */
  const target = (c: Context<AdminEnv>, kind: string, value: string) =>
    c.set('auditTarget', `${kind}:${deps.secrets.mac('admin-audit-target', value)}`)

  routes.get('/users', async (c) => {
    const q = query(c, listQuery)
    const page = await listUsers(deps, c.get('app').id, {
      limit: q.limit,
      cursor: q.cursor,
      filter: {
        createdSince: q.created_since ? new Date(q.created_since) : undefined,
        hasWallet: q.has_wallet === undefined ? undefined : q.has_wallet === 'true',
        loginMethod:
          q.login_method !== undefined && isLoginMethod(q.login_method)
            ? q.login_method
            : undefined,
      },
    })
    return c.json({ users: page.users, next_cursor: page.nextCursor })
  })

  routes.get('/users/export', (c) => {
    c.header('content-type', 'application/x-ndjson; charset=utf-8')
    c.header('cache-control', 'no-store')
    return c.body(exportUsers(deps, c.get('app').id))
  })

  routes.get('/users/by-email', async (c) => {
    const { email } = query(c, z.object({ email: z.string().min(1).max(320) }).strict())
    target(c, 'email', email.trim().toLowerCase())
    return c.json(await userByAccount(deps, c.get('app').id, 'email', email))
  })

  routes.get('/users/by-phone', async (c) => {
    const { phone } = query(c, z.object({ phone: z.string().min(1).max(64) }).strict())
    const number = validatePhone(phone)
    if (!number.ok) throw number.error
    target(c, 'phone', number.value)
    return c.json(await userByAccount(deps, c.get('app').id, 'phone', number.value))
  })

  routes.get('/users/by-wallet', async (c) => {
    const { address } = query(
      c,
      z
        .object({ address: z.string().regex(WALLET_ADDRESS, 'must be a 0x-prefixed address') })
        .strict(),
    )
    target(c, 'wallet', address.toLowerCase())
    return c.json(await userByAccount(deps, c.get('app').id, 'wallet', address))
  })

  routes.get('/users/by-social', async (c) => {
    const { provider, subject } = query(
      c,
      z.object({ provider: z.enum(OAUTH_PROVIDERS), subject: z.string().min(1).max(256) }).strict(),
    )
    target(c, provider, subject)
    return c.json(await userByAccount(deps, c.get('app').id, `${provider}_oauth`, subject))
  })

  routes.post('/users/import', async (c) => {
    const body = await readBody(c, importBody)
    const entries = body.users.map((entry, i) => {
      const checked = 'email' in entry ? validateEmail(entry.email) : validatePhone(entry.phone)
      if (!checked.ok) {
        throw LatchError.of('invalid_data', {
          message: `users.${i}: ${checked.error.message}`,
        })
      }
      return 'email' in entry ? { email: checked.value } : { phone: checked.value }
    })
    c.set('auditTarget', `count:${entries.length}`)
    const results = await importUsers(deps, c.get('app').id, entries, deps.clock.now())
    return c.json({ results })
  })

  routes.get('/users/:userId', async (c) => {
    const userId = userIdParam(c)
    target(c, 'user', userId)
    return c.json(await userById(deps, c.get('app').id, userId))
  })

  routes.delete('/users/:userId', async (c) => {
    const userId = userIdParam(c)
    target(c, 'user', userId)
    return c.json({
      deleted: await deleteUser(deps.db, c.get('app').id, userId, deps.clock.now()),
    })
  })

  return routes
}
