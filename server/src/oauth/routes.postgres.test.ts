/** The OAuth routes on a real PostgreSQL: the feature's migration, sign-in, link, single use. */

import { randomBytes } from 'node:crypto'
import {
  API_PREFIX,
  APP_ID_HEADER,
  type AuthResponse,
  CLIENT_HEADER,
  CLIENT_NAME,
  OAUTH_RETURN_PARAM_NAMES,
} from '@latch/shared'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type RunningServer, startServer } from '../index.ts'
import { type RunningPostgres, runPostgres } from '../testing/index.ts'
import {
  authorizeAtMock,
  type MockProviders,
  startMockProviders,
} from '../testing/mock-providers.ts'
import { browserHashOf } from './flow.ts'

const HOST = 'http://localhost:5173'
let postgres: RunningPostgres | null = null
let api: RunningServer | undefined
let mock: MockProviders | undefined
let appId = ''

beforeAll(async () => {
  postgres = await runPostgres()
  if (!postgres) {
    console.warn('PostgreSQL binaries are absent: the OAuth routes on PostgreSQL are skipped')
    return
  }
  mock = await startMockProviders()
  api = await startServer({
    port: 0,
    host: '127.0.0.1',
    env: {
      DATABASE_URL: await postgres.createDatabase(),
      LATCH_SECRET: 'oauth-postgres-test-secret-0123456789abcdef',
    },
    log: () => {},
  })
  appId = (
    await api.admin.createApp({
      name: 'OAuth on PostgreSQL',
      allowedOrigins: [HOST],
      loginMethods: ['email', 'google'],
      oauth: { google: mock.providerSettings('google') },
    })
  ).id
}, 60_000)

afterAll(async () => {
  await api?.close()
  await mock?.stop()
  await postgres?.close()
})

async function post<T>(path: string, body: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${api?.url}${API_PREFIX}/oauth${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [APP_ID_HEADER]: appId,
      [CLIENT_HEADER]: CLIENT_NAME,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  })
  return { status: res.status, body: (await res.json()) as T }
}

async function googleReturn() {
  const secret = randomBytes(32).toString('base64url')
  const init = await post<{ url: string }>('/init', {
    provider: 'google',
    redirect_to: HOST,
    browser_hash: browserHashOf(secret),
  })
  const callback = await authorizeAtMock(init.body.url)
  const res = await fetch(callback, { redirect: 'manual' })
  const back = new URL(res.headers.get('location') ?? '')
  return {
    authorization_code: back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.code),
    state_code: back.searchParams.get(OAUTH_RETURN_PARAM_NAMES.state),
    browser_secret: secret,
  }
}

describe('OAuth on PostgreSQL', () => {
  test('behavior: new, then returning; a used state is refused', async ({ skip }) => {
    if (!api || !mock) return skip()
    mock.signIn('google', { sub: 'pg-1', email: 'pg@gmail.example', name: 'P G' })
    const body = await googleReturn()
    const [first, reused] = await Promise.all([
      post<AuthResponse>('/authenticate', body),
      post<AuthResponse>('/authenticate', body),
    ])
    expect([first.status, reused.status].sort()).toEqual([200, 400])
    const signedIn = first.status === 200 ? first : reused
    expect(signedIn.body.is_new_user).toBe(true)
    expect(signedIn.body.user.google).toMatchObject({ subject: 'pg-1', email: 'pg@gmail.example' })
    const again = await post<AuthResponse>('/authenticate', await googleReturn())
    expect(again.body.is_new_user).toBe(false)
    expect(again.body.user.id).toBe(signedIn.body.user.id)
  })
})
