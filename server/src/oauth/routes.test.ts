import { randomBytes } from 'node:crypto'
import {
  API_PREFIX,
  APP_ID_HEADER,
  type AuthResponse,
  CLIENT_HEADER,
  CLIENT_NAME,
  OAUTH_PROVIDERS,
  OAUTH_RETURN_PARAM_NAMES,
  type OAuthProvider,
  type ServerAppConfig,
  type User,
} from '@latch/shared'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { authenticateWithAccount } from '../accounts/service.ts'
import { type RunningServer, startServer } from '../index.ts'
import { createSession, logoutSession } from '../sessions/service.ts'
import { migratedMemory } from '../testing/global-setup.ts'
import {
  authorizeAtMock,
  type MockProviders,
  startMockProviders,
} from '../testing/mock-providers.ts'
import { walletCredentialName, walletCredentialValue } from '../wallets/credential.ts'
import { browserHashOf } from './flow.ts'
import { OAUTH_INIT_APP_LIMIT, OAUTH_INIT_IP_LIMIT } from './routes.ts'

const HOST = 'http://localhost:5173'
const MODAL = 'http://127.0.0.1:5999'
/** A browser secret as the modal makes one, per flow. */
const newSecret = () => randomBytes(32).toString('base64url')
/** A browser binding for requests that never finish their flow. */
const HASH = browserHashOf(newSecret())

let mock: MockProviders
let api: RunningServer
let appId: string
const logs: string[] = []

beforeAll(async () => {
  mock = await startMockProviders()
  api = await startServer({
    ...migratedMemory(),
    port: 0,
    host: '127.0.0.1',
    env: {
      DATABASE_URL: 'memory://',
      LATCH_SECRET: 'oauth-routes-test-secret-0123456789abcdef',
      LATCH_MODAL_ORIGIN: MODAL,
    },
    log: (line) => logs.push(line),
  })
  const app = await api.admin.createApp({
    name: 'OAuth test',
    allowedOrigins: [HOST],
    loginMethods: ['email', ...OAUTH_PROVIDERS],
    oauth: mock.settings(),
  })
  appId = app.id
})

afterAll(async () => {
  await api?.close()
  await mock?.stop()
})

interface Answer<T> {
  status: number
  body: T & { error?: { type: string; code: string; message: string } }
  /** The answer's Set-Cookie headers. */
  cookies: string[]
}

async function post<T>(
  path: string,
  body: unknown,
  opts: { token?: string; app?: string | null } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [CLIENT_HEADER]: CLIENT_NAME,
  }
  if (opts.app !== null) headers[APP_ID_HEADER] = opts.app ?? appId
  if (opts.token) headers.authorization = `Bearer ${opts.token}`
  // The signed-in browser's session credential, as the modal's credentialed fetch carries it.
  if (opts.token && /^\/(link|unlink)$/.test(path)) {
    const { sid, aud } = decodeJwt(opts.token)
    if (typeof sid === 'string' && typeof aud === 'string') {
      headers.cookie = `${walletCredentialName(sid)}=${walletCredentialValue(api.deps, aud, sid)}`
    }
  }
  const res = await fetch(`${api.url}${API_PREFIX}/oauth${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  })
  return {
    status: res.status,
    body: (await res.json()) as Answer<T>['body'],
    cookies: res.headers.getSetCookie(),
  }
}

/**
 * init -> provider -> API callback -> host page; answers the host page's parameters and the
 * secret the starting browser kept: the body /authenticate and /link take.
 */
async function toHostPage(provider: OAuthProvider, token?: string, secret = newSecret()) {
  const init = await post<{ url: string }>(
    '/init',
    { provider, redirect_to: `${HOST}/app`, browser_hash: browserHashOf(secret) },
    { token },
  )
  expect(init.status).toBe(200)
  const callback = await authorizeAtMock(init.body.url)
  expect(callback.href.startsWith(`${api.url}${API_PREFIX}/oauth/callback/${provider}?`)).toBe(true)
  let res: Response
  if (provider === 'apple') {
    // Apple returns with a form POST (response_mode=form_post).
    res = await fetch(`${callback.origin}${callback.pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: callback.searchParams.toString(),
      redirect: 'manual',
    })
    expect(res.status).toBe(303)
  } else {
    res = await fetch(callback, { redirect: 'manual' })
    expect(res.status).toBe(302)
  }
  const back = new URL(res.headers.get('location') ?? '')
  expect(`${back.origin}${back.pathname}`).toBe(`${HOST}/app`)
  expect(back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.provider)).toBe(provider)
  return {
    authorization_code: back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.code) ?? '',
    state_code: back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.state) ?? '',
    browser_secret: secret,
  }
}

