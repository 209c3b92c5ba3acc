/**
 * Running Latch as an operator does: probes, migrations, graceful shutdown, pool settings and
 * `latch serve`'s refusals, through the CLI where the CLI is the interface.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ConfigError, loadConfig } from '../config.ts'
import { openDatabase } from '../db/index.ts'
import { startServer } from '../index.ts'
import { latchCli as cli } from '../testing/cli.ts'
import { latchCommand, REPO_ROOT } from '../testing/cli-bundle.ts'
import { migratedFolder, migratedMemory } from '../testing/global-setup.ts'
import { type RunningPostgres, runPostgres } from '../testing/index.ts'
import { MIGRATED_TEMPLATE, RUN_POSTGRES_ENV } from '../testing/postgres.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { databaseReadiness, reuseFor } from './health.ts'
import { serveLatch } from './serve.ts'
import { closeGracefully } from './shutdown.ts'

let postgres: RunningPostgres | null = null
let dir = ''
/** Stand-ins for the build: the servers only read and serve these files. */
let assets: Record<string, string> = {}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'latch-ops-'))
  postgres = await runPostgres()
  const modal = join(dir, 'modal')
  const sdk = join(dir, 'sdk')
  const frame = join(dir, 'frame')
  for (const d of [modal, sdk, frame]) mkdirSync(d)
  writeFileSync(join(modal, 'index.html'), '<!doctype html><html><head></head><body></body></html>')
  for (const f of ['sdk.js', 'latch.js', 'wallet-bridge.js', 'provider.js']) {
    writeFileSync(join(sdk, f), `/* ${f} */`)
  }
  for (const f of ['index.html', 'export.html']) writeFileSync(join(frame, f), '<!doctype html>')
  assets = { LATCH_MODAL_DIR: modal, LATCH_SDK_DIR: sdk, LATCH_WALLET_FRAME_DIR: frame }
}, 60_000)
afterAll(async () => {
  await postgres?.close()
  rmSync(dir, { recursive: true, force: true })
})

/**
 * A database of its own: PostgreSQL when installed, else a PGlite data folder. `migrated`: a
 * copy of the run's migrated database when the run has one, for a test whose subject is not
 * the migrations (running them in a child process costs seconds); `--migrate` still finds it
 * current.
 */
async function freshDatabase(
  name: string,
  { migrated = false } = {},
): Promise<Record<string, string>> {
  if (postgres) {
    const template = migrated && process.env[RUN_POSTGRES_ENV] ? MIGRATED_TEMPLATE : undefined
    return {
      DATABASE_URL: await postgres.createDatabase(undefined, template),
      LATCH_SECRET: TEST_SECRET,
    }
  }
  const folder = join(dir, name)
  return {
    LATCH_DATA_DIR: migrated ? await migratedFolder(folder) : folder,
    LATCH_SECRET: TEST_SECRET,
  }
}

describe('migrations', () => {
  test('behavior: migrate --check reports pending migrations without running them; serve refuses them; migrate runs them once', async () => {
    const env = { ...(await freshDatabase('migrate')), ...assets, LATCH_API_PORT: '0' }
    const before = await cli(env, 'migrate', '--check')
    expect(before.code).toBe(1)
    expect(before.out).toMatch(/\d+ migration\(s\) pending: 0001_/)
    // --check changed nothing: the same answer again.
    expect((await cli(env, 'migrate', '--check')).out).toBe(before.out)

    const refused = await cli(env, 'serve', '--api-only')
    expect(refused.code).toBe(1)
    expect(refused.err).toContain('The database schema is not current')
    expect(refused.err).toContain('npm run latch -- migrate')

    const ran = await cli(env, 'migrate')
    expect(ran.code).toBe(0)
    expect(ran.out).toMatch(/^Ran \d+ migration\(s\): 0001_/)
    const check = await cli(env, 'migrate', '--check')
    expect(check.code).toBe(0)
    expect(check.out).toMatch(/The database schema is current/)
    expect((await cli(env, 'migrate')).out).toContain('already current')
  }, 60_000)
})

