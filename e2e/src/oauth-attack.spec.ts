/**
 * An OAuth return replayed into someone else's browser. The attacker starts a
 * flow signed out, signs in at the provider as themselves and keeps the return parameters
 * instead of following them; then sends the victim to the host page with them. In a signed-in
 * victim's page that used to link the attacker's Google account to the victim (the attacker
 * could then sign in as the victim); in a signed-out page it used to sign the visitor into the
 * attacker's account (login CSRF). Both must now do nothing: the flow belongs to the browser
 * that started it.
 */

import { randomBytes } from 'node:crypto'
import { authorizeAtMock, type MockProviders, startMockProviders } from '@latch/server/testing'
import {
  API_PREFIX,
  APP_ID_HEADER,
  type AuthResponse,
  CLIENT_HEADER,
  CLIENT_NAME,
  OAUTH_RETURN_PARAM_NAMES,
  type ServerAppConfig,
  type User,
} from '@latch/shared'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { PENDING_FLOW_KEY } from '../../host-sdk/src/oauth.ts'
import { demoUser, expectOk, latchCall, newEmail, screen, settle, signInByEmail } from './flows.ts'
import { type HostPage, WAIT_MS, waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()
let mock: MockProviders
let app: ServerAppConfig

beforeAll(async () => {
  mock = await startMockProviders()
  app = await h().createApp({ loginMethods: ['email', 'google'], oauth: mock.settings() })
})
afterAll(async () => {
  await mock?.stop()
})

const base64url = (bytes: Buffer) => bytes.toString('base64url')
const sha256 = async (text: string) =>
  base64url(Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))))

async function api<T>(path: string, body: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${h().apiUrl}${API_PREFIX}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [APP_ID_HEADER]: app.id,
      [CLIENT_HEADER]: CLIENT_NAME,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  })
  return { status: res.status, body: (await res.json()) as T }
}

interface StolenReturn {
  /** The host page address with the attacker's latch_oauth_* parameters. */
  url: string
  code: string
  state: string
  /** The attacker's own browser secret for the flow. */
  secret: string
  sub: string
}

/**
 * The attacker's side, with their own tools: /oauth/init signed out, the provider's sign-in as
 * themselves, and the API's callback, whose redirect they keep instead of following.
 */
async function attackersReturn(): Promise<StolenReturn> {
  const sub = `google-attacker-${randomBytes(6).toString('hex')}`
  mock.signIn('google', { sub, email: `${sub}@gmail.example`, name: 'Mallory' })
  const secret = base64url(randomBytes(32))
  const init = await api<{ url: string }>('/oauth/init', {
    provider: 'google',
    redirect_to: `${h().hostUrl}/?appId=${app.id}`,
    browser_hash: await sha256(secret),
  })
  expect(init.status).toBe(200)
  const callback = await authorizeAtMock(init.body.url)
  const res = await fetch(callback, { redirect: 'manual', signal: AbortSignal.timeout(10_000) })
  expect(res.status).toBe(302)
  const url = res.headers.get('location') ?? ''
  const params = new URL(url).searchParams
  return {
    url,
    code: params.get(OAUTH_RETURN_PARAM_NAMES.code) ?? '',
    state: params.get(OAUTH_RETURN_PARAM_NAMES.state) ?? '',
    secret,
    sub,
  }
}

/** Records the OAuth finishing calls any frame of the page makes. */
function watchFinishes(hp: HostPage): string[] {
  const seen: string[] = []
  hp.page.on('request', (req) => {
    if (/\/oauth\/(authenticate|link)$/.test(new URL(req.url()).pathname)) seen.push(req.url())
  })
  return seen
}

const hasLatchParams = (url: string) =>
  Object.values(OAUTH_RETURN_PARAM_NAMES).some((name) => new URL(url).searchParams.has(name))

/** Every linked account row of the app holding `identifier`, and the app's users and sessions. */
async function database(identifier: string) {
  const db = h().api.deps.db
  const holders = await db
    .selectFrom('linked_accounts')
    .select('user_id')
    .where('app_id', '=', app.id)
    .where('identifier', '=', identifier)
    .execute()
  const users = await db.selectFrom('users').select('id').where('app_id', '=', app.id).execute()
  const sessions = await db
    .selectFrom('sessions')
    .select('id')
    .where('app_id', '=', app.id)
    .execute()
  return { holders: holders.length, users: users.length, sessions: sessions.length }
}

/** The victim opens the attacker's address in `hp`, and the page settles. */
async function openStolen(hp: HostPage, stolen: StolenReturn): Promise<void> {
  await hp.page.goto(stolen.url, { waitUntil: 'load' })
  await waitReady(hp)
}

