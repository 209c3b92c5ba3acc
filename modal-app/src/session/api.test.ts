// @vitest-environment node
import { CLIENT_NAME, createApiClient, isLatchError } from '@latch/shared'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { APP_ID } from '../test/fixtures.ts'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())

test('behavior: headers, JSON body and bearer token', async () => {
  api.on('POST /passwordless/init', { body: { success: true } })
  const client = createApiClient({
    baseUrl: `${api.url}/`,
    appId: APP_ID,
    accessToken: async () => 'tok',
  })
  expect(await client.request('/passwordless/init', { email: 'a@b.co' })).toEqual({ success: true })
  const call = api.calls('POST /passwordless/init')[0]
  expect(call?.headers['latch-app-id']).toBe(APP_ID)
  expect(call?.headers['latch-client']).toBe(CLIENT_NAME)
  expect(call?.headers.authorization).toBe('Bearer tok')
  expect(call?.headers['content-type']).toBe('application/json')
  expect(call?.body).toEqual({ email: 'a@b.co' })
})

test('behavior: auth false sends no bearer token; GET without a body', async () => {
  api.on('GET /apps/x', { body: { id: 'x' } })
  const client = createApiClient({
    baseUrl: api.url,
    appId: APP_ID,
    accessToken: async () => 'tok',
  })
  await client.request('/apps/x', undefined, { auth: false })
  const call = api.calls('GET /apps/x')[0]
  expect(call?.headers.authorization).toBeUndefined()
  expect(call?.method).toBe('GET')
})

test('error: API error bodies become LatchErrors with code, message and status', async () => {
  api.on(
    'POST /e',
    apiError(422, 'invalid_verification_code', 'Invalid or expired verification code'),
  )
  const client = createApiClient({ baseUrl: api.url, appId: APP_ID })
  const error = await client.request('/e', {}).catch((e: unknown) => e)
  expect(isLatchError(error)).toBe(true)
  expect(error).toMatchObject({ code: 'invalid_verification_code', status: 422 })
})

test('error: an unreadable error body is an internal error with the status', async () => {
  api.on('POST /html', { status: 502, body: '<html>' })
  const client = createApiClient({ baseUrl: api.url, appId: APP_ID })
  const error = await client.request('/html', {}).catch((e: unknown) => e)
  expect(error).toMatchObject({ code: 'internal_error', status: 502 })
})

test('error: no answer within the timeout is client_request_timeout, "Request timed out"', async () => {
  api.on('POST /slow', { body: {}, delay: 400 })
  const client = createApiClient({ baseUrl: api.url, appId: APP_ID, timeoutMs: 50 })
  const error = await client.request('/slow', {}).catch((e: unknown) => e)
  expect(error).toMatchObject({ code: 'client_request_timeout', message: 'Request timed out' })
})

test('error: a refused connection is a LatchError, not a crash', async () => {
  const client = createApiClient({ baseUrl: 'http://127.0.0.1:9', appId: APP_ID })
  const error = await client.request('/x', {}).catch((e: unknown) => e)
  expect(isLatchError(error)).toBe(true)
})

test("param: SPEC's defaults: every request includes credentials, and gives up after 10 s", async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  try {
    const seen: (RequestInit | undefined)[] = []
    // A node that never answers: the request ends only by the client's own timeout.
    const client = createApiClient({
      baseUrl: 'http://api.test',
      appId: APP_ID,
      fetch: (_input, init) => {
        seen.push(init)
        return new Promise<Response>((_resolve, reject) =>
          init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
        )
      },
    })
    let outcome: unknown
    const pending = client.request('/slow', {}).catch((e: unknown) => {
      outcome = e
    })
    await vi.advanceTimersByTimeAsync(9_999)
    expect(outcome).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    await pending
    expect(outcome).toMatchObject({ code: 'client_request_timeout', message: 'Request timed out' })
    expect(seen[0]?.credentials).toBe('include')
  } finally {
    vi.useRealTimers()
  }
})
