/**
 * The operator API for app settings over real HTTP, and `latch apps … --server` against it: the
 * refusals (off without a key, no key, a wrong key, a browser's request, the rate limit), the
 * audit lines, the secrets it never answers, and a change reaching a second server on the same
 * PostgreSQL within the app cache's 2 s.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { API_PREFIX, type ServerAppConfig } from '@latch/shared'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type RunningServer, startServer } from '../index.ts'
import { serveLatch } from '../ops/serve.ts'
import { latchCli } from '../testing/cli.ts'
import { migratedMemory } from '../testing/global-setup.ts'
import { postgresAvailable, type RunningPostgres, runPostgres } from '../testing/postgres.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { OPERATOR_FAILURE_LIMIT, REFUSAL_AUDIT_IP_LIMIT } from './operator.ts'
import { APP_CACHE_MS, findApp } from './service.ts'

const KEY = randomBytes(24).toString('hex')
const MODAL = 'http://127.0.0.1:5174'
const baseEnv = {
  NODE_ENV: 'test',
  LATCH_SECRET: TEST_SECRET,
  LATCH_TRUST_PROXY: '1',
  LATCH_MODAL_ORIGIN: MODAL,
}

let ipCount = 0
/** A client address of its own (the server trusts one proxy hop), so budgets do not mix. */
const freshIp = () => `10.77.0.${++ipCount}`

