/**
 * @latch/node against a running Latch API on 127.0.0.1 (PGlite in memory, a real SMTP catcher
 * for the sign-in codes): token verification with its cached JWKS, requireUser() in a Hono app
 * and an Express app each on their own port, and every call of the admin client.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { createAppSecret, type RunningServer, startServer } from '@latch/server'
import { type SmtpCatcher, startSmtpCatcher } from '@latch/server/testing'
import {
  API_PREFIX,
  APP_ID_HEADER,
  type AuthResponse,
  CLIENT_HEADER,
  CLIENT_NAME,
} from '@latch/shared'
import express from 'express'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { migratedMemory } from '../../server/src/testing/global-setup.ts'
import { createLatchAdmin, LatchApiError } from './admin.ts'
import { type ExpressLikeRequest, requireUser as expressRequireUser } from './express.ts'
import { requireUser as honoRequireUser } from './hono.ts'
import { createTokenVerifier, LatchAuthError, verifyAccessToken } from './verify.ts'

const SECRET = 'node-sdk-test-secret-node-sdk-test-secret-0123'

let smtp: SmtpCatcher
let latch: RunningServer
let appId: string
let appSecret: string
/** Moves the API's clock (an access token signed an hour ago has expired). */
let offsetMs = 0
let n = 0
const email = () => `node.${++n}.${Date.now()}@example.com`

beforeAll(async () => {
  smtp = await startSmtpCatcher()
  latch = await startServer({
    port: 0,
    host: '127.0.0.1',
    env: {
      NODE_ENV: 'test',
      DATABASE_URL: 'memory://',
      LATCH_SECRET: SECRET,
      SMTP_URL: smtp.url,
      LATCH_MAIL_FROM: 'Latch test <no-reply@latch.test>',
      LATCH_PRICE_URL: '',
      LATCH_MODAL_ORIGIN: MODAL_ORIGIN,
    },
    log: () => {},
    // The run's migrated database (server/src/testing/pglite-setup.ts), not a new cluster.
    ...migratedMemory(),
    clock: { now: () => new Date(Date.now() + offsetMs) },
  })
  const app = await latch.admin.createApp({
    name: 'Node SDK',
    allowedOrigins: ['http://localhost:5173'],
  })
  appId = app.id
  appSecret = (await createAppSecret(latch.deps, appId)).secret
  // PGlite's start and the migrations take a few seconds on a busy machine.
}, 60_000)

afterAll(async () => {
  await latch?.close()
  await smtp?.close()
})

const MODAL_ORIGIN = 'http://127.0.0.1:5174'

/**
 * Signs in by e-mail code over HTTP, as the modal does; `refreshCookie` is the `Cookie` header
 * the browser would send back to the session routes (the refresh token is in no body).
 */
