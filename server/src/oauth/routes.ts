/**
 * Social sign-in routes, mounted at /api/v1/oauth: init, the providers' callback (GET, and
 * POST for Apple's form_post), authenticate, link and unlink.
 *
 * The callback is a top-level navigation from the provider: it carries no app id header (the
 * state names the app), so this sub-app applies the app check itself to every other route,
 * and is mounted on the API ahead of the /api/v1 sub-app whose middleware would refuse
 * the callback.
 */

import {
  API_PREFIX,
  LatchError,
  OAUTH_PROVIDERS,
  oauthAuthenticateBody,
  oauthInitBody,
  oauthUnlinkBody,
  validateEmail,
} from '@latch/shared'
import { type Context, Hono } from 'hono'
import { requireAccountCredential } from '../accounts/change-gate.ts'
import { consumeLinkApproval } from '../accounts/link-approval.ts'
import { linkAccount, unlinkAccount } from '../accounts/service.ts'
import { type AppRecord, isAllowed } from '../apps/service.ts'
import type { Deps } from '../context.ts'
import { clientIp, type HonoEnv, optionalAuth, readBody, requireApp, requireAuth } from '../http.ts'
import { hit, type Limit } from '../ratelimit.ts'
import { signIn } from '../sessions/service.ts'
import { answerSignIn } from '../wallets/credential.ts'
import {
  callbackRedirect,
  finishOAuth,
  type OAuthApp,
  type OAuthFlowDeps,
  startOAuth,
} from './flow.ts'
import { type OAuthAccountInput, PROVIDERS, parseProvider } from './providers.ts'
import { kyselyStateStore } from './state-store.ts'

/**
 * Flows one client address may start: each stores a row and answers a provider URL, and a
 * person starts a few (a retry, a second provider).
 */
export const OAUTH_INIT_IP_LIMIT: Limit = { max: 60, windowMs: 5 * 60_000 }
/** Flows an app's visitors may start together, whatever their addresses. */
export const OAUTH_INIT_APP_LIMIT: Limit = { max: 3000, windowMs: 5 * 60_000 }

/** The flow's view of an app record. */
function toOAuthApp(app: AppRecord): OAuthApp {
  return {
    id: app.id,
    allowedOrigins: app.allowedOrigins,
    loginMethods: app.loginMethods,
    settings: app.oauth,
  }
}

/** The e-mail an OAuth account carries, for the allowlist. */
function emailOf(account: OAuthAccountInput): string | null {
  return 'email' in account && account.email ? account.email : null
}

export function oauthRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  // Link and unlink need the signed-in browser's session credential (accounts/change-gate.ts).
  const changeGate = requireAccountCredential(deps)
  const flow: OAuthFlowDeps = {
    store: kyselyStateStore(deps, () => deps.clock.now()),
    endpoints: deps.config.oauthEndpoints,
    now: () => deps.clock.now(),
    onProviderError: (e) =>
      deps.log(
        `[latch] oauth: provider exchange failed: ${e instanceof Error ? e.message : String(e)}`,
      ),
  }

  /** The provider's return: back to the host page with the latch_oauth_* parameters. */
  const callback = async (c: Context<HonoEnv>, params: URLSearchParams, status: 302 | 303) => {
    const provider = parseProvider(c.req.param('provider'))
    if (!provider) throw LatchError.of('not_found', { message: 'Unknown OAuth provider' })
    return c.redirect(await callbackRedirect(flow, provider, params), status)
  }
  routes.get('/callback/:provider', (c) => callback(c, new URL(c.req.url).searchParams, 302))
  routes.post('/callback/:provider', async (c) => {
    const form = await c.req.parseBody().catch(() => ({}))
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(form)) {
      if (typeof value === 'string') params.set(key, value)
    }
    // After a cross-site POST, 303 makes the browser GET the host page.
    return callback(c, params, 303)
  })

  const withApp = requireApp(deps)

  routes.post('/init', withApp, optionalAuth(deps), async (c) => {
    const body = await readBody(c, oauthInitBody)
    const record = c.get('app')
    const ip = clientIp(c, deps.config.trustProxy)
    await hit(deps.db, deps.clock, `oauth:init:ip:${ip}`, OAUTH_INIT_IP_LIMIT)
    await hit(deps.db, deps.clock, `oauth:init:app:${record.id}`, OAUTH_INIT_APP_LIMIT)
    // The provider calls the API back where the app says the API lives, else at the configured
    // public URL (required in production); the request's own origin, which trusts the Host
    // header, only outside production.
    const base = record.customApiUrl ?? deps.config.publicUrl ?? new URL(c.req.url).origin
    const url = await startOAuth(flow, {
      app: toOAuthApp(record),
      provider: body.provider,
      redirectTo: body.redirect_to,
      redirectUri: new URL(`${API_PREFIX}/oauth/callback/${body.provider}`, base).href,
      // A stale token does not stop a sign-in: the flow starts signed out.
      userId: c.get('maybeAuth')?.sub ?? null,
      browserHash: body.browser_hash,
    })
    return c.json({ url })
  })

  routes.post('/authenticate', withApp, async (c) => {
    const body = await readBody(c, oauthAuthenticateBody)
    const record = c.get('app')
    const { account } = await finishOAuth(flow, {
      app: toOAuthApp(record),
      code: body.authorization_code,
      state: body.state_code,
      userId: null,
      browserSecret: body.browser_secret,
    })
    if (record.allowlist.enabled) {
      const email = validateEmail(emailOf(account) ?? '')
      if (!email.ok || !isAllowed(record, email.value)) throw LatchError.of('allowlist_rejected')
    }
    return answerSignIn(c, deps, record.id, await signIn(deps, record.id, account))
  })

  routes.post('/link', withApp, requireAuth(deps), changeGate, async (c) => {
    const body = await readBody(c, oauthAuthenticateBody)
    const record = c.get('app')
    const userId = c.get('auth').sub
    const { account } = await finishOAuth(flow, {
      app: toOAuthApp(record),
      code: body.authorization_code,
      state: body.state_code,
      userId,
      browserSecret: body.browser_secret,
    })
    // Approved by provider: the account's subject is known only once the provider answered.
    const provider = OAUTH_PROVIDERS.find((p) => PROVIDERS[p].accountType === account.type)
    await consumeLinkApproval(deps, record.id, userId, c.get('auth').sid, 'oauth', provider ?? '')
    return c.json(await linkAccount(deps, record.id, userId, account, deps.clock.now()))
  })

  routes.post('/unlink', withApp, requireAuth(deps), changeGate, async (c) => {
    const body = await readBody(c, oauthUnlinkBody)
    const user = await unlinkAccount(deps, c.get('app').id, c.get('auth').sub, {
      type: PROVIDERS[body.provider].accountType,
      identifier: body.subject,
    })
    return c.json(user)
  })

  return routes
}