/** A user who signed in by e-mail, with a live session. */
async function emailUser(address: string): Promise<{ user: User; token: string }> {
  const { user } = await authenticateWithAccount(api.deps, appId, { type: 'email', address })
  const session = await createSession(api.deps, appId, user.id)
  return { user, token: session.token }
}

const people: Record<
  OAuthProvider,
  { sub: string; email?: string; name?: string; username?: string }
> = {
  google: { sub: 'google-100', email: 'grace@gmail.example', name: 'Grace Hopper' },
  twitter: { sub: 'twitter-100', username: 'grace', name: 'Grace H' },
  discord: { sub: 'discord-100', username: 'grace#7', email: 'grace@discord.example' },
  github: { sub: '100', username: 'gracehopper', name: 'Grace GH', email: 'grace@github.example' },
  apple: { sub: 'apple-100', email: 'grace@privaterelay.appleid.com' },
}

describe('sign-in with each provider', () => {
  test.each(OAUTH_PROVIDERS)(
    'behavior: %s as a new user, then as a returning one',
    async (provider) => {
      mock.signIn(provider, people[provider])
      const first = await post<AuthResponse>('/authenticate', await toHostPage(provider))
      expect(first.status).toBe(200)
      expect(first.body.is_new_user).toBe(true)
      expect(first.body.token).toBeTruthy()
      // The refresh token is only in the API origin's HttpOnly cookie, never in the body.
      expect(first.body).not.toHaveProperty('refresh_token')
      expect(first.cookies).toContainEqual(
        expect.stringMatching(/^__Secure-latch-rt-\w+=[a-z0-9]+\.[\w-]{43}; .*HttpOnly; Secure/),
      )
      const key = provider as 'google'
      const account = first.body.user[key]
      expect(account).toMatchObject({ type: `${provider}_oauth`, subject: people[provider].sub })
      expect(first.body.user.linkedAccounts).toHaveLength(1)

      const again = await post<AuthResponse>('/authenticate', await toHostPage(provider))
      expect(again.status).toBe(200)
      expect(again.body.is_new_user).toBe(false)
      expect(again.body.user.id).toBe(first.body.user.id)
    },
  )

  test('behavior: the SPEC fields of each account type', async () => {
    mock.signIn('github', { sub: '200', username: 'octo', name: 'Octo Cat', email: 'o@gh.example' })
    const gh = await post<AuthResponse>('/authenticate', await toHostPage('github'))
    expect(gh.body.user.github).toMatchObject({
      subject: '200',
      username: 'octo',
      name: 'Octo Cat',
      email: 'o@gh.example',
    })
    mock.signIn('apple', { sub: 'apple-200', email: 'x@privaterelay.appleid.com' })
    const apple = await post<AuthResponse>('/authenticate', await toHostPage('apple'))
    expect(apple.body.user.apple).toMatchObject({
      subject: 'apple-200',
      email: 'x@privaterelay.appleid.com',
    })
    expect(typeof apple.body.user.apple?.verifiedAt).toBe('string')
  })
})

