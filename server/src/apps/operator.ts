/**
 * The operator API for app settings, `/api/v1/operator/apps`: what `latch apps create|list|
 * show|update|rotate-keys`, `latch apps secret …` and `latch apps webhook …` do, for a running server
 * (`latch apps … --server <url>`), on either database.
 *
 * - Off unless `LATCH_ADMIN_KEY` (or `_FILE`) is set: every path answers 404 then, as for any
 *   unknown route, so a scan learns nothing.
 * - The key is the bearer (`Authorization: Bearer <key>`), compared in constant time (SHA-256 of
 *   both, timingSafeEqual, so neither length nor prefix leaks).
 * - Never from a browser: a request with `Origin`, `Referer` or fetch metadata is refused
 *   (403 admin_key_from_browser) before the key is read, so a page (the modal's or anyone's)
 *   cannot use a key it somehow holds, and CORS never lets a page read an answer. The API origin
 *   is the only one serving it; the modal origin has no such route.
 * - Rate limited per client address, counted before the key is checked: 60 calls a minute, and
 *   10 refused keys in 10 minutes (429 too_many_requests with Retry-After).
 * - Audited in the log: one line per call that presented the key, with the action, the app id,
 *   the client address and the outcome; never the key or the settings' values. Refused calls
 *   (a browser's, no key, a wrong key, over the rate limit) get a line too, with the reason, up
 *   to a budget per address and in all, so a flood cannot fill the log.
 * - Answers never hold secrets: OAuth client secrets and Apple keys are left out (`…Set: true`
 *   says one is stored), node URLs are named by chain only. An update's OAuth settings merge
 *   field by field into the stored ones, so changing a client id keeps its secret.
 *
 * A change is written to the database and this process's cache is dropped; every other process
 * reads it within the app cache's APP_CACHE_MS (2 s).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { isAppId, LatchError, type OAuthProvider } from '@latch/shared'
import { type Context, Hono, type MiddlewareHandler } from 'hono'
import { matchedRoutes } from 'hono/route'
import { z } from 'zod'
import { createAppSecret, listAppSecrets, revokeAppSecret } from '../admin/secrets.ts'
import { insecureOriginMessage, isSecureOrigin } from '../config.ts'
import type { Deps } from '../context.ts'
import { clientIp, readBody } from '../http.ts'
import type { OAuthSettings } from '../oauth/settings.ts'
import { countEach, hit, type Limit, refund } from '../ratelimit.ts'
import { createSponsor, listSponsors, spentTodayOfApp, updatePolicy } from '../sponsor/store.ts'
import { addEndpoint, deliveryLog, listEndpoints, removeEndpoint } from '../webhooks/endpoints.ts'
import { replay } from '../webhooks/worker.ts'
import {
  type AppInput,
  type AppRecord,
  createAppRecord,
  findApp,
  listApps,
  toServerAppConfig,
  updateAppRecord,
} from './service.ts'

/** Calls per client address: plenty for a person or a deploy script. */
export const OPERATOR_IP_LIMIT: Limit = { max: 60, windowMs: 60_000 }
/** Refused keys per client address: guessing a 32-character key is hopeless, and slowed. */
export const OPERATOR_FAILURE_LIMIT: Limit = { max: 10, windowMs: 10 * 60_000 }

/**
 * Refused calls written to the audit log, per client address and from all together: past
 * either, refusals are still answered but no longer logged until the window ends.
 */
export const REFUSAL_AUDIT_IP_LIMIT: Limit = { max: 20, windowMs: 10 * 60_000 }
export const REFUSAL_AUDIT_LIMIT: Limit = { max: 200, windowMs: 10 * 60_000 }

const BROWSER_HEADERS = ['origin', 'referer', 'sec-fetch-site', 'sec-fetch-dest', 'sec-fetch-user']

/** OAuth settings as the operator API shows them: every secret left out, its presence said. */
export type RedactedOAuth = Partial<
  Record<
    OAuthProvider,
    { clientId: string; clientSecretSet: boolean; applePrivateKeySet: boolean } & Record<
      string,
      unknown
    >
  >
>

/** An app as the operator API answers it. */
export type OperatorApp = Awaited<ReturnType<typeof toServerAppConfig>> & {
  smsCountries: readonly string[]
  rpcUrlChains: readonly number[]
  allowlistEntries: readonly string[]
  oauth: RedactedOAuth
}

