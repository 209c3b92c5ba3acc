/**
 * What NODE_ENV=production refuses that development allows: a redirect URI taken from the Host
 * header, plain-http origins, and a secret file beside the database.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { API_PREFIX, APP_ID_HEADER, CLIENT_HEADER, CLIENT_NAME } from '@latch/shared'
import { afterEach, expect, test } from 'vitest'
import { runCli } from './cli.ts'
import { ConfigError, isSecureOrigin, loadConfig } from './config.ts'
import { openServices, type RunningServer, startServer } from './index.ts'
import { migratedFolder, migratedMemory } from './testing/global-setup.ts'
import { TEST_SECRET } from './testing/test-server.ts'

const PROD = {
  NODE_ENV: 'production',
  DATABASE_URL: 'memory://',
  LATCH_SECRET: TEST_SECRET,
  SMTP_URL: 'smtp://127.0.0.1:1',
  LATCH_PUBLIC_URL: 'https://auth.example.com',
}

const dirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'latch-production-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** POST /oauth/init with a Host header of the caller's choosing; answers the redirect_uri sent. */
function initWithHost(api: RunningServer, appId: string, host: string): Promise<string> {
  const url = new URL(api.url)
  const body = JSON.stringify({
    provider: 'google',
    redirect_to: 'https://shop.example.com/app',
    // Any browser binding will do: the flow is never finished.
    browser_hash: 'h'.repeat(43),
  })
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: `${API_PREFIX}/oauth/init`,
        timeout: 10_000,
        headers: {
          host,
          'content-type': 'application/json',
          [APP_ID_HEADER]: appId,
          [CLIENT_HEADER]: CLIENT_NAME,
        },
      },
      (res) => {
        let text = ''
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString()
        })
        res.on('end', () => {
          if (res.statusCode !== 200) {
            reject(new Error(`init answered ${res.statusCode}: ${text}`))
            return
          }
          const authorize = new URL((JSON.parse(text) as { url: string }).url)
          resolve(authorize.searchParams.get('redirect_uri') ?? '')
        })
      },
    )
    req.on('timeout', () => req.destroy(new Error('init timed out')))
    req.on('error', reject)
    req.end(body)
  })
}

async function withOAuthApp(
  env: Record<string, string>,
  fn: (api: RunningServer, appId: string) => Promise<void>,
): Promise<void> {
  // Every env here is in memory: the run's migrated database, not a cluster made per start.
  const api = await startServer({
    port: 0,
    host: '127.0.0.1',
    env,
    log: () => {},
    ...migratedMemory(),
  })
  try {
    const app = await api.admin.createApp({
      name: 'Redirects',
      allowedOrigins: ['https://shop.example.com'],
      loginMethods: ['email', 'google'],
      oauth: { google: { clientId: 'gid', clientSecret: 'gsecret' } },
    })
    await fn(api, app.id)
  } finally {
    await api.close()
  }
}

test('error: production refuses to start without LATCH_PUBLIC_URL, or with one that is not an https origin', () => {
  const { LATCH_PUBLIC_URL: _, ...noPublic } = PROD
  expect(() => loadConfig(noPublic)).toThrow(
    "NODE_ENV=production needs LATCH_PUBLIC_URL, the API's public origin",
  )
  expect(() => loadConfig({ ...PROD, LATCH_PUBLIC_URL: 'http://auth.example.com' })).toThrow(
    "NODE_ENV=production refuses LATCH_PUBLIC_URL 'http://auth.example.com': use https:",
  )
  // A path would name redirect URIs the API never serves.
  expect(() => loadConfig({ ...PROD, LATCH_PUBLIC_URL: 'https://a.example/latch' })).toThrow(
    'LATCH_PUBLIC_URL must be an origin',
  )
  expect(() => loadConfig({ ...PROD, LATCH_PUBLIC_URL: 'ftp://a.example' })).toThrow(ConfigError)
  expect(loadConfig({ ...PROD, LATCH_PUBLIC_URL: 'https://auth.example.com/' }).publicUrl).toBe(
    'https://auth.example.com',
  )
  // Outside production it stays optional.
  expect(loadConfig({ DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET }).publicUrl).toBeNull()
})

test('behavior: the OAuth redirect_uri comes from LATCH_PUBLIC_URL, never from the Host header', async () => {
  await withOAuthApp(PROD, async (api, appId) => {
    expect(await initWithHost(api, appId, 'evil.example')).toBe(
      'https://auth.example.com/api/v1/oauth/callback/google',
    )
  })
  // Outside production without a public URL, the request's own origin (a developer's machine).
  const dev = { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET }
  await withOAuthApp(dev, async (api, appId) => {
    const own = new URL(api.url).host
    expect(await initWithHost(api, appId, own)).toBe(
      `http://${own}${API_PREFIX}/oauth/callback/google`,
    )
  })
  await withOAuthApp({ ...dev, LATCH_PUBLIC_URL: 'http://localhost:8787' }, async (api, appId) => {
    expect(await initWithHost(api, appId, 'evil.example')).toBe(
      `http://localhost:8787${API_PREFIX}/oauth/callback/google`,
    )
  })
})