describe('linking', () => {
  test('behavior: Google linked to an e-mail user, then unlinked', async () => {
    const { user, token } = await emailUser('linker@example.com')
    mock.signIn('google', { sub: 'google-link-1', email: 'linker@gmail.example', name: 'L' })
    const linked = await post<User>('/link', await toHostPage('google', token), { token })
    expect(linked.status).toBe(200)
    expect(linked.body.id).toBe(user.id)
    expect(linked.body.email?.address).toBe('linker@example.com')
    expect(linked.body.google).toMatchObject({ subject: 'google-link-1', name: 'L' })

    // Signing in with that Google account now reaches the same user.
    const signIn = await post<AuthResponse>('/authenticate', await toHostPage('google'))
    expect(signIn.body.user.id).toBe(user.id)
    expect(signIn.body.is_new_user).toBe(false)

    const unlinked = await post<User>(
      '/unlink',
      { provider: 'google', subject: 'google-link-1' },
      { token },
    )
    expect(unlinked.status).toBe(200)
    expect(unlinked.body.google).toBeUndefined()
    expect(unlinked.body.linkedAccounts.map((a) => a.type)).toEqual(['email'])
  })

  test('error: the same subject refused for a second user (linked_to_another_user)', async () => {
    mock.signIn('google', { sub: 'google-taken', email: 'taken@gmail.example' })
    const owner = await post<AuthResponse>('/authenticate', await toHostPage('google'))
    expect(owner.status).toBe(200)
    const { token } = await emailUser('second@example.com')
    const refused = await post<User>('/link', await toHostPage('google', token), { token })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toEqual({
      type: 'api_error',
      code: 'linked_to_another_user',
      message: 'Another user has already linked this account.',
    })
  })

  test('error: link and unlink need a signed-in user', async () => {
    const link = await post('/link', { authorization_code: 'x', state_code: 'y' })
    expect(link.status).toBe(401)
    expect(link.body.error?.code).toBe('not_authenticated')
    const unlink = await post('/unlink', { provider: 'google', subject: 'x' })
    expect(unlink.status).toBe(401)
  })
})

/** What an account-takeover or login-CSRF replay could change: the rows it would write. */
async function snapshot(userId: string) {
  const db = api.deps.db
  const accounts = await db
    .selectFrom('linked_accounts')
    .select(['user_id', 'type', 'identifier'])
    .where('app_id', '=', appId)
    .orderBy('id')
    .execute()
  const sessions = await db
    .selectFrom('sessions')
    .select('id')
    .where('app_id', '=', appId)
    .execute()
  const users = await db.selectFrom('users').select('id').where('app_id', '=', appId).execute()
  return {
    accounts,
    victim: accounts.filter((a) => a.user_id === userId),
    sessions: sessions.length,
    users: users.length,
  }
}

describe('replaying an OAuth return (bound to the browser and the user that started it)', () => {
  const attacker = { sub: 'google-attacker', email: 'mallory@gmail.example', name: 'Mallory' }

  /**
   * The attacker starts a flow signed out in their own browser, signs in at the provider as
   * themselves and keeps the return parameters instead of following them.
   */
  async function attackersReturn() {
    mock.signIn('google', attacker)
    return toHostPage('google')
  }

  test('error: a flow started signed out, finished by /link into a signed-in victim', async () => {
    const { user: victim, token } = await emailUser('victim-link@example.com')
    const stolen = await attackersReturn()
    const before = await snapshot(victim.id)
    // Without a secret (the victim's browser has none for this flow), with a wrong one, and
    // even with the attacker's own secret: a signed-out flow never becomes a link.
    const attempts = [
      { authorization_code: stolen.authorization_code, state_code: stolen.state_code },
      { ...stolen, browser_secret: newSecret() },
      stolen,
    ]
    for (const body of attempts) {
      const res = await post<User>('/link', body, { token })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      expect(res.body.error?.code).toMatch(/^(invalid_data|oauth_invalid_code)$/)
    }
    const after = await snapshot(victim.id)
    expect(after).toEqual(before)
    expect(after.victim.map((a) => a.type)).toEqual(['email'])
    expect(after.accounts.some((a) => a.identifier === attacker.sub)).toBe(false)
  })

  test('error: a flow finished by /authenticate in a browser that did not start it', async () => {
    const { user: bystander } = await emailUser('victim-signed-out@example.com')
    const stolen = await attackersReturn()
    const before = await snapshot(bystander.id)
    const missing = await post('/authenticate', {
      authorization_code: stolen.authorization_code,
      state_code: stolen.state_code,
    })
    expect(missing.status).toBe(400)
    expect(missing.body.error?.code).toBe('invalid_data')
    expect(missing.body.error?.message).toMatch(/browser_secret/)
    const wrong = await post<AuthResponse>('/authenticate', {
      ...stolen,
      browser_secret: newSecret(),
    })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error?.code).toBe('oauth_invalid_code')
    expect(wrong.body.token).toBeUndefined()
    // Nobody signed in: no session, no user, no account for the attacker's Google identity.
    expect(await snapshot(bystander.id)).toEqual(before)
  })

  test("error: a link flow cannot be finished as a sign-in, nor into another user's account", async () => {
    const { user: starter, token } = await emailUser('starter@example.com')
    const { user: other, token: otherToken } = await emailUser('other@example.com')
    mock.signIn('google', { sub: 'google-starter', email: 'starter@gmail.example' })
    const asSignIn = await toHostPage('google', token)
    const before = await snapshot(starter.id)
    const signIn = await post('/authenticate', asSignIn)
    expect(signIn.status).toBe(400)
    expect(signIn.body.error?.code).toBe('oauth_invalid_code')

    const intoOther = await toHostPage('google', token)
    const otherBefore = await snapshot(other.id)
    const linked = await post('/link', intoOther, { token: otherToken })
    expect(linked.status).toBe(400)
    expect(linked.body.error?.code).toBe('oauth_invalid_code')
    expect(await snapshot(starter.id)).toEqual(before)
    expect((await snapshot(other.id)).victim).toEqual(otherBefore.victim)

    // The rightful browser and user still link with a fresh flow.
    const own = await post<User>('/link', await toHostPage('google', token), { token })
    expect(own.status).toBe(200)
    expect(own.body.google?.subject).toBe('google-starter')
  })

  test('error: /oauth/init without a browser binding', async () => {
    const res = await post('/init', { provider: 'google', redirect_to: HOST })
    expect(res.status).toBe(400)
    expect(res.body.error?.code).toBe('invalid_data')
    expect(res.body.error?.message).toMatch(/browser_hash/)
  })
})