function redactOAuth(oauth: OAuthSettings): RedactedOAuth {
  const out: RedactedOAuth = {}
  for (const [provider, settings] of Object.entries(oauth) as [
    OAuthProvider,
    OAuthSettings[OAuthProvider],
  ][]) {
    if (!settings) continue
    const { clientSecret, applePrivateKey, ...rest } = settings
    out[provider] = {
      ...rest,
      clientSecretSet: Boolean(clientSecret),
      applePrivateKeySet: Boolean(applePrivateKey),
    }
  }
  return out
}

async function view(deps: Deps, app: AppRecord): Promise<OperatorApp> {
  return {
    ...(await toServerAppConfig(deps, app)),
    smsCountries: app.smsCountries,
    rpcUrlChains: Object.keys(app.rpcUrls).map(Number),
    allowlistEntries: app.allowlist.entries,
    oauth: redactOAuth(app.oauth),
  }
}

function keyMatches(presented: string, key: string): boolean {
  const a = createHash('sha256').update(presented).digest()
  const b = createHash('sha256').update(key).digest()
  return timingSafeEqual(a, b)
}

type OperatorEnv = { Variables: { ip: string } }

function audit(deps: Deps, c: Context<OperatorEnv>, status: number, appId?: string): void {
  const action = `${c.req.method} ${c.req.routePath.replace(/^.*\/operator/, '') || '/'}`
  const fields = {
    msg: 'operator',
    action,
    appId: appId ?? c.req.param('id') ?? null,
    ip: c.get('ip'),
    status,
  }
  if (deps.logger.format === 'json') deps.logger.write({ level: 'info', ...fields })
  else
    deps.log(
      `[latch] operator ${action}${fields.appId ? ` app ${fields.appId}` : ''} from ${fields.ip}: ${status}`,
    )
}

/**
 * A refused call in the audit log, within the refusal budgets: the route it would have reached,
 * the app id its path names (only when it has an app id's shape), the address, the status and
 * the reason. A failure to count or write is reported and never changes the answer.
 */
async function auditRefusal(deps: Deps, c: Context<OperatorEnv>, refusal: unknown): Promise<void> {
  if (!(refusal instanceof LatchError)) return
  const ip = c.get('ip')
  try {
    const [all, perIp] = await countEach(deps.db, deps.clock, [
      { key: 'operator:refusal-audit', limit: REFUSAL_AUDIT_LIMIT },
      { key: `operator:refusal-audit:${ip}`, limit: REFUSAL_AUDIT_IP_LIMIT },
    ])
    if (
      (all?.count ?? Infinity) > REFUSAL_AUDIT_LIMIT.max ||
      (perIp?.count ?? Infinity) > REFUSAL_AUDIT_IP_LIMIT.max
    ) {
      return
    }
  } catch (e) {
    deps.log(`[latch] could not audit a refused operator call: ${(e as Error).message}`)
    return
  }
  // The first handler matched is the one that would have answered; its pattern, not the path.
  const route = matchedRoutes(c).find(
    (r) => r.method !== 'ALL' && r.path.includes('/operator/'),
  )?.path
  const action = `${c.req.method} ${route?.replace(/^.*\/operator/, '') ?? '/*'}`
  const named = /\/operator\/apps\/([^/]+)/.exec(c.req.path)?.[1]
  const appId = named !== undefined && isAppId(named) ? named : null
  const status = refusal.status ?? 400
  if (deps.logger.format === 'json') {
    deps.logger.write({
      level: 'warn',
      msg: 'operator refused',
      action,
      appId,
      ip,
      status,
      reason: refusal.code,
    })
  } else {
    deps.log(
      `[latch] operator ${action}${appId ? ` app ${appId}` : ''} from ${ip}: ${status} refused (${refusal.code})`,
    )
  }
}

function gate(deps: Deps, key: string): MiddlewareHandler<OperatorEnv> {
  return async (c, next) => {
    c.set('ip', clientIp(c, deps.config.trustProxy))
    try {
      await admit(deps, c, key)
    } catch (e) {
      await auditRefusal(deps, c, e)
      throw e
    }
    let status = 500
    try {
      await next()
      status = c.res.status
    } catch (e) {
      status = e instanceof LatchError ? (e.status ?? 400) : 500
      throw e
    } finally {
      audit(deps, c, status)
    }
  }
}