test('error: production refuses an http: modal origin other than loopback', () => {
  expect(() => loadConfig({ ...PROD, LATCH_MODAL_ORIGIN: 'http://modal.example.com' })).toThrow(
    "NODE_ENV=production refuses LATCH_MODAL_ORIGIN 'http://modal.example.com': use https: (plain http: only on localhost, 127.0.0.1 or [::1])",
  )
  for (const ok of ['https://modal.example.com', 'http://localhost:5174', 'http://127.0.0.1:9']) {
    expect(loadConfig({ ...PROD, LATCH_MODAL_ORIGIN: ok }).modalOrigin).toBe(new URL(ok).origin)
  }
  // Development keeps plain http anywhere.
  const dev = { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET }
  expect(loadConfig({ ...dev, LATCH_MODAL_ORIGIN: 'http://modal.lan' }).modalOrigin).toBe(
    'http://modal.lan',
  )
})

test('behavior: secure origins are https: and loopback http: only', () => {
  for (const o of ['https://a.example', 'http://localhost', 'http://app.localhost:3000']) {
    expect(isSecureOrigin(o)).toBe(true)
  }
  for (const o of ['http://127.0.0.1:8080', 'http://127.9.9.9', 'http://[::1]:5173']) {
    expect(isSecureOrigin(o)).toBe(true)
  }
  for (const o of [
    'http://a.example',
    'http://localhost.evil.example',
    'http://127.0.0.1.evil.example',
    'http://10.0.0.1',
    'http://[::2]',
    'ftp://localhost',
    'not a url',
  ]) {
    expect(isSecureOrigin(o)).toBe(false)
  }
})

test('error: production refuses http: allowed origins in apps create and update, and refuses to start while an app lists one', async () => {
  // A folder (the app must outlive the development server) holding the run's migrated database.
  const dir = await migratedFolder(tempDir())
  const devEnv = { LATCH_DATA_DIR: dir, DATABASE_URL: '', LATCH_SECRET: TEST_SECRET }
  const prodEnv = { ...PROD, ...devEnv, NODE_ENV: 'production' }
  // An app made in development with a plain-http page.
  const dev = await openServices({ env: devEnv, log: () => {} })
  let appId = ''
  try {
    appId = (
      await dev.admin.createApp({
        name: 'Legacy',
        allowedOrigins: ['http://shop.example.com', 'https://shop.example.com'],
      })
    ).id
  } finally {
    await dev.close()
  }
  await expect(startServer({ port: 0, env: prodEnv, log: () => {} })).rejects.toThrow(
    `NODE_ENV=production refuses app ${appId}'s allowed origin 'http://shop.example.com': use https: (plain http: only on localhost, 127.0.0.1 or [::1]); change it with: npm run latch -- apps update ${appId} --remove-origin http://shop.example.com`,
  )

  const out: string[] = []
  const err: string[] = []
  const cli = (...argv: string[]) =>
    runCli(argv, { out: (t) => out.push(t), err: (t) => err.push(t), env: prodEnv })
  expect(await cli('apps', 'create', '--name', 'X', '--origin', 'http://x.example.com')).toBe(1)
  expect(err.join('\n')).toContain(
    "Error: NODE_ENV=production refuses the allowed origin 'http://x.example.com': use https:",
  )
  expect(await cli('apps', 'update', appId, '--add-origin', 'http://y.example.com')).toBe(1)
  expect(err.join('\n')).toContain("refuses the allowed origin 'http://shop.example.com'")
  // The CLI still opens in production so the operator can fix the app.
  expect(await cli('apps', 'update', appId, '--remove-origin', 'http://shop.example.com')).toBe(0)
  expect(await cli('apps', 'update', appId, '--add-origin', 'http://localhost:5173')).toBe(0)

  const api = await startServer({ port: 0, env: prodEnv, log: () => {} })
  try {
    const res = await fetch(`${api.url}${API_PREFIX}/apps/${appId}`)
    expect(((await res.json()) as { allowedOrigins: string[] }).allowedOrigins.sort()).toEqual([
      'http://localhost:5173',
      'https://shop.example.com',
    ])
  } finally {
    await api.close()
  }
  // A bound, not a speed goal: the data folder's database is opened about seven times (the
  // services, two servers, four CLI runs), which beside a busy core can take longer than the
  // project's usual bound.
}, 60_000)

test('error: production refuses a secret file inside the data folder', () => {
  const dir = tempDir()
  const env = { ...PROD, LATCH_DATA_DIR: dir, DATABASE_URL: '' }
  // A data folder first used in development, where the secret was generated into it.
  const generated = loadConfig({ LATCH_DATA_DIR: dir })
  expect(generated.secretGenerated).toBe(true)
  expect(() => loadConfig({ ...env, LATCH_SECRET: generated.secret })).toThrow(
    `NODE_ENV=production refuses the secret file ${join(dir, 'secret')} inside the data folder: keep the secret only in LATCH_SECRET and delete the file`,
  )
  rmSync(join(dir, 'secret'))
  expect(loadConfig({ ...env, LATCH_SECRET: generated.secret }).dataDir).toBe(dir)
  // Any file of that name, whatever it holds.
  writeFileSync(join(dir, 'secret'), 'x')
  expect(() => loadConfig(env)).toThrow(/refuses the secret file/)
})