describe('from the modal', () => {
  test('behavior: CORS admits the modal origin on the OAuth routes, with credentials', async () => {
    const url = `${api.url}${API_PREFIX}/oauth/init`
    const preflight = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: MODAL,
        'access-control-request-method': 'POST',
        'access-control-request-headers': `content-type,authorization,${APP_ID_HEADER},${CLIENT_HEADER}`,
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe(MODAL)
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true')
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        origin: MODAL,
        'content-type': 'application/json',
        [APP_ID_HEADER]: appId,
        [CLIENT_HEADER]: CLIENT_NAME,
      },
      body: JSON.stringify({ provider: 'github', redirect_to: HOST, browser_hash: HASH }),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe(MODAL)
    const other = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example' },
    })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('errors', () => {
  test("error: denial at the provider returns code 'undefined', then oauth_user_denied", async () => {
    const secret = newSecret()
    const init = await post<{ url: string }>('/init', {
      provider: 'discord',
      redirect_to: HOST,
      browser_hash: browserHashOf(secret),
    })
    const state = new URL(init.body.url).searchParams.get('state') ?? ''
    const res = await fetch(
      `${api.url}${API_PREFIX}/oauth/callback/discord?error=access_denied&state=${state}`,
      { redirect: 'manual' },
    )
    expect(res.status).toBe(302)
    const back = new URL(res.headers.get('location') ?? '')
    expect(back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.code)).toBe('undefined')
    const denied = await post('/authenticate', {
      authorization_code: 'undefined',
      state_code: state,
      browser_secret: secret,
    })
    expect(denied.status).toBe(400)
    expect(denied.body.error).toEqual({
      type: 'oauth_error',
      code: 'oauth_user_denied',
      message: 'User denied confirmation during OAuth flow',
    })
  })

  test('error: an invalid code', async () => {
    const { state_code, browser_secret } = await toHostPage('google')
    const res = await post('/authenticate', {
      authorization_code: 'forged',
      state_code,
      browser_secret,
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toEqual({
      type: 'oauth_error',
      code: 'oauth_invalid_code',
      message: 'Invalid code during oauth flow.',
    })
  })

  test('error: a reused state is refused', async () => {
    mock.signIn('twitter', { sub: 'twitter-reuse', username: 'r' })
    const body = await toHostPage('twitter')
    expect((await post('/authenticate', body)).status).toBe(200)
    const again = await post('/authenticate', body)
    expect(again.status).toBe(400)
    expect(again.body.error?.code).toBe('oauth_invalid_code')
  })

  test('behavior: of two parallel finishes of one flow, exactly one signs in', async () => {
    mock.signIn('google', { sub: 'google-parallel', email: 'p@gmail.example' })
    const body = await toHostPage('google')
    const answers = await Promise.all([post('/authenticate', body), post('/authenticate', body)])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400])
  })

  test('error: redirect_to not among the allowed origins', async () => {
    const res = await post('/init', {
      provider: 'google',
      redirect_to: 'https://evil.example/x',
      browser_hash: HASH,
    })
    expect(res.status).toBe(403)
    expect(res.body.error?.code).toBe('origin_not_allowed')
  })

  test('error: a token endpoint answering 200 with an error body', async () => {
    const body = await toHostPage('github')
    mock.service.once('beforeResponse', (res) => {
      res.statusCode = 200
      res.body = { error: 'bad_verification_code', error_description: 'The code is wrong.' }
    })
    const res = await post('/authenticate', body)
    expect(res.status).toBe(400)
    expect(res.body.error?.code).toBe('oauth_invalid_code')
  })

  test('error: the callback with an unknown state answers a clear error, not a redirect', async () => {
    const res = await fetch(`${api.url}${API_PREFIX}/oauth/callback/google?code=a&state=b`, {
      redirect: 'manual',
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      'oauth_invalid_code',
    )
    const unknown = await fetch(`${api.url}${API_PREFIX}/oauth/callback/myspace?code=a&state=b`)
    expect(unknown.status).toBe(404)
  })

  test('security: a pending flow rewritten in the database without the server secret is no flow: the code goes nowhere, and no browser finishes it', async () => {
    mock.signIn('google', { sub: 'google-rewrite-victim', email: 'rw@gmail.example' })
    const victim = await post<AuthResponse>('/authenticate', await toHostPage('google'))
    expect(victim.status).toBe(200)
    // The victim starts again; a database writer points every pending flow at its own page
    // and its own browser.
    const init = await post<{ url: string }>('/init', {
      provider: 'google',
      redirect_to: `${HOST}/app`,
      browser_hash: browserHashOf(newSecret()),
    })
    expect(init.status).toBe(200)
    const writers = newSecret()
    await api.deps.db
      .updateTable('oauth_states')
      .set({ redirect_to: 'https://evil.example/catch', browser_hash: browserHashOf(writers) })
      .execute()
    const callback = await authorizeAtMock(init.body.url)
    const res = await fetch(callback, { redirect: 'manual' })
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      'oauth_invalid_code',
    )
    // Even with the code and state in hand, the writer's browser cannot finish the flow.
    const stolen = await post<AuthResponse>('/authenticate', {
      authorization_code: callback.searchParams.get('code'),
      state_code: callback.searchParams.get('state'),
      browser_secret: writers,
    })
    expect(stolen.status).toBe(400)
    expect(stolen.body.error?.code).toBe('oauth_invalid_code')
    expect(stolen.body.token).toBeUndefined()
    expect(logs.join('\n')).toContain(`refused oauth state of app ${appId}`)
  })

  test('error: bad requests answer 4xx with a clear message', async () => {
    const noApp = await post(
      '/init',
      { provider: 'google', redirect_to: HOST, browser_hash: HASH },
      { app: null },
    )
    expect(noApp.status).toBe(400)
    expect(noApp.body.error?.code).toBe('missing_or_invalid_latch_app_id')
    const badProvider = await post('/init', {
      provider: 'myspace',
      redirect_to: HOST,
      browser_hash: HASH,
    })
    expect(badProvider.status).toBe(400)
    expect(badProvider.body.error?.code).toBe('invalid_data')
    const notJson = await post('/authenticate', '{not json')
    expect(notJson.status).toBe(400)
    expect(notJson.body.error?.message).toBe('Request body is not valid JSON')
    const huge = await post('/authenticate', {
      authorization_code: 'x'.repeat(70_000),
      state_code: 's',
    })
    expect(huge.status).toBe(413)
  })

  test('error: a provider the app has not switched on', async () => {
    const other = await api.admin.createApp({
      name: 'E-mail only',
      allowedOrigins: [HOST],
      loginMethods: ['email'],
    })
    const res = await post(
      '/init',
      { provider: 'google', redirect_to: HOST, browser_hash: HASH },
      { app: other.id },
    )
    expect(res.status).toBe(403)
    expect(res.body.error?.code).toBe('method_not_available')
  })

  test('error: the allowlist applies to the e-mail of the OAuth account', async () => {
    await api.admin.updateApp(appId, {
      allowlist: { enabled: true, entries: ['invited@gmail.example'] },
    })
    try {
      mock.signIn('google', { sub: 'google-stranger', email: 'stranger@gmail.example' })
      const refused = await post('/authenticate', await toHostPage('google'))
      expect(refused.status).toBe(403)
      expect(refused.body.error?.code).toBe('allowlist_rejected')
      mock.signIn('google', { sub: 'google-invited', email: 'invited@gmail.example' })
      const allowed = await post<AuthResponse>('/authenticate', await toHostPage('google'))
      expect(allowed.status).toBe(200)
    } finally {
      await api.admin.updateApp(appId, { allowlist: { enabled: false, entries: [] } })
    }
  })
})