describe('probes', () => {
  test('behavior: /healthz answers while /readyz follows the schema: 503 with a missing migration, 200 once current', async () => {
    const api = await startServer({
      ...migratedMemory(),
      port: 0,
      env: { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET },
    })
    try {
      const get = async (path: string, method = 'GET') => {
        const res = await fetch(`${api.url}${path}`, { method })
        return {
          status: res.status,
          body: (await res.text()) || null,
          cache: res.headers.get('cache-control'),
        }
      }
      expect(await get('/healthz')).toEqual({
        status: 200,
        body: '{"status":"ok"}',
        cache: 'no-store',
      })
      expect(await get('/readyz')).toEqual({
        status: 200,
        body: '{"status":"ready"}',
        cache: 'no-store',
      })
      expect((await get('/readyz', 'HEAD')).status).toBe(200)
      // Only reads are probes: anything else is the API's (no such route).
      expect((await get('/healthz', 'POST')).status).toBe(404)

      const last = await sql<{
        name: string
      }>`SELECT max(name) AS name FROM kysely_migration`.execute(api.deps.db)
      const name = last.rows[0]?.name ?? ''
      await sql`DELETE FROM kysely_migration WHERE name = ${name}`.execute(api.deps.db)
      // The last answer serves probes for up to a second.
      await expect.poll(async () => (await get('/readyz')).status, { timeout: 5_000 }).toBe(503)
      const pending = await get('/readyz')
      expect(JSON.parse(pending.body ?? '{}')).toEqual({
        status: 'not_ready',
        reason: '1 migration(s) pending: run latch migrate',
      })
      expect((await get('/healthz')).status).toBe(200)
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${name}, ${new Date().toISOString()})`.execute(
        api.deps.db,
      )
      await expect.poll(async () => (await get('/readyz')).status, { timeout: 5_000 }).toBe(200)
    } finally {
      await api.close()
    }
  })

  test('behavior: a flood of readiness probes shares one check a second', async () => {
    let checks = 0
    const ready = reuseFor(1_000, async () => {
      checks++
      await new Promise((r) => setTimeout(r, 20))
      return { ready: true }
    })
    const answers = await Promise.all(Array.from({ length: 50 }, () => ready()))
    expect(answers.every((a) => a.ready)).toBe(true)
    expect(checks).toBe(1)
    await ready()
    expect(checks).toBe(1)
    await new Promise((r) => setTimeout(r, 1_050))
    await ready()
    expect(checks).toBe(2)
  })

  test('behavior: an unreachable database is not ready, and the reason names no host', async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const pool = new pg.Pool({
      connectionString: 'postgres://u@127.0.0.1:1/db',
      connectionTimeoutMillis: 1_000,
    })
    pool.on('error', () => {})
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) })
    try {
      expect(await databaseReadiness(db)()).toEqual({
        ready: false,
        reason: 'the database is unreachable',
      })
    } finally {
      await db.destroy()
    }
  })
})

describe('graceful shutdown', () => {
  /** A server answering after `delayMs`; `arrived` resolves once a request is in its hands. */
  const slowServer = async (
    delayMs: number,
  ): Promise<{ server: Server; port: number; arrived: Promise<void> }> => {
    let onArrival = () => {}
    const arrived = new Promise<void>((r) => {
      onArrival = r
    })
    const server = createServer((_req, res) => {
      onArrival()
      setTimeout(() => res.end('finished'), delayMs)
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    return { server, port: (server.address() as AddressInfo).port, arrived }
  }
  const get = (port: number) =>
    new Promise<string>((resolve, reject) => {
      const req = httpRequest({ port, host: '127.0.0.1', agent: false }, (res) => {
        let body = ''
        res.on('data', (d: Buffer) => {
          body += d.toString()
        })
        res.on('end', () => resolve(body))
        res.on('error', reject)
      })
      req.on('error', reject)
      req.setTimeout(5_000, () => req.destroy(new Error('no answer in 5 s')))
      req.end()
    })

  test('behavior: a request under way finishes, a new connection is refused, and close resolves in time', async () => {
    const { server, port, arrived } = await slowServer(300)
    const inFlight = get(port)
    await arrived
    const closed = closeGracefully(server, 5_000)
    await expect(get(port)).rejects.toThrow(/ECONNREFUSED/)
    expect(await inFlight).toBe('finished')
    expect(await closed).toBe(true)
  })

  test('behavior: a request still open at the deadline is cut and close resolves then', async () => {
    const { server, port, arrived } = await slowServer(60_000)
    const inFlight = get(port)
    inFlight.catch(() => {})
    await arrived
    const started = Date.now()
    expect(await closeGracefully(server, 200)).toBe(false)
    expect(Date.now() - started).toBeLessThan(2_000)
    await expect(inFlight).rejects.toThrow()
  })
})

describe('settings', () => {
  test('behavior: LATCH_PG_POOL_MAX, LATCH_PG_STATEMENT_TIMEOUT_MS, LATCH_PG_POOL_WAIT_MS and LATCH_PG_POOL_QUEUE_MAX are read and checked', () => {
    const base = { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET }
    expect(loadConfig(base).postgres).toEqual({
      poolMax: 10,
      statementTimeoutMs: 0,
      poolWaitMs: 1000,
      poolQueueMax: 100,
    })
    expect(
      loadConfig({
        ...base,
        LATCH_PG_POOL_MAX: '3',
        LATCH_PG_STATEMENT_TIMEOUT_MS: '5000',
        LATCH_PG_POOL_WAIT_MS: '250',
        LATCH_PG_POOL_QUEUE_MAX: '0',
      }).postgres,
    ).toEqual({ poolMax: 3, statementTimeoutMs: 5000, poolWaitMs: 250, poolQueueMax: 0 })
    expect(() => loadConfig({ ...base, LATCH_PG_POOL_MAX: '0' })).toThrow(ConfigError)
    expect(() => loadConfig({ ...base, LATCH_PG_STATEMENT_TIMEOUT_MS: '-1' })).toThrow(
      /LATCH_PG_STATEMENT_TIMEOUT_MS must be an integer/,
    )
    // A wait of 0 would be pg's "wait forever": the bound is at least 50 ms.
    expect(() => loadConfig({ ...base, LATCH_PG_POOL_WAIT_MS: '0' })).toThrow(
      /LATCH_PG_POOL_WAIT_MS must be an integer from 50/,
    )
    expect(() => loadConfig({ ...base, LATCH_PG_POOL_QUEUE_MAX: 'many' })).toThrow(ConfigError)
  })

  test('behavior: LATCH_SECRET_FILE supplies the secret; both at once, an unreadable or empty file, and in production a file inside the data folder are refused', () => {
    const secretDir = mkdtempSync(join(tmpdir(), 'latch-secret-'))
    try {
      const file = join(secretDir, 'latch.key')
      writeFileSync(file, `${'f'.repeat(40)}\n`)
      const base = { DATABASE_URL: 'memory://' }
      const config = loadConfig({ ...base, LATCH_SECRET_FILE: file })
      expect(config.secret).toBe('f'.repeat(40))
      expect(config.secretGenerated).toBe(false)
      expect(() =>
        loadConfig({ ...base, LATCH_SECRET_FILE: file, LATCH_SECRET: 's'.repeat(32) }),
      ).toThrow('Set LATCH_SECRET or LATCH_SECRET_FILE, not both')
      expect(() => loadConfig({ ...base, LATCH_SECRET_FILE: join(secretDir, 'none') })).toThrow(
        /LATCH_SECRET_FILE: cannot read .* \(ENOENT\)/,
      )
      writeFileSync(join(secretDir, 'empty'), '\n')
      expect(() => loadConfig({ ...base, LATCH_SECRET_FILE: join(secretDir, 'empty') })).toThrow(
        /is empty/,
      )
      writeFileSync(join(secretDir, 'short'), 'short')
      expect(() => loadConfig({ ...base, LATCH_SECRET_FILE: join(secretDir, 'short') })).toThrow(
        /at least 32/,
      )
      const production = {
        NODE_ENV: 'production',
        SMTP_URL: 'smtp://127.0.0.1:1',
        LATCH_PUBLIC_URL: 'https://api.example.com',
      }
      // PGlite in the data folder: a copy of the folder would hold the database and its key.
      expect(() =>
        loadConfig({ ...production, LATCH_DATA_DIR: secretDir, LATCH_SECRET_FILE: file }),
      ).toThrow(/refuses LATCH_SECRET_FILE .* inside the data folder/)
      const apart = join(secretDir, 'data')
      expect(
        loadConfig({ ...production, LATCH_DATA_DIR: apart, LATCH_SECRET_FILE: file }).secret,
      ).toBe('f'.repeat(40))
    } finally {
      rmSync(secretDir, { recursive: true, force: true })
    }
  })

  test('behavior: on PostgreSQL the pool holds at most LATCH_PG_POOL_MAX connections and a statement past the timeout is cancelled', async (ctx) => {
    if (!postgres) {
      ctx.skip()
      return
    }
    const url = await postgres.createDatabase()
    const config = loadConfig({
      DATABASE_URL: url,
      LATCH_SECRET: TEST_SECRET,
      LATCH_PG_POOL_MAX: '2',
      LATCH_PG_STATEMENT_TIMEOUT_MS: '300',
    })
    const database = await openDatabase(config)
    try {
      const pids = await Promise.all(
        Array.from({ length: 6 }, () =>
          sql<{ pid: number }>`SELECT pg_backend_pid() AS pid, pg_sleep(0.1)`.execute(database.db),
        ),
      )
      expect(new Set(pids.map((r) => r.rows[0]?.pid)).size).toBe(2)
      await expect(sql`SELECT pg_sleep(2)`.execute(database.db)).rejects.toThrow(
        /statement timeout/,
      )
      // Within the limit a statement runs as before.
      await expect(sql`SELECT pg_sleep(0.05)`.execute(database.db)).resolves.toBeTruthy()
    } finally {
      await database.close()
    }
  }, 30_000)
})

describe('latch serve', () => {
  test('behavior: serve refuses to start without the build and says which command builds it', async () => {
    const env = {
      ...(await freshDatabase('no-build')),
      LATCH_MODAL_DIR: join(dir, 'nowhere'),
      LATCH_SDK_DIR: assets.LATCH_SDK_DIR ?? '',
      LATCH_WALLET_FRAME_DIR: assets.LATCH_WALLET_FRAME_DIR ?? '',
    }
    const refused = await cli(env, 'serve', '--migrate')
    expect(refused.code).toBe(1)
    expect(refused.err).toContain(join(dir, 'nowhere', 'index.html'))
    expect(refused.err).toContain('Build them with: npm run build')
    // The API alone does not need the modal's build.
    const both = await cli(env, 'serve', '--api-only', '--modal-only')
    expect(both.code).toBe(2)
    const production = {
      ...env,
      ...assets,
      NODE_ENV: 'production',
      SMTP_URL: 'smtp://127.0.0.1:1',
      LATCH_PUBLIC_URL: 'https://api.example.com',
    }
    const noModalOrigin = await cli(production, 'serve', '--api-only')
    expect(noModalOrigin.code).toBe(1)
    expect(noModalOrigin.err).toContain('NODE_ENV=production needs LATCH_MODAL_ORIGIN')
    const plainApi = await cli(
      { ...production, LATCH_PUBLIC_URL: 'http://api.example.com' },
      'serve',
      '--modal-only',
    )
    expect(plainApi.code).toBe(1)
    expect(plainApi.err).toContain(
      "NODE_ENV=production refuses LATCH_PUBLIC_URL 'http://api.example.com'",
    )
    const modalOnly = await cli({ ...env, ...assets }, 'serve', '--modal-only')
    expect(modalOnly.code).toBe(1)
    expect(modalOnly.err).toContain('--modal-only needs LATCH_PUBLIC_URL')
  }, 30_000)

  test('behavior: split across processes, the modal-only server calls the API at LATCH_PUBLIC_URL and is ready only while that API is', async () => {
    const api = await serveLatch({
      ...migratedMemory(),
      mode: 'api',
      env: { ...assets, DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET, LATCH_API_PORT: '0' },
      migrate: true,
      log: () => {},
    })
    const apiUrl = api.api?.url ?? ''
    expect(api.modal).toBeNull()
    const modal = await serveLatch({
      mode: 'modal',
      env: { ...assets, LATCH_PUBLIC_URL: apiUrl, LATCH_MODAL_PORT: '0' },
      log: () => {},
    })
    try {
      expect(modal.api).toBeNull()
      const modalUrl = modal.modal?.url ?? ''
      expect(await (await fetch(`${modalUrl}/`)).text()).toContain(
        `<meta name="latch-api-url" content="${apiUrl}"`,
      )
      expect(await (await fetch(`${modalUrl}/readyz`)).json()).toEqual({ status: 'ready' })
      await api.close()
      const down = await fetch(`${modalUrl}/readyz`)
      expect(down.status).toBe(503)
      expect(await down.json()).toEqual({ status: 'not_ready', reason: 'the API is unreachable' })
      expect((await fetch(`${modalUrl}/healthz`)).status).toBe(200)
    } finally {
      await modal.close()
      await api.close()
    }
  }, 30_000)

  test("behavior: LATCH_CONNECTOR_ORIGIN opens the connector origin (Coinbase Wallet's frame) on LATCH_CONNECTOR_PORT, named in the modal page; production refuses it on plain http or without LATCH_MODAL_ORIGIN", async () => {
    const modal = await serveLatch({
      mode: 'modal',
      env: {
        ...assets,
        LATCH_PUBLIC_URL: 'http://127.0.0.1:9',
        LATCH_MODAL_PORT: '0',
        LATCH_CONNECTOR_ORIGIN: 'http://connect.localhost:8789',
        LATCH_CONNECTOR_PORT: '0',
      },
      log: () => {},
    })
    try {
      const connector = modal.modal?.connector
      expect(connector?.origin).toBe('http://connect.localhost:8789')
      expect(await (await fetch(`${modal.modal?.url}/`)).text()).toContain(
        '<meta name="latch-connector-origin" content="http://connect.localhost:8789" />',
      )
      // The connector origin serves no page of the modal's.
      expect((await fetch(`${connector?.url}/`)).status).toBe(404)
    } finally {
      await modal.close()
    }
    const production = {
      ...assets,
      NODE_ENV: 'production',
      SMTP_URL: 'smtp://127.0.0.1:1',
      LATCH_SECRET: TEST_SECRET,
      LATCH_PUBLIC_URL: 'https://api.example.com',
      LATCH_MODAL_PORT: '0',
      LATCH_CONNECTOR_PORT: '0',
    }
    await expect(
      serveLatch({
        mode: 'modal',
        env: {
          ...production,
          LATCH_MODAL_ORIGIN: 'https://auth.example.com',
          LATCH_CONNECTOR_ORIGIN: 'http://connect.example.com',
        },
        log: () => {},
      }),
    ).rejects.toThrow(/LATCH_CONNECTOR_ORIGIN/)
    await expect(
      serveLatch({
        mode: 'modal',
        env: { ...production, LATCH_CONNECTOR_ORIGIN: 'https://connect.example.com' },
        log: () => {},
      }),
    ).rejects.toThrow(/LATCH_CONNECTOR_ORIGIN needs LATCH_MODAL_ORIGIN/)
  }, 30_000)

  test('behavior: LATCH_MODAL_SSR=off serves the modal page as built; unset or on, it holds the landing; any other value is refused', async () => {
    // A hydrating build's page (modal-app/build.ts), which the modal server renders into.
    const built = join(dir, 'modal-ssr')
    mkdirSync(join(built, 'assets'), { recursive: true })
    writeFileSync(
      join(built, 'index.html'),
      '<!doctype html><html lang="en"><head><link rel="stylesheet" href="/assets/index-x.css">' +
        '</head><body><div id="root" data-latch-hydrate></div><!--/latch-root--></body></html>',
    )
    writeFileSync(join(built, 'assets/index-x.css'), '.latch-modal{margin:0}')
    const api = await startServer({
      ...migratedMemory(),
      port: 0,
      host: '127.0.0.1',
      env: { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET },
      log: () => {},
    })
    try {
      const { id } = await api.admin.createApp({
        name: 'Ops',
        allowedOrigins: ['https://shop.example.com'],
        loginMethods: ['email'],
      })
      const page = async (value: string | undefined) => {
        const modal = await serveLatch({
          mode: 'modal',
          env: {
            ...assets,
            LATCH_MODAL_DIR: built,
            LATCH_PUBLIC_URL: api.url,
            LATCH_MODAL_PORT: '0',
            ...(value === undefined ? {} : { LATCH_MODAL_SSR: value }),
          },
          log: () => {},
        })
        try {
          const query = `?app=${id}&ssr=${encodeURIComponent('[null,null,null]')}`
          const res = await fetch(`${modal.modal?.url}/${query}`, {
            signal: AbortSignal.timeout(10_000),
          })
          expect(res.status).toBe(200)
          return (await res.text()).includes('data-testid="email-input"')
        } finally {
          await modal.close()
        }
      }
      expect(await page(undefined)).toBe(true)
      expect(await page('on')).toBe(true)
      expect(await page('off')).toBe(false)
      expect(await page(' OFF ')).toBe(false)
      expect(await page('0')).toBe(false)
      await expect(page('maybe')).rejects.toThrow(
        new ConfigError("LATCH_MODAL_SSR must be on or off, got 'maybe'"),
      )
    } finally {
      await api.close()
    }
  }, 60_000)

  test('behavior: on shutdown the modal origin finishes a page still waiting for its app lookup and refuses new connections', async () => {
    // An API that takes 500 ms to describe any app: the modal page waits for it.
    let onLookup = () => {}
    const lookedUp = new Promise<void>((r) => {
      onLookup = r
    })
    const slowApi = createServer((_req, res) => {
      onLookup()
      setTimeout(() => res.writeHead(404, { 'content-type': 'application/json' }).end('{}'), 500)
    })
    await new Promise<void>((r) => slowApi.listen(0, '127.0.0.1', r))
    const apiUrl = `http://127.0.0.1:${(slowApi.address() as AddressInfo).port}`
    const modal = await serveLatch({
      mode: 'modal',
      env: { ...assets, LATCH_PUBLIC_URL: apiUrl, LATCH_MODAL_PORT: '0' },
      log: () => {},
    })
    try {
      const modalUrl = modal.modal?.url ?? ''
      const page = fetch(`${modalUrl}/?app=${'a'.repeat(25)}`)
      // The page is under way once the modal server asks the API for its app.
      await lookedUp
      const stopped = modal.shutdown(5_000)
      await expect(fetch(`${modalUrl}/healthz`)).rejects.toThrow()
      const answer = await page
      expect(answer.status).toBe(200)
      expect(await answer.text()).toContain('latch-api-url')
      expect(await stopped).toBe(true)
    } finally {
      await modal.close()
      await new Promise((r) => slowApi.close(r))
    }
  })

  test('behavior: serve runs the API and the modal from one process, both probed, and SIGTERM drains and exits 0', async () => {
    const env = {
      ...process.env,
      ...(await freshDatabase('serve', { migrated: true })),
      ...assets,
      LATCH_API_PORT: '0',
      LATCH_MODAL_PORT: '0',
    }
    const child = spawn(process.execPath, latchCommand('serve', '--migrate'), {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const guard = () => child.kill('SIGKILL')
    process.once('exit', guard)
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d
    })
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
    try {
      const deadline = Date.now() + 40_000
      while (!/Latch modal listening on/.test(out)) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`no start: ${out}${err}`)
        await new Promise((r) => setTimeout(r, 100))
      }
      const apiUrl = /Latch API listening on (\S+)/.exec(out)?.[1] ?? ''
      const modalUrl = /Latch modal listening on (\S+)/.exec(out)?.[1] ?? ''
      for (const base of [apiUrl, modalUrl]) {
        expect((await fetch(`${base}/healthz`)).status).toBe(200)
        const ready = await fetch(`${base}/readyz`)
        expect(await ready.json()).toEqual({ status: 'ready' })
      }
      expect(await (await fetch(`${modalUrl}/sdk.js`)).text()).toBe('/* sdk.js */')
      const page = await (await fetch(`${modalUrl}/`)).text()
      expect(page).toContain(`<meta name="latch-api-url" content="${apiUrl}"`)
      child.kill('SIGTERM')
      const code = await Promise.race([
        exited,
        new Promise<string>((r) => setTimeout(r, 15_000, 'still running')),
      ])
      expect(code).toBe(0)
      expect(out).toContain('SIGTERM: finishing requests under way')
      expect(out).toMatch(/\nStopped\n/)
      await expect(fetch(`${apiUrl}/healthz`)).rejects.toThrow()
    } finally {
      process.off('exit', guard)
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  }, 60_000)
})
