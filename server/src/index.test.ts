import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { API_PREFIX } from '@latch/shared'
import { afterAll, expect, test } from 'vitest'
import { startServer } from './index.ts'
import { migratedFolder, migratedMemory } from './testing/global-setup.ts'
import { postgresAvailable, runPostgres } from './testing/index.ts'
import { TEST_SECRET } from './testing/test-server.ts'

const dir = mkdtempSync(join(tmpdir(), 'latch-start-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('behavior: the PGlite data folder persists apps and keys across restarts and admits one process', async () => {
  // The run's migrated database in the folder: what persists across restarts is tested here,
  // not the folder's creation.
  const env = {
    LATCH_DATA_DIR: await migratedFolder(dir),
    DATABASE_URL: '',
    LATCH_SECRET: '',
    SMTP_URL: '',
  }
  const first = await startServer({ port: 0, env, log: () => {} })
  let appId = ''
  let jwks = ''
  try {
    const app = await first.admin.createApp({
      name: 'Persisted',
      allowedOrigins: ['http://localhost:5173'],
    })
    appId = app.id
    jwks = await (await fetch(`${first.url}${API_PREFIX}/apps/${appId}/jwks.json`)).text()
    expect(existsSync(join(dir, 'pglite.lock'))).toBe(true)
    await expect(startServer({ port: 0, env, log: () => {} })).rejects.toThrow(
      /in use by process \d+/,
    )
  } finally {
    await first.close()
  }
  expect(existsSync(join(dir, 'pglite.lock'))).toBe(false)
  const second = await startServer({ port: 0, env, log: () => {} })
  try {
    const res = await fetch(`${second.url}${API_PREFIX}/apps/${appId}`)
    expect(res.status).toBe(200)
    expect(((await res.json()) as { name: string }).name).toBe('Persisted')
    // The same generated secret opens the same sealed keys.
    expect(await (await fetch(`${second.url}${API_PREFIX}/apps/${appId}/jwks.json`)).text()).toBe(
      jwks,
    )
    // A raw, broken request never takes the server down.
    // (fork/recover reads its body from anyone; refresh refuses a request without the modal's
    // Origin before reading one.)
    const bad = await fetch(`${second.url}${API_PREFIX}/sessions/fork/recover`, {
      method: 'POST',
      headers: { 'latch-app-id': appId, 'latch-client': 't', 'content-type': 'application/json' },
      body: '\u0000{{{',
    })
    expect(bad.status).toBe(400)
    expect((await fetch(`${second.url}${API_PREFIX}/apps/${appId}`)).status).toBe(200)
  } finally {
    await second.close()
  }
})

test('error: NODE_ENV=production without an explicit secret does not start', async () => {
  await expect(
    startServer({
      port: 0,
      env: {
        NODE_ENV: 'production',
        DATABASE_URL: 'memory://',
        LATCH_SECRET: '',
        SMTP_URL: 'smtp://127.0.0.1:1',
      },
    }),
  ).rejects.toThrow('NODE_ENV=production needs an explicit LATCH_SECRET')
})

test('error: an unreachable PostgreSQL fails the start with its address', async () => {
  const { createServer } = await import('node:net')
  // A port that was free a moment ago: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
  await expect(
    startServer({
      port: 0,
      env: {
        DATABASE_URL: `postgres://latch@127.0.0.1:${port}/latch`,
        LATCH_SECRET: 's'.repeat(32),
      },
      log: () => {},
    }),
  ).rejects.toThrow(`Cannot open the PostgreSQL database at 127.0.0.1:${port}`)
})

test.skipIf(!postgresAvailable())(
  'behavior: two server processes on one PostgreSQL share rate limits, codes and sessions',
  async () => {
    const pg = await runPostgres()
    if (!pg) throw new Error('PostgreSQL did not start')
    const logs: string[] = []
    const env = {
      DATABASE_URL: await pg.createDatabase(),
      LATCH_SECRET: TEST_SECRET,
      LATCH_TRUST_PROXY: '1',
      SMTP_URL: '',
      LATCH_MODAL_ORIGIN: 'http://127.0.0.1:5174',
    }
    const a = await startServer({ port: 0, env, log: (l) => logs.push(l) })
    const b = await startServer({ port: 0, env, log: (l) => logs.push(l) })
    try {
      const app = await a.admin.createApp({
        name: 'Two',
        allowedOrigins: ['http://localhost:5173'],
      })
      const post = (base: string, path: string, body: unknown, cookie = '') =>
        fetch(`${base}${API_PREFIX}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'latch-app-id': app.id,
            'latch-client': 'test',
            'x-forwarded-for': '192.0.2.7',
            // As the modal's credentialed fetch: its origin, the refresh cookie when one is held.
            origin: env.LATCH_MODAL_ORIGIN,
            ...(cookie ? { cookie } : {}),
          },
          body: JSON.stringify(body),
        })
      // A code sent through one process is redeemed through the other.
      expect((await post(a.url, '/passwordless/init', { email: 'two@example.com' })).status).toBe(
        200,
      )
      const code = logs
        .find((l) => l.startsWith('[latch] e-mail code for two@example.com'))
        ?.slice(-6)
      const auth = await post(b.url, '/passwordless/authenticate', {
        email: 'two@example.com',
        code,
      })
      expect(auth.status).toBe(200)
      // The session started through one process refreshes through the other.
      const cookie = auth.headers.getSetCookie().find((c) => c.startsWith('__Secure-latch-rt-'))
      expect(cookie).toBeDefined()
      expect((await post(a.url, '/sessions', {}, cookie?.split(';')[0])).status).toBe(200)
      // The per-IP budget (30 per 5 minutes, 2 spent above) is one budget across both.
      const statuses: number[] = []
      for (let i = 0; i < 29; i++) {
        const base = i % 2 === 0 ? a.url : b.url
        statuses.push(
          (await post(base, '/passwordless/init', { email: `two${i}@example.com` })).status,
        )
      }
      expect(statuses.slice(0, 28).every((s) => s === 200)).toBe(true)
      expect(statuses[28]).toBe(429)
    } finally {
      await a.close()
      await b.close()
      await pg.close()
    }
  },
)

test("behavior: a started server keys per-address budgets by the connection's address, never by a forwarded one it does not trust", async () => {
  const server = await startServer({
    ...migratedMemory(),
    port: 0,
    host: '127.0.0.1',
    env: { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET, SMTP_URL: '' },
    log: () => {},
  })
  try {
    const app = await server.admin.createApp({
      name: 'Addresses',
      allowedOrigins: ['http://localhost:5173'],
    })
    const res = await fetch(`${server.url}${API_PREFIX}/passwordless/init`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'latch-app-id': app.id,
        'latch-client': 'test',
        'x-forwarded-for': '192.0.2.7',
      },
      body: JSON.stringify({ email: 'addresses@example.com' }),
    })
    expect(res.status).toBe(200)
    const keys = (await server.deps.db.selectFrom('rate_limits').select('key').execute()).map(
      (r) => r.key,
    )
    expect(keys.some((k) => k.endsWith('ip:127.0.0.1'))).toBe(true)
    expect(keys.filter((k) => k.includes('192.0.2.7') || k.includes('unknown'))).toEqual([])
  } finally {
    await server.close()
  }
})