describe('rate limits of /oauth/init', () => {
  /**
   * Fills a limiter window to its maximum, as that many earlier starts would have, in a window
   * that begins now: a row left by an earlier start keeps its old window start otherwise, and on
   * a slow run that window may be over, so the next hit would open a fresh one and pass.
   */
  async function fill(key: string, limit: { max: number; windowMs: number }) {
    const now = api.deps.clock.now()
    const window = {
      window_start: now,
      count: limit.max,
      expires_at: new Date(now.getTime() + limit.windowMs),
    }
    await api.deps.db
      .insertInto('rate_limits')
      .values({ key, ...window })
      .onConflict((oc) => oc.column('key').doUpdateSet(window))
      .execute()
  }
  const clear = (key: string) =>
    api.deps.db.deleteFrom('rate_limits').where('key', '=', key).execute()
  const states = async () =>
    (await api.deps.db.selectFrom('oauth_states').select('state_hash').execute()).length
  const start = (app?: string) =>
    post('/init', { provider: 'google', redirect_to: HOST, browser_hash: HASH }, { app })
  const retryAfter = async (app?: string) => {
    const res = await fetch(`${api.url}${API_PREFIX}/oauth/init`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [CLIENT_HEADER]: CLIENT_NAME,
        [APP_ID_HEADER]: app ?? appId,
      },
      body: JSON.stringify({ provider: 'google', redirect_to: HOST, browser_hash: HASH }),
    })
    return { status: res.status, retryAfter: Number(res.headers.get('retry-after')) }
  }

  test('error: past the per-address limit, 429 with Retry-After and no flow stored', async () => {
    const key = 'oauth:init:ip:127.0.0.1'
    await fill(key, OAUTH_INIT_IP_LIMIT)
    try {
      const before = await states()
      const res = await start()
      expect(res.status).toBe(429)
      expect(res.body.error?.code).toBe('too_many_requests')
      const again = await retryAfter()
      expect(again.status).toBe(429)
      expect(again.retryAfter).toBeGreaterThanOrEqual(1)
      expect(again.retryAfter).toBeLessThanOrEqual(OAUTH_INIT_IP_LIMIT.windowMs / 1000)
      expect(await states()).toBe(before)
    } finally {
      await clear(key)
    }
    expect((await start()).status).toBe(200)
  })

  test("error: past the per-app limit, 429 for that app's visitors only", async () => {
    const other = await api.admin.createApp({
      name: 'Other OAuth app',
      allowedOrigins: [HOST],
      loginMethods: ['google'],
      oauth: mock.settings(),
    })
    const key = `oauth:init:app:${appId}`
    await fill(key, OAUTH_INIT_APP_LIMIT)
    try {
      const limited = await retryAfter()
      expect(limited.status).toBe(429)
      expect(limited.retryAfter).toBeGreaterThanOrEqual(1)
      expect((await start(other.id)).status).toBe(200)
    } finally {
      await clear(key)
    }
    expect((await start()).status).toBe(200)
  })
})