function operator(server: RunningServer, path: string, init: RequestInit & { ip?: string } = {}) {
  const headers = new Headers(init.headers)
  headers.set('x-forwarded-for', init.ip ?? freshIp())
  if (init.body !== undefined) headers.set('content-type', 'application/json')
  return fetch(`${server.url}${API_PREFIX}/operator${path}`, {
    ...init,
    headers,
    signal: AbortSignal.timeout(10_000),
  })
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

describe('operator API [pglite]', () => {
  let server: RunningServer
  let off: RunningServer
  const logs: string[] = []
  const dir = mkdtempSync(join(tmpdir(), 'latch-operator-'))

  beforeAll(async () => {
    server = await startServer({
      ...migratedMemory(),
      port: 0,
      log: (line) => logs.push(line),
      env: { ...baseEnv, DATABASE_URL: 'memory://', LATCH_ADMIN_KEY: KEY },
    })
    off = await startServer({
      ...migratedMemory(),
      port: 0,
      log: () => {},
      env: { ...baseEnv, DATABASE_URL: 'memory://' },
    })
  })
  afterAll(async () => {
    await server?.close()
    await off?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('refusal: off without LATCH_ADMIN_KEY (404); no key, a wrong key (401); a browser’s request, even with the key (403)', async () => {
    const notOn = await operator(off, '/apps', { headers: bearer(KEY) })
    expect(notOn.status).toBe(404)
    expect(((await notOn.json()) as { error: { code: string } }).error.code).toBe('not_found')

    for (const [headers, status, code] of [
      [{}, 401, 'invalid_admin_key'],
      // The key with its last character changed (always to another one).
      [bearer(`${KEY.slice(0, -1)}${KEY.endsWith('0') ? '1' : '0'}`), 401, 'invalid_admin_key'],
      [bearer(KEY.slice(0, 10)), 401, 'invalid_admin_key'],
      [{ authorization: KEY }, 401, 'invalid_admin_key'],
      // The modal's origin (a page of it calling with credentials) and the API origin's own
      // pages (the wallet frame) are browsers too: the key is not for them.
      [{ ...bearer(KEY), origin: MODAL }, 403, 'admin_key_from_browser'],
      [{ ...bearer(KEY), 'sec-fetch-site': 'same-origin' }, 403, 'admin_key_from_browser'],
      [{ ...bearer(KEY), referer: `${MODAL}/` }, 403, 'admin_key_from_browser'],
      // Refused before the key is read: a page learns nothing about a key it tries.
      [{ ...bearer('wrong-key'), origin: MODAL }, 403, 'admin_key_from_browser'],
    ] as const) {
      const res = await operator(server, '/apps', { headers })
      expect(res.status, JSON.stringify(headers)).toBe(status)
      const body = (await res.json()) as { error: { code: string } }
      expect(body.error.code).toBe(code)
    }
  })

  test('security: refused calls are in the audit log with their reason, a browser’s included, and at most 20 an address per window', async () => {
    const ip = freshIp()
    const appId = 'a'.repeat(25)
    const refusals: [HeadersInit, string][] = [
      [{ ...bearer(KEY), origin: MODAL }, 'admin_key_from_browser'],
      [{}, 'invalid_admin_key'],
      [bearer('wrong-key'), 'invalid_admin_key'],
    ]
    for (const [headers] of refusals) {
      await operator(server, `/apps/${appId}`, { ip, headers })
    }
    const lines = () => logs.filter((l) => l.includes(` from ${ip}: `))
    expect(lines()).toEqual(
      refusals.map(
        ([, reason]) =>
          `[latch] operator GET /apps/:id app ${appId} from ${ip}: ${reason === 'admin_key_from_browser' ? 403 : 401} refused (${reason})`,
      ),
    )
    expect(logs.join('\n')).not.toContain('wrong-key')
    // A flood of a page's requests: answered every time, logged up to the address's budget.
    for (let i = 0; i < REFUSAL_AUDIT_IP_LIMIT.max + 5; i++) {
      const res = await operator(server, '/apps', { ip, headers: { origin: MODAL } })
      expect(res.status).toBe(403)
    }
    expect(lines()).toHaveLength(REFUSAL_AUDIT_IP_LIMIT.max)
    expect(lines().at(-1)).toBe(
      `[latch] operator GET /apps from ${ip}: 403 refused (admin_key_from_browser)`,
    )
  })

  test('refusal: refused keys are limited per address; past the limit even the right key waits (429, Retry-After)', async () => {
    const ip = freshIp()
    for (let i = 0; i < OPERATOR_FAILURE_LIMIT.max; i++) {
      expect((await operator(server, '/apps', { ip, headers: bearer('wrong-key') })).status).toBe(
        401,
      )
    }
    const limited = await operator(server, '/apps', { ip, headers: bearer(KEY) })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another address is not held up; and right keys do not use up the budget.
    const other = freshIp()
    for (let i = 0; i < OPERATOR_FAILURE_LIMIT.max + 2; i++) {
      expect((await operator(server, '/apps', { ip: other, headers: bearer(KEY) })).status).toBe(
        200,
      )
    }
  })

  test('behavior: create, show, list and update answer the settings without secrets; each call is audited without the key', async () => {
    const ip = freshIp()
    const created = await operator(server, '/apps', {
      ip,
      method: 'POST',
      headers: bearer(KEY),
      body: JSON.stringify({
        name: 'Shop',
        allowedOrigins: ['https://shop.example'],
        loginMethods: ['email', 'github'],
        oauth: { github: { clientId: 'gh-id', clientSecret: 'gh-secret-never-answered' } },
        rpcUrls: { '1': 'https://node.example/secret-key-never-answered' },
      }),
    })
    expect(created.status).toBe(201)
    const text = await created.text()
    expect(text).not.toContain('gh-secret-never-answered')
    expect(text).not.toContain('secret-key-never-answered')
    const app = JSON.parse(text) as {
      id: string
      oauth: Record<string, unknown>
      rpcUrlChains: number[]
    }
    expect(app.oauth.github).toEqual({
      clientId: 'gh-id',
      clientSecretSet: true,
      applePrivateKeySet: false,
    })
    expect(app.rpcUrlChains).toEqual([1])

    // An update of the client id alone keeps the stored secret.
    const updated = await operator(server, `/apps/${app.id}`, {
      ip,
      method: 'POST',
      headers: bearer(KEY),
      body: JSON.stringify({ name: 'Shop 2', oauth: { github: { clientId: 'gh-id-2' } } }),
    })
    expect(updated.status).toBe(200)
    const stored = await findApp(server.deps, app.id)
    expect(stored?.name).toBe('Shop 2')
    expect(stored?.oauth.github).toEqual({
      clientId: 'gh-id-2',
      clientSecret: 'gh-secret-never-answered',
    })

    const bad = await operator(server, `/apps/${app.id}`, {
      ip,
      method: 'POST',
      headers: bearer(KEY),
      body: JSON.stringify({ loginMethods: ['carrier-pigeon'] }),
    })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_data')
    expect((await operator(server, '/apps/nosuchapp', { ip, headers: bearer(KEY) })).status).toBe(
      404,
    )

    const list = (await (await operator(server, '/apps', { ip, headers: bearer(KEY) })).json()) as {
      apps: { id: string }[]
    }
    expect(list.apps.map((a) => a.id)).toContain(app.id)

    const audit = logs.filter((l) => l.startsWith('[latch] operator '))
    expect(audit).toContain(`[latch] operator POST /apps from ${ip}: 201`)
    expect(audit).toContain(`[latch] operator POST /apps/:id app ${app.id} from ${ip}: 200`)
    expect(audit).toContain(`[latch] operator POST /apps/:id app ${app.id} from ${ip}: 400`)
    expect(audit.some((l) => l.includes(': 401'))).toBe(true)
    for (const line of logs) {
      expect(line).not.toContain(KEY)
      expect(line).not.toContain('[redacted]')
      expect(line).not.toContain('gh-secret-never-answered')
    }
  })

  /** `latch <argv…> --server <the test server>` with `env`. */
  const op = (env: Record<string, string>, ...argv: string[]) =>
    latchCli(env, ...argv, '--server', server.url)
  const withKey = { LATCH_ADMIN_KEY: KEY }

  test('behavior: latch apps … --server works through the API, with the key from the environment or its file; a wrong key exits 1', async () => {
    const keyFile = join(dir, 'admin-key')
    writeFileSync(keyFile, `${KEY}\n`)
    const viaFile = { LATCH_ADMIN_KEY_FILE: keyFile }

    const create = await op(
      withKey,
      ...['apps', 'create', '--name', 'CLI shop', '--origin', 'https://cli.example', '--json'],
    )
    expect(create.code).toBe(0)
    const created = JSON.parse(create.out) as ServerAppConfig
    expect(created.name).toBe('CLI shop')

    expect(
      await op(
        viaFile,
        ...['apps', 'update', created.id, '--add-origin', 'https://cli2.example'],
        ...['--github-client-id', 'cli-gh', '--github-client-secret', 'cli-gh-secret'],
      ),
    ).toMatchObject({ code: 0, out: expect.stringContaining(`Updated app ${created.id}`) })
    // A second update of the id alone keeps the secret the first one set.
    expect(
      await op(viaFile, 'apps', 'update', created.id, '--github-client-id', 'cli-gh-2'),
    ).toMatchObject({ code: 0 })
    const stored = await findApp(server.deps, created.id)
    expect(stored?.allowedOrigins).toEqual(['https://cli.example', 'https://cli2.example'])
    expect(stored?.oauth.github).toEqual({ clientId: 'cli-gh-2', clientSecret: 'cli-gh-secret' })

    expect(await op(withKey, 'apps', 'show', created.id)).toMatchObject({
      code: 0,
      out: expect.stringContaining('https://cli2.example'),
    })
    expect(await op(withKey, 'apps', 'list')).toMatchObject({
      code: 0,
      out: expect.stringContaining(created.id),
    })

    expect(await op({ LATCH_ADMIN_KEY: 'x'.repeat(40) }, 'apps', 'list')).toMatchObject({
      code: 1,
      err: expect.stringMatching(/answered 401: Invalid operator key \(request [\w-]+\)/),
    })
    expect(await op({}, 'apps', 'list')).toMatchObject({
      code: 1,
      err: expect.stringMatching(/LATCH_ADMIN_KEY/),
    })
    expect(await latchCli(withKey, 'apps', 'list', '--server', 'ftp://x')).toMatchObject({
      code: 1,
    })
  })

  test('behavior: apps rotate-keys and apps secret create|list|revoke --server work through the API; the secret opens the user API until revoked', async () => {
    const app = await server.admin.createApp({
      name: 'Keys',
      allowedOrigins: ['https://keys.example'],
    })
    const kid = async () => (await server.deps.keys.jwks(app.id)).keys[0]?.kid
    const before = await kid()
    const rotate = await op(withKey, 'apps', 'rotate-keys', app.id, '--json')
    expect(rotate.code).toBe(0)
    const rotated = JSON.parse(rotate.out) as { signingKey: string; previousKey: string }
    expect(rotated.previousKey).toBe(before)
    expect(rotated.signingKey).not.toBe(before)
    expect(await kid()).toBe(rotated.signingKey)

    const users = (secret: string) =>
      fetch(`${server.url}${API_PREFIX}/admin/apps/${app.id}/users`, {
        headers: { authorization: `Bearer ${secret}`, 'x-forwarded-for': freshIp() },
        signal: AbortSignal.timeout(10_000),
      })
    const create = await op(withKey, 'apps', 'secret', 'create', app.id, '--json')
    expect(create.code).toBe(0)
    const created = JSON.parse(create.out) as { id: string; secret: string }
    expect(created.secret).toMatch(/^lsk_/)
    expect((await users(created.secret)).status).toBe(200)
    const list = await op(withKey, 'apps', 'secret', 'list', app.id, '--json')
    expect(list.code).toBe(0)
    expect(JSON.stringify(JSON.parse(list.out))).toContain(created.id)
    expect(list.out).not.toContain(created.secret)
    expect(await op(withKey, 'apps', 'secret', 'revoke', app.id, created.id)).toMatchObject({
      code: 0,
    })
    expect((await users(created.secret)).status).toBe(401)
    expect(await op(withKey, 'apps', 'secret', 'revoke', app.id, 'nosuchsecret')).toMatchObject({
      code: 1,
      // The CLI's own line: the server's 404 read as 'not there', not relayed as a failure.
      err: `App ${app.id} has no secret 'nosuchsecret'\n`,
    })
    expect(await op(withKey, 'apps', 'secret', 'list', 'x'.repeat(25))).toMatchObject({
      code: 1,
      err: `No app with id '${'x'.repeat(25)}'\n`,
    })
    // Nothing of the secret in the server's log (the audit names the action only).
    expect(logs.join('\n')).not.toContain(created.secret)
  })

  test('behavior: apps webhook add|list|deliveries|remove|replay --server work through the API', async () => {
    const app = await server.admin.createApp({
      name: 'Hooks',
      allowedOrigins: ['https://h.example'],
    })
    const url = 'http://127.0.0.1:9/latch-hooks'
    const add = await op(
      withKey,
      ...['apps', 'webhook', 'add', app.id, '--url', url, '--events', 'user.created', '--json'],
    )
    expect(add.code).toBe(0)
    const endpoint = JSON.parse(add.out) as { id: string; secret: string; events: string[] }
    expect(endpoint.secret).toMatch(/^whsec_/)
    expect(endpoint.events).toEqual(['user.created'])
    const list = await op(withKey, 'apps', 'webhook', 'list', app.id, '--json')
    expect(list.code).toBe(0)
    expect((JSON.parse(list.out) as { id: string }[]).map((e) => e.id)).toEqual([endpoint.id])
    expect(list.out).not.toContain(endpoint.secret)
    const deliveries = await op(withKey, 'apps', 'webhook', 'deliveries', app.id, '--json')
    expect(deliveries.code).toBe(0)
    expect(JSON.parse(deliveries.out)).toEqual([])
    expect(await op(withKey, 'apps', 'webhook', 'replay', 'msg_nosuchevent')).toMatchObject({
      code: 1,
    })
    expect(await op(withKey, 'apps', 'webhook', 'add', app.id, '--url', 'ftp://x')).toMatchObject({
      code: 1,
    })
    const remove = () => op(withKey, 'apps', 'webhook', 'remove', app.id, endpoint.id)
    expect(await remove()).toMatchObject({ code: 0 })
    expect(await remove()).toMatchObject({
      code: 1,
      err: `App ${app.id} has no webhook endpoint '${endpoint.id}'\n`,
    })
    expect(await op(withKey, 'apps', 'webhook', 'list', 'x'.repeat(25))).toMatchObject({
      code: 1,
      err: `No app with id '${'x'.repeat(25)}'\n`,
    })
    expect(logs.join('\n')).not.toContain(endpoint.secret)
  })
})

test('refusal: the key on the modal origin finds no operator API there (serve, both origins)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'latch-operator-serve-'))
  const assets: Record<string, string> = {}
  for (const [name, files] of [
    ['LATCH_MODAL_DIR', ['index.html']],
    ['LATCH_SDK_DIR', ['sdk.js', 'latch.js', 'wallet-bridge.js', 'provider.js']],
    ['LATCH_WALLET_FRAME_DIR', ['index.html', 'export.html']],
  ] as const) {
    const folder = join(dir, name)
    mkdirSync(folder)
    for (const f of files)
      writeFileSync(join(folder, f), '<!doctype html><html><head></head></html>')
    assets[name] = folder
  }
  const lines: string[] = []
  const latch = await serveLatch({
    ...migratedMemory(),
    env: {
      ...baseEnv,
      ...assets,
      DATABASE_URL: 'memory://',
      LATCH_ADMIN_KEY: KEY,
      LATCH_API_PORT: '0',
      LATCH_MODAL_PORT: '0',
      LATCH_MODAL_ORIGIN: '',
      LATCH_LOG_FORMAT: 'json',
    },
    migrate: true,
    log: (line) => lines.push(line),
  })
  try {
    const api = latch.api as RunningServer
    const modalUrl = latch.modal?.url ?? ''
    const ip = freshIp()
    expect((await operator(api, '/apps', { ip, headers: bearer(KEY) })).status).toBe(200)
    // Under JSON logs the audit is a record of its own.
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(records).toContainEqual(
      expect.objectContaining({ msg: 'operator', action: 'GET /apps', ip, status: 200 }),
    )
    for (const line of lines) expect(line).not.toContain(KEY)
    const onModal = await fetch(`${modalUrl}${API_PREFIX}/operator/apps`, {
      headers: bearer(KEY),
      signal: AbortSignal.timeout(10_000),
    })
    expect(onModal.status).toBe(404)
    expect(
      await latchCli({ LATCH_ADMIN_KEY: KEY }, 'apps', 'list', '--server', modalUrl),
    ).toMatchObject({ code: 1, err: expect.stringMatching(/answered 404/) })
  } finally {
    await latch.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

describe.skipIf(!postgresAvailable())('operator API [postgres, two servers]', () => {
  let pg: RunningPostgres | null = null
  const servers: RunningServer[] = []
  afterAll(async () => {
    for (const s of servers) await s.close()
    await pg?.close()
  })

  test('behavior: a change made through one server applies in the other within the app cache’s 2 s', async () => {
    pg = await runPostgres()
    if (!pg) throw new Error('PostgreSQL did not start')
    const url = await pg.createDatabase()
    for (let i = 0; i < 2; i++) {
      servers.push(
        await startServer({
          port: 0,
          log: () => {},
          env: { ...baseEnv, DATABASE_URL: url, LATCH_ADMIN_KEY: KEY },
        }),
      )
    }
    const [a, b] = servers as [RunningServer, RunningServer]
    const created = await operator(a, '/apps', {
      method: 'POST',
      headers: bearer(KEY),
      body: JSON.stringify({ name: 'Before', allowedOrigins: ['https://two.example'] }),
    })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as { id: string }
    const nameAt = async (s: RunningServer) => {
      const res = await fetch(`${s.url}${API_PREFIX}/apps/${id}`, {
        signal: AbortSignal.timeout(10_000),
      })
      return ((await res.json()) as ServerAppConfig).name
    }
    // B reads (and caches) the app, then A changes it.
    expect(await nameAt(b)).toBe('Before')
    const changed = await operator(a, `/apps/${id}`, {
      method: 'POST',
      headers: bearer(KEY),
      body: JSON.stringify({ name: 'After' }),
    })
    expect(changed.status).toBe(200)
    const at = performance.now()
    expect(await nameAt(a)).toBe('After')
    // B's entry was read before the change, so it ends within APP_CACHE_MS of it: the first
    // request sent after that sees the change. Polled every 100 ms, that request leaves at
    // most one poll (the wait and the previous request's time) after the entry ends.
    let sentAt = performance.now()
    let previousTook = 0
    let seen = await nameAt(b)
    while (seen !== 'After' && performance.now() - at < APP_CACHE_MS + 8_000) {
      previousTook = performance.now() - sentAt
      await new Promise((r) => setTimeout(r, 100))
      sentAt = performance.now()
      seen = await nameAt(b)
    }
    expect(seen).toBe('After')
    expect(sentAt - at).toBeLessThan(APP_CACHE_MS + previousTook + 300)
  })
})