/** Refuses a browser's call, one over the rate limits, or one without the right key. */
async function admit(deps: Deps, c: Context<OperatorEnv>, key: string): Promise<void> {
  if (BROWSER_HEADERS.some((h) => c.req.header(h) !== undefined)) {
    throw LatchError.of('admin_key_from_browser')
  }
  const ip = c.get('ip')
  await hit(deps.db, deps.clock, `operator:ip:${ip}`, OPERATOR_IP_LIMIT)
  // A try is taken from the address's refused-key budget before the key is compared, and
  // given back when it was right: parallel guesses cannot overdraw it, and past it even the
  // right key waits, so the answer tells a guesser nothing.
  const failures = `operator:fail:${ip}`
  await hit(deps.db, deps.clock, failures, OPERATOR_FAILURE_LIMIT)
  const presented = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1]
  if (!presented || !keyMatches(presented, key)) throw LatchError.of('invalid_admin_key')
  await refund(deps.db, failures)
}

/** A new webhook endpoint: its URL and event filter are checked by webhooks/endpoints.ts. */
const endpointBody = z.object({
  url: z.string().max(2048),
  events: z.string().max(1024).optional(),
})

/** A policy change: each field is checked by sponsor/store.ts (applyPolicy). */
const policyBody = z.object({
  contracts: z.record(z.string(), z.array(z.string())).optional(),
  gasCapPerBatch: z.number().optional(),
  userDailyWei: z.string().optional(),
  appDailyWei: z.string().optional(),
})

async function sponsorViews(deps: Deps, appId: string) {
  const now = deps.clock.now()
  return Promise.all(
    (await listSponsors(deps, appId)).map(async (s) => ({
      chainId: s.chainId,
      address: s.address,
      policy: s.policy,
      spentTodayWei: (await spentTodayOfApp(deps.db, s.id, now)).toString(),
    })),
  )
}

async function sponsorView(deps: Deps, appId: string, chainId: number) {
  const found = (await sponsorViews(deps, appId)).find((s) => s.chainId === chainId)
  if (!found) {
    throw LatchError.of('not_found', { message: `App ${appId} has no sponsor on chain ${chainId}` })
  }
  return found
}

/** Any JSON object: its settings are checked by the apps service (parsePatch). */
const settingsBody = z.record(z.string(), z.unknown())