describe('GET /apps/{id} (public settings, no secrets)', () => {
  test('behavior: a social provider is reported on only when switched on and given a client id', async () => {
    const app = await api.admin.createApp({
      name: 'Half-configured social',
      allowedOrigins: [HOST],
      loginMethods: ['email', 'google', 'github', 'apple'],
      // GitHub is configured; Google and Apple are switched on without a client; Discord has a
      // client but is switched off.
      oauth: {
        github: mock.providerSettings('github'),
        discord: mock.providerSettings('discord'),
      },
    })
    const res = await fetch(`${api.url}${API_PREFIX}/apps/${app.id}`, {
      signal: AbortSignal.timeout(10_000),
    })
    expect(res.status).toBe(200)
    const config = (await res.json()) as ServerAppConfig
    expect({
      google: config.googleOAuth,
      twitter: config.twitterOAuth,
      discord: config.discordOAuth,
      github: config.githubOAuth,
      apple: config.appleOAuth,
    }).toEqual({ google: false, twitter: false, discord: false, github: true, apple: false })
    // What the configuration reports matches what /oauth/init does.
    const google = await post(
      '/init',
      { provider: 'google', redirect_to: HOST, browser_hash: HASH },
      { app: app.id },
    )
    expect(google.status).toBe(403)
    expect(google.body.error?.code).toBe('method_not_available')
    const github = await post(
      '/init',
      { provider: 'github', redirect_to: HOST, browser_hash: HASH },
      { app: app.id },
    )
    expect(github.status).toBe(200)
  })
})