/**
 * The stolen return was live all along: the attacker, with their own secret, can still finish
 * it (so the victim's page refused it, rather than finding it dead).
 */
async function expectStillTheAttackers(stolen: StolenReturn): Promise<void> {
  const own = await api<AuthResponse>('/oauth/authenticate', {
    authorization_code: stolen.code,
    state_code: stolen.state,
    browser_secret: stolen.secret,
  })
  expect(own.status).toBe(200)
  expect(own.body.user.google?.subject).toBe(stolen.sub)
}

describe("the attacker's return opened in a victim's browser", () => {
  test("error: a signed-in victim: no account linked, the victim's user unchanged", async () => {
    const hp = await h().open({ appId: app.id })
    const email = newEmail('victim')
    const { user: victim } = await signInByEmail(h(), hp, email)
    const stolen = await attackersReturn()
    const before = await database(stolen.sub)
    const finishes = watchFinishes(hp)

    await openStolen(hp, stolen)

    expect(hasLatchParams(hp.page.url())).toBe(false)
    expect(await screen(hp.modal, 'AWAITING_OAUTH_SCREEN').count()).toBe(0)
    const now = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser'), 'getUser()'))
    expect(now?.id).toBe(victim.id)
    expect(now?.linkedAccounts).toEqual(victim.linkedAccounts)
    expect(now?.google).toBeUndefined()
    await demoUser(hp.page, (u) => u?.id === victim.id && u.google === undefined)
    expect(finishes).toEqual([])
    expect(await database(stolen.sub)).toEqual({ ...before, holders: 0 })

    await expectStillTheAttackers(stolen)
    // The Google account went to the attacker's own new user, never to the victim.
    const [holder] = await h()
      .api.deps.db.selectFrom('linked_accounts')
      .select('user_id')
      .where('app_id', '=', app.id)
      .where('identifier', '=', stolen.sub)
      .execute()
    expect(holder?.user_id).not.toBe(victim.id)
  })

  test('error: a signed-out visitor: nobody signed in, no user or session made', async () => {
    const hp = await h().open({ appId: app.id })
    const stolen = await attackersReturn()
    const before = await database(stolen.sub)
    const finishes = watchFinishes(hp)

    await openStolen(hp, stolen)

    expect(hasLatchParams(hp.page.url())).toBe(false)
    expect(await screen(hp.modal, 'AWAITING_OAUTH_SCREEN').count()).toBe(0)
    expect(expectOk(await settle(latchCall<User | null>(hp.page, 'getUser'), 'getUser()'))).toBe(
      null,
    )
    await demoUser(hp.page, (u) => u === null)
    expect(await hp.page.evaluate(() => window.latchLogins ?? [])).toEqual([])
    expect(finishes).toEqual([])
    expect(await database(stolen.sub)).toEqual(before)

    await expectStillTheAttackers(stolen)
  })

  test('error: a visitor whose own Google flow is pending: the foreign state is still refused', async () => {
    const hp = await h().open({ appId: app.id })
    // The visitor left for Google and came back without finishing: their flow stays saved.
    mock.signIn('google', { sub: `google-visitor-${randomBytes(4).toString('hex')}` })
    void latchCall(hp.page, 'login')
    await screen(hp.modal, 'LANDING').waitFor({ state: 'visible' })
    // The provider's page is stood in for; the visitor goes back without signing in there.
    await hp.page.route(`${mock.url}/**`, (route) =>
      route.fulfill({ contentType: 'text/html', body: '<h1>Sign in with Google</h1>' }),
    )
    await hp.modal.getByTestId('social-google').click()
    await hp.page.waitForURL((url) => url.href.startsWith(mock.url), { timeout: WAIT_MS })
    await hp.page.unroute(`${mock.url}/**`)
    // Back on the host page (no return parameters): the visitor's flow is saved in this tab.
    await hp.page.goto(`${h().hostUrl}/?appId=${app.id}`, { waitUntil: 'load' })
    await waitReady(hp)
    const pending = await hp.page.evaluate(
      (key) => JSON.parse(sessionStorage.getItem(key) ?? 'null') as { state?: string } | null,
      PENDING_FLOW_KEY,
    )
    expect(pending?.state).toMatch(/^[\w-]{22,}$/)
    const stolen = await attackersReturn()
    expect(stolen.state).not.toBe(pending?.state)
    const before = await database(stolen.sub)
    const finishes = watchFinishes(hp)

    await openStolen(hp, stolen)

    expect(hasLatchParams(hp.page.url())).toBe(false)
    expect(finishes).toEqual([])
    expect(expectOk(await settle(latchCall<User | null>(hp.page, 'getUser'), 'getUser()'))).toBe(
      null,
    )
    expect(await database(stolen.sub)).toEqual(before)
  })
})
