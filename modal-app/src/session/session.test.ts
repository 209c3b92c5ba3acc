// @vitest-environment node
import {
  CLIENT_NAME,
  createApiClient,
  isLatchError,
  REFRESH_ID_HEADER,
  type User,
} from '@latch/shared'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { type Answer, type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { APP_ID, jwt, user } from '../test/fixtures.ts'
import { memoryTokens } from '../test/memory-tokens.ts'
import { createSession, tokenExpiry } from './session.ts'

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
  // The waits between a refresh's tries, recorded instead of waited.
  const waits: number[] = []
  let session: ReturnType<typeof createSession> | null = null
  const client = createApiClient({
    baseUrl: api.url,
    appId: APP_ID,
    accessToken: () => session?.getAccessToken() ?? Promise.resolve(null),
  })
  session = createSession({
    api: client,
    tokens,
    onUser: (u) => users.push(u),
    now: () => NOW,
    sleep: async (ms) => {
      waits.push(ms)
    },
  })
  return { session, tokens, users, client, waits }
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

describe('a refresh that fails on the way', () => {
  const fresh = () => ({ token: jwt(inSeconds(3600)), user: user() })
  /** Answers each try in turn from `answers`, the last one from then on. */
  const inTurn = (...answers: Answer[]) => {
    let n = 0
    api.on('POST /sessions', () => answers[Math.min(n++, answers.length - 1)] ?? {})
  }
  const ids = () => api.calls('POST /sessions').map((c) => c.headers[REFRESH_ID_HEADER])

  test('behavior: a 503 with Retry-After is sent again after that wait with the same Latch-Refresh-Id, and its answer is taken', async () => {
    inTurn(
      {
        ...apiError(503, 'service_unavailable', 'briefly unavailable'),
        headers: { 'retry-after': '2' },
      },
      { body: fresh() },
    )
    const { session, tokens, waits } = setup()
    session.start({ token: jwt(inSeconds(1)) }, user())
    expect(await session.getAccessToken()).toBe(fresh().token)
    expect(tokens.value).toBe(true)
    expect(waits).toEqual([2000])
    const sent = ids()
    expect(sent).toHaveLength(2)
    expect(sent[0]).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(sent[1]).toBe(sent[0])
    // The cookie is the credential: the bodies carry no token.
    expect(api.calls('POST /sessions').map((c) => c.body)).toEqual([{}, {}])
  })

  test('behavior: a connection dropped without an answer is sent again with the same id; the next refresh has an id of its own', async () => {
    inTurn({ drop: true }, { body: fresh() })
    const { session, waits } = setup()
    session.start({ token: jwt(inSeconds(1)) }, user())
    expect(await session.getAccessToken()).toBe(fresh().token)
    expect(waits).toEqual([500])
    const [first, second] = ids()
    expect(second).toBe(first)
    await session.restore()
    expect(ids()[2]).not.toBe(first)
  })

  test('error: the tries are bounded: five with the same id, no wait past 8 s whatever Retry-After says, then it rejects and keeps the token', async () => {
    inTurn({ ...apiError(503, 'service_unavailable', 'down'), headers: { 'retry-after': '60' } })
    const { session, tokens, waits } = setup()
    session.start({ token: jwt(inSeconds(1)) }, user())
    const error = await session.getAccessToken().catch((e: unknown) => e)
    expect(isLatchError(error) && error.code).toBe('service_unavailable')
    expect(api.calls('POST /sessions')).toHaveLength(5)
    expect(new Set(ids()).size).toBe(1)
    expect(waits).toEqual([8000, 8000, 8000, 8000])
    // Still marked: the session may well be alive once the server is back.
    expect(tokens.value).toBe(true)
  })

  test('refusal: the server’s word on the token is not sent again (invalid_refresh_token, invalid_data)', async () => {
    api.on('POST /sessions', apiError(400, 'invalid_data', 'bad'))
    const { session, waits } = setup()
    session.start({ token: jwt(inSeconds(1)) }, user())
    await expect(session.getAccessToken()).rejects.toMatchObject({ code: 'invalid_data' })
    api.on(
      'POST /sessions',
      apiError(401, 'invalid_refresh_token', 'Invalid or expired refresh token'),
    )
    expect(await session.getAccessToken()).toBeNull()
    expect(api.calls('POST /sessions')).toHaveLength(2)
    expect(waits).toEqual([])
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