async function signIn(address = email()): Promise<AuthResponse & { refreshCookie: string }> {
  let refreshCookie = ''
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${latch.url}${API_PREFIX}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [APP_ID_HEADER]: appId,
        [CLIENT_HEADER]: CLIENT_NAME,
      },
      body: JSON.stringify(body),
    })
    if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`)
    for (const set of res.headers.getSetCookie()) {
      if (set.startsWith('__Secure-latch-rt-')) refreshCookie = set.split(';')[0] ?? ''
    }
    return res.json()
  }
  await post('/passwordless/init', { email: address })
  const code = await smtp.waitForCode(address, { timeoutMs: 10_000 })
  const auth = (await post('/passwordless/authenticate', { email: address, code })) as AuthResponse
  return { ...auth, refreshCookie }
}

/** Listens on a free port of 127.0.0.1; answers the base URL and how to stop. */
async function listening(
  start: (ready: () => void) => import('node:http').Server,
): Promise<{ url: string; close(): Promise<void> }> {
  let server: import('node:http').Server | undefined
  await new Promise<void>((resolve) => {
    server = start(resolve)
  })
  const s = server as import('node:http').Server
  const { port } = s.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        s.closeAllConnections()
        s.close(() => resolve())
      }),
  }
}

const refusal = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    return e
  }
  throw new Error('expected a refusal')
}

describe('verifyAccessToken', () => {
  test('behavior: answers the typed claims of a token of this app', async () => {
    const auth = await signIn()
    const claims = await verifyAccessToken(auth.token, { appId, apiUrl: latch.url })
    expect(claims).toMatchObject({ sub: auth.user.id, aud: appId, iss: 'latch' })
    expect(typeof claims.sid).toBe('string')
    expect(claims.exp - claims.iat).toBe(15 * 60)
  })

  test('behavior: the JWKS is fetched once and cached across tokens', async () => {
    let fetches = 0
    const verify = createTokenVerifier({
      appId,
      apiUrl: latch.url,
      fetch: (url, init) => {
        fetches++
        return fetch(url, init)
      },
    })
    for (let i = 0; i < 3; i++) await verify((await signIn()).token)
    expect(fetches).toBe(1)
  })

  test('security: another app’s token, a forged or altered one, an expired one, none, and the wrong issuer are refused', async () => {
    const auth = await signIn()
    const other = await latch.admin.createApp({
      name: 'Other',
      allowedOrigins: ['http://localhost:5173'],
    })
    const cases: [string, () => Promise<unknown>, string][] = [
      [
        'for another app',
        () => verifyAccessToken(auth.token, { appId: other.id, apiUrl: latch.url }),
        'invalid_token',
      ],
      [
        'altered payload',
        () =>
          verifyAccessToken(
            auth.token.replace(/\.([^.]+)\./, (_, p: string) => {
              const claims = JSON.parse(Buffer.from(p, 'base64url').toString())
              claims.sub = 'did:latch:someone-else'
              return `.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`
            }),
            { appId, apiUrl: latch.url },
          ),
        'invalid_token',
      ],
      [
        'alg none',
        () =>
          verifyAccessToken(
            `${Buffer.from('{"alg":"none"}').toString('base64url')}.${auth.token.split('.')[1]}.`,
            { appId, apiUrl: latch.url },
          ),
        'invalid_token',
      ],
      ['empty', () => verifyAccessToken('', { appId, apiUrl: latch.url }), 'missing_token'],
      [
        'wrong issuer expected',
        () => verifyAccessToken(auth.token, { appId, apiUrl: latch.url, issuer: 'elsewhere' }),
        'invalid_token',
      ],
    ]
    for (const [name, p, code] of cases) {
      const e = await refusal(p())
      expect([name, e instanceof LatchAuthError && e.code]).toEqual([name, code])
    }
    offsetMs = -60 * 60_000
    const old = await signIn().finally(() => {
      offsetMs = 0
    })
    const expired = await refusal(verifyAccessToken(old.token, { appId, apiUrl: latch.url }))
    expect((expired as LatchAuthError).code).toBe('token_expired')
    // No server there: 503-worthy, not a bad token.
    const down = await refusal(
      verifyAccessToken(auth.token, { appId, apiUrl: 'http://127.0.0.1:9', jwksTimeoutMs: 2000 }),
    )
    expect([(down as LatchAuthError).code, (down as LatchAuthError).status]).toEqual([
      'jwks_unavailable',
      503,
    ])
    // A proxy in front of a stopped API answers 502: no keys either.
    const proxy = await listening((ready) =>
      createServer((_req, res) => {
        res.writeHead(502).end('Bad Gateway')
      }).listen(0, '127.0.0.1', ready),
    )
    try {
      const bad = await refusal(verifyAccessToken(auth.token, { appId, apiUrl: proxy.url }))
      expect((bad as LatchAuthError).code).toBe('jwks_unavailable')
    } finally {
      await proxy.close()
    }
    // apiUrl pointed at a server that is not the API (the modal origin answers 404 there): the
    // keys cannot be read, which says nothing of the token.
    const elsewhere = await listening((ready) =>
      createServer((_req, res) => {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found')
      }).listen(0, '127.0.0.1', ready),
    )
    try {
      const missing = await refusal(verifyAccessToken(auth.token, { appId, apiUrl: elsewhere.url }))
      expect([(missing as LatchAuthError).code, (missing as LatchAuthError).status]).toEqual([
        'jwks_unavailable',
        503,
      ])
      expect(String((missing as LatchAuthError).cause)).toContain('answered 404')
    } finally {
      await elsewhere.close()
    }
  })
})

describe('requireUser()', () => {
  test('behavior: Hono — 401 in the API’s error shape without a valid token, the claims with one', async () => {
    const app = new Hono()
    app.get('/me', honoRequireUser({ appId, apiUrl: latch.url }), (c) =>
      c.json({ id: c.get('latchUser').sub }),
    )
    const server = await listening(
      (ready) =>
        serve(
          { fetch: app.fetch, port: 0, hostname: '127.0.0.1' },
          ready,
        ) as import('node:http').Server,
    )
    try {
      const auth = await signIn()
      const ok = await fetch(`${server.url}/me`, {
        headers: { authorization: `Bearer ${auth.token}` },
      })
      expect([ok.status, await ok.json()]).toEqual([200, { id: auth.user.id }])
      for (const authorization of [undefined, 'Bearer nope', `Basic ${auth.token}`]) {
        const r = await fetch(`${server.url}/me`, {
          headers: authorization ? { authorization } : {},
        })
        expect(r.status).toBe(401)
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe(
          'not_authenticated',
        )
      }
    } finally {
      await server.close()
    }
  })

  test('behavior: Express — 401 without a valid token, req.latchUser with one', async () => {
    const app = express()
    app.get(
      '/me',
      expressRequireUser({ appId, apiUrl: latch.url }),
      (req: ExpressLikeRequest, res: { json(body: unknown): void }) => {
        res.json({ id: req.latchUser?.sub })
      },
    )
    const server = await listening((ready) => app.listen(0, '127.0.0.1', ready))
    try {
      const auth = await signIn()
      const ok = await fetch(`${server.url}/me`, {
        headers: { authorization: `Bearer ${auth.token}` },
      })
      expect([ok.status, await ok.json()]).toEqual([200, { id: auth.user.id }])
      const none = await fetch(`${server.url}/me`)
      expect(none.status).toBe(401)
      const bad = await fetch(`${server.url}/me`, { headers: { authorization: 'Bearer x.y.z' } })
      expect(bad.status).toBe(401)
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe(
        'not_authenticated',
      )
    } finally {
      await server.close()
    }
  })
})

describe('createLatchAdmin', () => {
  test('behavior: look-ups, list, import, export and a complete deletion', async () => {
    const admin = createLatchAdmin({ appId, secret: appSecret, apiUrl: latch.url })
    const address = email()
    const auth = await signIn(address)
    const id = auth.user.id
    expect((await admin.getUser(id))?.id).toBe(id)
    expect((await admin.getUserByEmail(address.toUpperCase()))?.id).toBe(id)
    expect(await admin.getUserByEmail('nobody@example.com')).toBeNull()
    expect(await admin.getUserByPhone('+14155550100')).toBeNull()
    expect(await admin.getUserByWallet(`0x${'1'.repeat(40)}`)).toBeNull()
    expect(await admin.getUserBySocial('github', '42')).toBeNull()

    const imported = await admin.importUsers([{ email: email() }, { phone: '+14155550111' }])
    expect(imported.map((r) => r.status)).toEqual(['created', 'created'])
    expect((await admin.importUsers([{ phone: '+14155550111' }]))[0]?.status).toBe('existing')
    expect((await admin.getUserByPhone('+1 (415) 555-0111'))?.id).toBe(imported[1]?.id)

    const page = await admin.listUsers({ limit: 1 })
    expect(page.users).toHaveLength(1)
    expect(page.nextCursor).not.toBeNull()
    const all: string[] = []
    for await (const user of admin.iterateUsers({ loginMethod: 'email' })) all.push(user.id)
    expect(all).toContain(id)
    const exported: string[] = []
    for await (const user of admin.exportUsers()) exported.push(user.id)
    expect(exported).toEqual(expect.arrayContaining([id, ...imported.map((r) => r.id)]))

    const deleted = await admin.deleteUser(id)
    expect(deleted).toMatchObject({ users: 1, linked_accounts: 1, sessions: 1 })
    expect(await admin.getUser(id)).toBeNull()
    // The session ended with the user: the refresh token is refused.
    const refresh = await fetch(`${latch.url}${API_PREFIX}/sessions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [APP_ID_HEADER]: appId,
        [CLIENT_HEADER]: CLIENT_NAME,
        origin: MODAL_ORIGIN,
        cookie: auth.refreshCookie,
      },
      body: '{}',
    })
    expect(auth.refreshCookie).not.toBe('')
    expect(refresh.status).toBe(401)
    expect(await refresh.json()).toMatchObject({ error: { code: 'invalid_refresh_token' } })
    const again = await refusal(admin.deleteUser(id))
    expect([(again as LatchApiError).status, (again as LatchApiError).code]).toEqual([
      404,
      'not_found',
    ])
  })

  test('security: a wrong secret and a bad request answer LatchApiError with the catalogued code', async () => {
    const wrong = createLatchAdmin({
      appId,
      secret: `lsk_${'a'.repeat(16)}_${'A'.repeat(43)}`,
      apiUrl: latch.url,
    })
    const e = await refusal(wrong.getUser('did:latch:x'))
    expect(e).toBeInstanceOf(LatchApiError)
    expect([(e as LatchApiError).status, (e as LatchApiError).code]).toEqual([
      401,
      'invalid_app_secret',
    ])
    const admin = createLatchAdmin({ appId, secret: appSecret, apiUrl: latch.url })
    const tooMany = await refusal(
      admin.importUsers(Array.from({ length: 101 }, (_, i) => ({ email: `b${i}@example.com` }))),
    )
    expect((tooMany as LatchApiError).code).toBe('invalid_data')
    expect(() => createLatchAdmin({ appId, secret: '', apiUrl: latch.url })).toThrow(TypeError)
  })
})