test('param: LATCH_OAUTH_<PROVIDER>_<FIELD> given to startServer moves the provider endpoint, under the app’s own overrides', async () => {
  const server = await startServer({
    ...migratedMemory(),
    port: 0,
    host: '127.0.0.1',
    env: {
      DATABASE_URL: 'memory://',
      LATCH_SECRET: 'oauth-routes-test-secret-0123456789abcdef',
      LATCH_OAUTH_GOOGLE_AUTHORIZATION_URL: 'http://127.0.0.1:9/elsewhere',
      LATCH_OAUTH_GITHUB_AUTHORIZATION_URL: 'http://127.0.0.1:9/github',
    },
    log: () => {},
  })
  try {
    const { google, github } = mock.settings()
    if (!google || !github) throw new Error('the mock configures every provider')
    const app = await server.admin.createApp({
      name: 'Moved endpoints',
      allowedOrigins: [HOST],
      loginMethods: ['google', 'github'],
      oauth: {
        // Without its own authorization URL, the server's override applies.
        google: { ...google, endpoints: { tokenUrl: google.endpoints?.tokenUrl } },
        github,
      },
    })
    const init = async (provider: OAuthProvider) => {
      const res = await fetch(`${server.url}${API_PREFIX}/oauth/init`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [CLIENT_HEADER]: CLIENT_NAME,
          [APP_ID_HEADER]: app.id,
        },
        body: JSON.stringify({ provider, redirect_to: HOST, browser_hash: HASH }),
        signal: AbortSignal.timeout(10_000),
      })
      expect(res.status).toBe(200)
      return new URL(((await res.json()) as { url: string }).url)
    }
    const moved = await init('google')
    expect(`${moved.origin}${moved.pathname}`).toBe('http://127.0.0.1:9/elsewhere')
    // The app's own authorization URL wins over the server's.
    const own = await init('github')
    expect(own.href.startsWith(github.endpoints?.authorizationUrl ?? '?')).toBe(true)
  } finally {
    await server.close()
  }
})

test('refusal: /init takes a bearer token only when it names a live session: with a garbage or logged-out token the flow starts signed out, so /authenticate finishes it', async () => {
  const { token } = await emailUser('logged-out@example.com')
  const { sid } = await api.deps.keys.verifyAccessToken(appId, token)
  await logoutSession(api.deps, appId, null, sid)
  for (const [i, stale] of ['not-a-token', token].entries()) {
    mock.signIn('github', {
      sub: `${9000 + i}`,
      username: `stale${i}`,
      email: `stale${i}@github.example`,
    })
    // A flow a user started finishes only by /link: /authenticate succeeding shows it is signed out.
    const res = await post<AuthResponse>('/authenticate', await toHostPage('github', stale))
    expect(res.body.error).toBeUndefined()
    expect(res.status).toBe(200)
    expect(res.body.is_new_user).toBe(true)
  }
})
