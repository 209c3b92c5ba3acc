/**
 * The request id in error bodies: every JSON error answer carries `requestId`, equal to its
 * `X-Request-Id` header, whoever wrote the answer (a route's refusal, the 404, a 500, the wallet
 * frame's page, the listener's answers to requests that never reach the app, the metrics path);
 * clients that parse the error body read it as before.
 */
import { randomBytes } from 'node:crypto'
import {
  API_PREFIX,
  APP_ID_HEADER,
  CLIENT_HEADER,
  CLIENT_NAME,
  fromApiError,
  parseRetryAfter,
} from '@latch/shared'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type RunningServer, startServer } from '../index.ts'
import { migratedMemory } from '../testing/global-setup.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { sendRaw } from '../testing/wire.ts'
import { REQUEST_ID_HEADER } from './log.ts'

const METRICS_TOKEN = randomBytes(24).toString('hex')
let server: RunningServer
let appId: string

beforeAll(async () => {
  server = await startServer({
    port: 0,
    log: () => {},
    ...migratedMemory(),
    env: {
      NODE_ENV: 'test',
      DATABASE_URL: 'memory://',
      LATCH_SECRET: TEST_SECRET,
      LATCH_METRICS: '1',
      LATCH_METRICS_TOKEN: METRICS_TOKEN,
      LATCH_MODAL_ORIGIN: 'http://127.0.0.1:5174',
    },
  })
  const app = await server.admin.createApp({
    name: 'Request ids',
    allowedOrigins: ['http://localhost:5173'],
    loginMethods: ['email'],
  })
  appId = app.id
})
afterAll(async () => {
  await server?.close()
})

/** The answer's error body, checked to carry the header's id; answers the body. */
async function carriesId(res: Response): Promise<{ error: { code: string }; requestId: string }> {
  const body = (await res.json()) as { error: { code: string }; requestId: string }
  const id = res.headers.get(REQUEST_ID_HEADER)
  expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/)
  expect(body.requestId).toBe(id)
  return body
}

test('behavior: refusals, the 404, a 429 and a 500 carry the answer header’s request id in their body', async () => {
  const api = `${server.url}${API_PREFIX}`
  const headers = { [APP_ID_HEADER]: appId, [CLIENT_HEADER]: CLIENT_NAME }

  const notFound = await fetch(`${api}/nowhere`, { headers })
  expect(notFound.status).toBe(404)
  expect((await carriesId(notFound)).error.code).toBe('not_found')

  const noApp = await fetch(`${api}/passwordless/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(noApp.status).toBe(400)
  await carriesId(noApp)

  const badBody = await fetch(`${api}/passwordless/init`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{"email":',
  })
  expect(badBody.status).toBe(400)
  expect((await carriesId(badBody)).error.code).toBe('invalid_data')

  const noToken = await fetch(`${api}/wallets/info`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ address: '0x0000000000000000000000000000000000000001' }),
  })
  expect(noToken.status).toBe(401)
  await carriesId(noToken)

  // A 429 keeps its Retry-After, and clients read the body as before, the extra field aside.
  const email = `ids.${Date.now()}@example.com`
  const init = () =>
    fetch(`${api}/passwordless/init`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    })
  expect((await init()).status).toBe(200)
  const again = await init()
  expect(again.status).toBe(429)
  const retryAfter = parseRetryAfter(again.headers.get('retry-after'))
  expect(retryAfter).toBeGreaterThan(0)
  const tooSoon = await carriesId(again)
  const parsed = fromApiError(429, tooSoon, retryAfter)
  expect(parsed).toMatchObject({ code: tooSoon.error.code, status: 429, retryAfter })

  // A 500.
  await sql`DROP TABLE analytics_events`.execute(server.deps.db)
  const failed = await fetch(`${api}/analytics_events`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ event_name: 'sdk_initialize', client_id: 'c1', payload: {} }),
  })
  expect(failed.status).toBe(500)
  expect((await carriesId(failed)).error.code).toBe('internal_error')

  // Answers that are not errors are left as they were; HEAD has no body to carry it.
  const config = await fetch(`${api}/apps/${appId}`)
  expect(config.status).toBe(200)
  expect(await config.json()).not.toHaveProperty('requestId')
  const head = await fetch(`${api}/nowhere`, { method: 'HEAD', headers })
  expect(head.status).toBe(404)
  expect(await head.text()).toBe('')
})

test('behavior: the listener’s own answers and the metrics path carry a request id in header and body', async () => {
  const raw = await sendRaw(
    new URL(server.url),
    Buffer.from('GET /a\\b HTTP/1.1\r\nHost: x\r\n\r\n'),
  )
  expect(raw.status).toBe(400)
  const rawId = /\r\nX-Request-Id: ([A-Za-z0-9_-]{16})\r\n/i.exec(raw.text)?.[1]
  expect(rawId).toBeDefined()
  expect(JSON.parse(raw.text.slice(raw.text.indexOf('\r\n\r\n') + 4))).toMatchObject({
    error: { code: 'invalid_data' },
    requestId: rawId,
  })

  const expect417 = await sendRaw(
    new URL(server.url),
    Buffer.from('GET / HTTP/1.1\r\nHost: x\r\nExpect: nothing\r\n\r\n'),
  )
  expect(expect417.status).toBe(417)
  const id417 = /\r\nx-request-id: ([A-Za-z0-9_-]{16})\r\n/i.exec(expect417.text)?.[1]
  expect(expect417.text).toContain(`"requestId":"${id417}"`)

  const metrics = await fetch(`${server.url}/metrics`, {
    headers: { authorization: 'Bearer wrong' },
  })
  expect(metrics.status).toBe(401)
  await carriesId(metrics)
})
