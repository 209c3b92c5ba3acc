// @vitest-environment node
import { CLIENT_NAME, isLatchError, type User } from '@latch/shared'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { createApiClient } from './api.ts'
import { createSession, tokenExpiry } from './session.ts'
import { type ApiDouble, apiError, startApiDouble } from './test/api-double.ts'
import { APP_ID, jwt, user } from './test/fixtures.ts'
import { memoryTokens } from './test/memory-tokens.ts'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  api.requests.length = 0
})

const NOW = 1_800_000_000_000
const inSeconds = (s: number) => Math.floor(NOW / 1000) + s

function setup(refreshToken: string | null = null) {
  const tokens = memoryTokens(refreshToken)
  const users: (User | null)[] = []
  let session: ReturnType<typeof createSession> | null = null
  const client = createApiClient({
    baseUrl: api.url,
    appId: APP_ID,
    accessToken: () => session?.getAccessToken() ?? Promise.resolve(null),
  })
  session = createSession({ api: client, tokens, onUser: (u) => users.push(u), now: () => NOW })
  return { session, tokens, users, client }
}

test('behavior: tokenExpiry reads exp in milliseconds; garbage reads as expired', () => {
  expect(tokenExpiry(jwt(1234))).toBe(1_234_000)
  expect(tokenExpiry('not-a-jwt')).toBe(0)
  expect(tokenExpiry('a.%%%.c')).toBe(0)
})

describe('getAccessToken', () => {
  test('behavior: signed out answers null without a request', async () => {
    const { session } = setup()
    expect(await session.getAccessToken()).toBeNull()
    expect(api.requests).toHaveLength(0)
  })

  test('behavior: a token valid beyond 30 s is used as is', async () => {
    const { session } = setup()
    const token = jwt(inSeconds(31))
    session.start({ token }, user())
    expect(await session.getAccessToken()).toBe(token)
    expect(api.requests).toHaveLength(0)
  })

  test('behavior: within 30 s of expiry it refreshes, once for concurrent callers, and rotates the refresh token', async () => {
    const fresh = jwt(inSeconds(3600))
    api.on('POST /sessions', {
      body: { token: fresh, user: user() },
      delay: 30,
    })
    const { session, tokens, users } = setup()
    session.start({ token: jwt(inSeconds(29)) }, user())
    const [a, b] = await Promise.all([session.getAccessToken(), session.getAccessToken()])
    expect(a).toBe(fresh)
    expect(b).toBe(fresh)
    const calls = api.calls('POST /sessions')
    expect(calls).toHaveLength(1)
    // The refresh token is the API's HttpOnly cookie, which the credentialed fetch carries: the
    // body names none, and no bearer goes with it.
    expect(calls[0]?.body).toEqual({})
    expect(calls[0]?.headers.authorization).toBeUndefined()
    expect(calls[0]?.headers['latch-app-id']).toBe(APP_ID)
    expect(calls[0]?.headers['latch-client']).toBe(CLIENT_NAME)
    expect(tokens.value).toBe(true)
    expect(users.at(-1)).toEqual(user())
  })

  test('behavior: an expired token refreshes', async () => {
    api.on('POST /sessions', {
      body: { token: jwt(inSeconds(600)), user: user() },
    })
    const { session } = setup()
    session.start({ token: jwt(inSeconds(-5)) }, user())
    expect(tokenExpiry((await session.getAccessToken()) as string)).toBe(inSeconds(600) * 1000)
  })

  test('error: invalid_refresh_token clears the local session', async () => {
    api.on(
      'POST /sessions',
      apiError(401, 'invalid_refresh_token', 'Invalid or expired refresh token'),
    )
    const { session, tokens, users } = setup()
    session.start({ token: jwt(inSeconds(1)) }, user())
    expect(await session.getAccessToken()).toBeNull()
    expect(tokens.value).toBe(false)
    expect(users.at(-1)).toBeNull()
    expect(session.isAuthenticated()).toBe(false)
  })

  test('error: other refresh failures keep the session and reject', async () => {
    api.on('POST /sessions', apiError(503, 'internal_error', 'down'))
    const { session, tokens } = setup()
    session.start({ token: jwt(inSeconds(1)) }, user())
    const error = await session.getAccessToken().catch((e: unknown) => e)
    expect(isLatchError(error) && error.status).toBe(503)
    expect(tokens.value).toBe(true)
  })
})

describe('restore and logout', () => {
  test('behavior: where a session was marked, startup refreshes it through the cookie', async () => {
    api.on('POST /sessions', {
      body: { token: jwt(inSeconds(600)), user: user() },
    })
    const { session, tokens } = setup('marked')
    expect(await session.restore()).toEqual(user())
    expect(api.calls('POST /sessions')[0]?.body).toEqual({})
    expect(tokens.value).toBe(true)
    expect(session.isAuthenticated()).toBe(true)
  })

  test('behavior: nothing stored, nothing asked', async () => {
    const { session } = setup()
    expect(await session.restore()).toBeNull()
    expect(api.requests).toHaveLength(0)
  })

  test('behavior: logout calls /sessions/logout with the bearer token and clears', async () => {
    api.on('POST /sessions/logout', { body: { success: true } })
    const { session, tokens, users } = setup()
    const token = jwt(inSeconds(600))
    session.start({ token }, user())
    await session.logout()
    const call = api.calls('POST /sessions/logout')[0]
    expect(call?.body).toEqual({})
    expect(call?.headers.authorization).toBe(`Bearer ${token}`)
    expect(tokens.value).toBe(false)
    expect(users.at(-1)).toBeNull()
    expect(await session.getAccessToken()).toBeNull()
  })

  test('behavior: logout clears even when the server fails', async () => {
    api.on('POST /sessions/logout', apiError(500, 'internal_error', 'x'))
    const { session, tokens } = setup()
    session.start({ token: jwt(inSeconds(600)) }, user())
    await expect(session.logout()).resolves.toBeUndefined()
    expect(tokens.value).toBe(false)
  })
})