export function operatorRoutes(deps: Deps): Hono<OperatorEnv> {
  const routes = new Hono<OperatorEnv>()
  const key = deps.config.adminKey
  if (key === null) {
    // Off: the same 404 as any path the API does not know.
    routes.all('*', (c) => {
      throw LatchError.of('not_found', { message: `No route ${c.req.method} ${c.req.path}` })
    })
    return routes
  }
  routes.use('*', gate(deps, key))

  routes.get('/apps', async (c) => {
    const apps = await listApps(deps)
    return c.json({ apps: await Promise.all(apps.map((a) => view(deps, a))) })
  })

  routes.post('/apps', async (c) => {
    const input = (await readBody(c, settingsBody)) as unknown as AppInput
    checkOrigins(deps, input.allowedOrigins)
    const app = await createAppRecord(deps, input)
    return c.json(await view(deps, app), 201)
  })

  routes.get('/apps/:id', async (c) => {
    const app = await findApp(deps, c.req.param('id'))
    if (!app) throw LatchError.of('not_found', { message: `No app with id '${c.req.param('id')}'` })
    return c.json(await view(deps, app))
  })

  routes.post('/apps/:id', async (c) => {
    const id = c.req.param('id')
    const patch = (await readBody(c, settingsBody)) as Partial<AppInput>
    if (Object.keys(patch).length === 0) {
      throw LatchError.of('invalid_data', { message: 'Invalid app settings: nothing to change' })
    }
    checkOrigins(deps, patch.allowedOrigins)
    if (patch.oauth !== undefined && typeof patch.oauth === 'object' && patch.oauth !== null) {
      // Field by field over the stored settings: the client never sees the secrets to resend them.
      const current = await findApp(deps, id)
      if (current) {
        const merged: OAuthSettings = { ...patch.oauth }
        for (const [provider, settings] of Object.entries(patch.oauth) as [
          OAuthProvider,
          OAuthSettings[OAuthProvider],
        ][]) {
          if (settings && typeof settings === 'object') {
            merged[provider] = { ...current.oauth[provider], ...settings }
          }
        }
        patch.oauth = merged
      }
    }
    const app = await updateAppRecord(deps, id, patch)
    return c.json(await view(deps, app))
  })

  const existing = async (id: string) => {
    const app = await findApp(deps, id)
    if (!app) throw LatchError.of('not_found', { message: `No app with id '${id}'` })
    return app
  }

  // The app's server secrets (admin/secrets.ts), as `latch apps secret`: a new one is answered
  // this once (the audit line names the action, never the value).
  routes.get('/apps/:id/secrets', async (c) => {
    const app = await existing(c.req.param('id'))
    return c.json({ secrets: await listAppSecrets(deps, app.id) })
  })
  routes.post('/apps/:id/secrets', async (c) => {
    const app = await existing(c.req.param('id'))
    return c.json(await createAppSecret(deps, app.id), 201)
  })
  routes.post('/apps/:id/secrets/:secretId/revoke', async (c) => {
    const app = await existing(c.req.param('id'))
    const secretId = c.req.param('secretId')
    if (!(await revokeAppSecret(deps, app.id, secretId))) {
      throw LatchError.of('not_found', { message: `App ${app.id} has no secret '${secretId}'` })
    }
    return c.json({ id: secretId, revoked: true })
  })

  // The app's webhook endpoints and delivery log (webhooks/), as `latch apps webhook`: a new
  // endpoint's signing secret is answered this once.
  routes.get('/apps/:id/webhooks', async (c) => {
    const app = await existing(c.req.param('id'))
    return c.json({ endpoints: await listEndpoints(deps, app.id) })
  })
  routes.post('/apps/:id/webhooks', async (c) => {
    const app = await existing(c.req.param('id'))
    const body = await readBody(c, endpointBody)
    return c.json(await addEndpoint(deps, app.id, body), 201)
  })
  routes.post('/apps/:id/webhooks/:endpointId/remove', async (c) => {
    const app = await existing(c.req.param('id'))
    const endpointId = c.req.param('endpointId')
    if (!(await removeEndpoint(deps, app.id, endpointId))) {
      throw LatchError.of('not_found', {
        message: `App ${app.id} has no webhook endpoint '${endpointId}'`,
      })
    }
    return c.json({ id: endpointId, removed: true })
  })
  routes.get('/apps/:id/webhooks/deliveries', async (c) => {
    const app = await existing(c.req.param('id'))
    const limit = Number(c.req.query('limit') ?? 20)
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw LatchError.of('invalid_data', { message: 'limit takes a number from 1 to 1000' })
    }
    return c.json({ deliveries: await deliveryLog(deps.db, app.id, limit) })
  })
  routes.post('/webhooks/:id/replay', async (c) => {
    return c.json(await replay(deps, c.req.param('id')))
  })

  // The app's sponsors (sponsor/store.ts), as `latch sponsor`: never their keys.
  routes.get('/apps/:id/sponsors', async (c) => {
    const app = await existing(c.req.param('id'))
    return c.json({ sponsors: await sponsorViews(deps, app.id) })
  })
  routes.post('/apps/:id/sponsors', async (c) => {
    const app = await existing(c.req.param('id'))
    const { chainId } = await readBody(c, z.object({ chainId: z.number().int().positive() }))
    await createSponsor(deps, app.id, chainId)
    return c.json(await sponsorView(deps, app.id, chainId), 201)
  })
  routes.post('/apps/:id/sponsors/:chainId/policy', async (c) => {
    const app = await existing(c.req.param('id'))
    const chainId = Number(c.req.param('chainId'))
    const patch = await readBody(c, policyBody)
    await updatePolicy(deps, app.id, chainId, patch)
    return c.json(await sponsorView(deps, app.id, chainId))
  })

  // `latch apps rotate-keys`: new tokens are signed with the app's next key.
  routes.post('/apps/:id/rotate-keys', async (c) => {
    const app = await existing(c.req.param('id'))
    const current = async () => (await deps.keys.jwks(app.id)).keys[0]?.kid ?? null
    const previousKey = await current()
    await deps.keys.rotate(app.id)
    return c.json({ id: app.id, signingKey: await current(), previousKey })
  })

  return routes
}

/** Production's rule for host pages (https: or loopback), as `latch apps` applies it. */
function checkOrigins(deps: Deps, origins: unknown): void {
  if (!deps.config.production || !Array.isArray(origins)) return
  const bad = origins.find((o) => typeof o === 'string' && URL.canParse(o) && !isSecureOrigin(o))
  if (typeof bad === 'string') {
    throw LatchError.of('invalid_data', {
      message: `Invalid app settings: ${insecureOriginMessage('the allowed origin', bad)}`,
    })
  }
}
