import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { API_PREFIX } from '@latch/shared'
import { afterAll, expect, test } from 'vitest'
import { startServer } from './index.ts'

const dir = mkdtempSync(join(tmpdir(), 'latch-start-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('behavior: the PGlite data folder persists apps and keys across restarts and admits one process', async () => {
  const env = { LATCH_DATA_DIR: dir, DATABASE_URL: '', LATCH_SECRET: '', SMTP_URL: '' }
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
    const bad = await fetch(`${second.url}${API_PREFIX}/sessions`, {
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
