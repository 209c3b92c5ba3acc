/**
 * `latch secret rotate` on a database with users, sessions, both kinds of wallet, an app with
 * OAuth settings and node URLs, signing keys and a webhook endpoint, on PGlite (files) and
 * PostgreSQL: the old secret's server writes it all; a server with the new secret and the
 * previous one serves it while a rotation is stopped half way and resumed; a server with the new
 * secret alone then serves everyone.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AuthResponse } from '@latch/shared'
import pg from 'pg'
import { afterAll, describe, expect, test } from 'vitest'
import { findApp } from '../apps/service.ts'
import { runCli } from '../cli.ts'
import { softAuthenticator } from '../testing/authenticator.ts'
import { latchCommand, REPO_ROOT } from '../testing/cli-bundle.ts'
import { frameDevice } from '../testing/frame-fetch.ts'
import { migratedFolder } from '../testing/global-setup.ts'
import { postgresAvailable, type RunningPostgres, runPostgres } from '../testing/postgres.ts'
import { freshIp, startTestServer, TEST_SECRET, type TestServer } from '../testing/test-server.ts'
import { addEndpoint, openSecret } from '../webhooks/endpoints.ts'
import { rotateSecret } from './rotate.ts'

const NEW_SECRET = 'the-new-secret-the-new-secret-the-new-0123456789'
const PASSCODE = 'Vb7k2Q'
const GITHUB = { clientId: 'gh-client', clientSecret: 'gh-client-secret-kept-sealed' }
const NODE_URL = 'https://node.example/v1/api-key-kept-sealed'

/**
 * Runs `secret rotate --batch 1` as a child process while another connection holds the first
 * wallet row's lock, waits until the child is blocked on it (inside the wallets' first batch),
 * kills it with SIGKILL, then lets the row go.
 */
async function killedInsideABatch(databaseUrl: string, env: Record<string, string>) {
  const holder = new pg.Client({ connectionString: databaseUrl })
  await holder.connect()
  const watcher = new pg.Client({ connectionString: databaseUrl })
  await watcher.connect()
  try {
    await holder.query('BEGIN')
    await holder.query('SELECT id FROM wallets ORDER BY id LIMIT 1 FOR UPDATE')
    const child = spawn(process.execPath, latchCommand('secret', 'rotate', '--batch', '1'), {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const guard = () => child.kill('SIGKILL')
    process.once('exit', guard)
    let err = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d
    })
    const exited = new Promise<NodeJS.Signals | null>((r) =>
      child.once('exit', (_code, signal) => r(signal)),
    )
    const deadline = Date.now() + 40_000
    for (;;) {
      const { rows } = await watcher.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
      )
      if (Number(rows[0]?.n) > 0) break
      if (Date.now() > deadline || child.exitCode !== null) {
        throw new Error(`the rotation never waited on the locked row: ${err}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    // It got through the other tables first, batch by batch.
    expect(err).toMatch(/refresh_tokens: 1 row\(s\) done/)
    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    process.off('exit', guard)
  } finally {
    await holder.query('ROLLBACK')
    await holder.end()
    await watcher.end()
  }
}

let postgres: Promise<RunningPostgres | null> | undefined
afterAll(async () => {
  await (await postgres)?.close()
})

for (const backend of ['pglite', 'postgres'] as const) {
  const skip = backend === 'postgres' && !postgresAvailable()
  describe.skipIf(skip)(`secret rotation [${backend}]`, () => {
    test('everyone signs in, refreshes and recovers both kinds of wallet after a rotation that was stopped half way', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'latch-rotate-'))
      // On PGlite the run's migrated database in the folder: the rotation is tested, not the
      // folder's creation.
      if (backend === 'pglite') await migratedFolder(dir)
      let databaseUrl = ''
      if (backend === 'postgres') {
        postgres ??= runPostgres()
        const running = await postgres
        if (!running) throw new Error('PostgreSQL did not start')
        databaseUrl = await running.createDatabase()
      }
      const env = (secrets: Record<string, string>) => ({ LATCH_DATA_DIR: dir, ...secrets })
      const stops: (() => Promise<void>)[] = []
      const start = async (secrets: Record<string, string>) => {
        const started = await startTestServer(backend, databaseUrl, env(secrets))
        stops.push(started.close)
        return started
      }
      try {
        // 1. The old secret: an app with sealed settings, a webhook, two users with wallets.
        const before = await start({ LATCH_SECRET: TEST_SECRET })
        const a = before.server
        const app = await a.newApp({ oauth: { github: GITHUB }, rpcUrls: { '1': NODE_URL } })
        const hook = await addEndpoint(a.deps, app.id, { url: 'https://hooks.example/latch' })
        const autoEmail = `auto.${Date.now()}@example.com`
        const pinEmail = `pin.${Date.now()}@example.com`
        const auto = await a.emailLogin(app.id, autoEmail)
        const { address: autoAddress } = await frameDevice(a, app.id).create({
          accessToken: auto.token,
        })
        const pinned = await a.emailLogin(app.id, pinEmail)
        const { address: pinAddress } = await frameDevice(a, app.id).create({
          accessToken: pinned.token,
          recoveryPin: PASSCODE,
        })
        // A refresh leaves a sealed child token behind (the two-tab grace).
        const refreshed = await a.request<AuthResponse>('/sessions', {
          appId: app.id,
          body: { refresh_token: auto.refresh_token },
        })
        expect(refreshed.status).toBe(200)
        // A code sent just before the switch, entered just after it.
        const lateEmail = `late.${Date.now()}@example.com`
        const ip = freshIp()
        expect(
          (await a.request('/passwordless/init', { appId: app.id, ip, body: { email: lateEmail } }))
            .status,
        ).toBe(200)
        const lateCode = await a.smtp.waitForCode(lateEmail, { timeoutMs: 10_000 })
        await before.close()
        stops.pop()

        // 2. The new secret with the previous one: what the old secret sealed still serves.
        const during = await start({ LATCH_SECRET: NEW_SECRET, LATCH_SECRET_PREVIOUS: TEST_SECRET })
        const b = during.server
        const late = await b.request<AuthResponse>('/passwordless/authenticate', {
          appId: app.id,
          ip,
          body: { email: lateEmail, code: lateCode },
        })
        expect(late.status).toBe(200)
        // The session's wallet cookie, made under the old secret, is given the new one's value.
        const oldCookie = a.walletCookie(refreshed.body.token)
        expect(oldCookie).toBeDefined()
        const carried: TestServer = { ...b, walletCookie: (t) => b.walletCookie(t) ?? oldCookie }
        await frameDevice(carried, app.id).recover({
          address: autoAddress,
          accessToken: refreshed.body.token,
        })
        const info = await b.request('/wallets/info', {
          appId: app.id,
          token: refreshed.body.token,
          body: { address: autoAddress },
          headers: { cookie: oldCookie ?? '', 'sec-fetch-site': 'same-origin' },
        })
        expect(info.status).toBe(200)
        expect(info.headers.get('set-cookie')).toMatch(/^__Host-latch-w-/)
        const renewed = b.walletCookie(refreshed.body.token)
        expect(renewed).toBeDefined()
        expect(renewed).not.toBe(oldCookie)

        const pending = await rotateSecret(b.deps, { check: true })
        expect(pending.tables.apps?.resealed).toBe(1)
        expect(pending.tables.signing_keys?.resealed).toBeGreaterThanOrEqual(2)
        expect(pending.tables.webhook_endpoints?.resealed).toBe(1)
        expect(pending.tables.refresh_tokens?.resealed).toBe(1)
        expect(pending.tables.wallets?.resealed).toBe(2)
        expect(pending.unreadable).toBe(0)

        // Stopped after three batches of one row (the app, two signing keys).
        let batches = 0
        await expect(
          rotateSecret(b.deps, {
            batchSize: 1,
            onBatch: () => {
              if (++batches === 3) throw new Error('stopped')
            },
          }),
        ).rejects.toThrow('stopped')
        const half = await rotateSecret(b.deps, { check: true })
        expect(half.resealed).toBe(pending.resealed - 3)
        // Half rotated, both wallets still recover, the passcode one through its old OPRF key.
        const withOldCookies: TestServer = { ...b, walletCookie: (t) => a.walletCookie(t) }
        await frameDevice(withOldCookies, app.id).recover({
          address: pinAddress,
          accessToken: pinned.token,
          recoveryPin: PASSCODE,
        })

        // Run again through the command line: it finishes what the first run left.
        const out: string[] = []
        const io = { out: (t: string) => out.push(t), err: () => {}, env: env({}) }
        const cliEnv = {
          ...io,
          env: {
            ...io.env,
            NODE_ENV: 'test',
            DATABASE_URL: databaseUrl,
            LATCH_SECRET: NEW_SECRET,
            LATCH_SECRET_PREVIOUS: TEST_SECRET,
          },
        }
        if (backend === 'postgres') {
          // A run killed inside a batch's transaction: a wallet row is held locked, the command
          // waits on it, and gets SIGKILL there. Nothing of that batch is written.
          await killedInsideABatch(databaseUrl, cliEnv.env)
          const killed = await rotateSecret(b.deps, { check: true })
          expect(killed.tables.wallets?.resealed).toBe(2)
          expect(killed.resealed).toBe(2)
          expect(await runCli(['secret', 'rotate', '--check'], cliEnv)).toBe(1)
          expect(await runCli(['secret', 'rotate', '--batch', '2'], cliEnv)).toBe(0)
          expect(await runCli(['secret', 'rotate', '--check'], cliEnv)).toBe(0)
          expect(out.at(-1)).toMatch(/LATCH_SECRET_PREVIOUS can be removed/)
        } else {
          // PGlite serves one process: the CLI cannot open the folder this server holds.
          const rest = await rotateSecret(b.deps, { batchSize: 2 })
          expect(rest.resealed).toBe(pending.resealed - 3)
        }
        expect((await rotateSecret(b.deps, { check: true })).resealed).toBe(0)
        await during.close()
        stops.pop()

        // 3. The new secret alone.
        const after = await start({ LATCH_SECRET: NEW_SECRET })
        const c = after.server
        const left = await rotateSecret(c.deps, { check: true })
        expect(left).toMatchObject({ resealed: 0, unreadable: 0 })
        // Everyone signs in again and recovers on a new device.
        const autoAgain = await c.emailLogin(app.id, autoEmail)
        expect(autoAgain.user.id).toBe(auto.user.id)
        await frameDevice(c, app.id).recover({
          address: autoAddress,
          accessToken: autoAgain.token,
        })
        const pinAgain = await c.emailLogin(app.id, pinEmail)
        expect(pinAgain.user.id).toBe(pinned.user.id)
        await expect(
          frameDevice(c, app.id).recover({
            address: pinAddress,
            accessToken: pinAgain.token,
            recoveryPin: 'Vb7k2R',
          }),
        ).rejects.toMatchObject({ code: 'invalid_recovery_pin' })
        await frameDevice(c, app.id).recover({
          address: pinAddress,
          accessToken: pinAgain.token,
          recoveryPin: PASSCODE,
        })
        // An access token from before still verifies (the keys kept their ids), with the
        // session's renewed wallet cookie; and the session refreshes.
        const wallet = { cookie: renewed ?? '', 'sec-fetch-site': 'same-origin' }
        const old = await c.request('/wallets/info', {
          appId: app.id,
          token: refreshed.body.token,
          body: { address: autoAddress },
          headers: wallet,
        })
        expect(old.status).toBe(200)
        const again = await c.request<AuthResponse>('/sessions', {
          appId: app.id,
          body: { refresh_token: refreshed.body.refresh_token },
        })
        expect(again.status).toBe(200)
        // The session whose cookie was renewed during the rotation keeps its wallet; the old
        // secret's cookie alone no longer opens it.
        await frameDevice({ ...c, walletCookie: () => renewed }, app.id).recover({
          address: autoAddress,
          accessToken: again.body.token,
        })
        await expect(
          frameDevice({ ...c, walletCookie: () => oldCookie }, app.id).recover({
            address: autoAddress,
            accessToken: again.body.token,
          }),
        ).rejects.toMatchObject({ code: 'wallet_sign_in_required' })
        // The app's sealed settings and the webhook's signing secret open.
        const stored = await findApp(c.deps, app.id)
        expect(stored?.oauth.github?.clientSecret).toBe(GITHUB.clientSecret)
        expect(stored?.rpcUrls['1']).toBe(NODE_URL)
        const row = await c.deps.db
          .selectFrom('webhook_endpoints')
          .select('secret_sealed')
          .where('id', '=', hook.id)
          .executeTakeFirstOrThrow()
        expect(openSecret(c.deps, hook.id, row.secret_sealed)).toBe(hook.secret)
      } finally {
        for (const stop of stops.reverse()) await stop()
        rmSync(dir, { recursive: true, force: true })
      }
    }, 120_000)

    test('a passkey wallet’s sealing is sealed again: after the rotation a new device recovers with the passkey alone', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'latch-rotate-passkey-'))
      // On PGlite the run's migrated database in the folder: the rotation is tested, not the
      // folder's creation.
      if (backend === 'pglite') await migratedFolder(dir)
      let databaseUrl = ''
      if (backend === 'postgres') {
        postgres ??= runPostgres()
        const running = await postgres
        if (!running) throw new Error('PostgreSQL did not start')
        databaseUrl = await running.createDatabase()
      }
      const stops: (() => Promise<void>)[] = []
      const start = async (secrets: Record<string, string>) => {
        const started = await startTestServer(backend, databaseUrl, {
          LATCH_DATA_DIR: dir,
          ...secrets,
        })
        stops.push(started.close)
        return started
      }
      try {
        const before = await start({ LATCH_SECRET: TEST_SECRET })
        const app = await before.server.newApp()
        const address0 = `passkey.${Date.now()}@example.com`
        const auth = await before.server.emailLogin(app.id, address0)
        const passkey = softAuthenticator()
        const { address } = await frameDevice(before.server, app.id, passkey).create({
          accessToken: auth.token,
          recoveryMethod: 'passkey',
        })
        await before.close()
        stops.pop()

        const during = await start({ LATCH_SECRET: NEW_SECRET, LATCH_SECRET_PREVIOUS: TEST_SECRET })
        const pending = await rotateSecret(during.server.deps, { check: true })
        expect(pending.tables.wallet_passkeys).toEqual({ resealed: 1, current: 0, unreadable: 0 })
        await rotateSecret(during.server.deps, { batchSize: 1 })
        expect(await rotateSecret(during.server.deps, { check: true })).toMatchObject({
          resealed: 0,
          unreadable: 0,
        })
        await during.close()
        stops.pop()

        const after = await start({ LATCH_SECRET: NEW_SECRET })
        const again = await after.server.emailLogin(app.id, address0)
        await expect(
          frameDevice(after.server, app.id, passkey).recover({
            address,
            accessToken: again.token,
            recoveryMethod: 'passkey',
          }),
        ).resolves.toEqual({ address })
      } finally {
        for (const stop of stops.reverse()) await stop()
        rmSync(dir, { recursive: true, force: true })
      }
    }, 120_000)
  })
}

describe('secret rotate refusals', () => {
  test('error: without the previous secret, or with one too short, nothing runs', async () => {
    const err: string[] = []
    const io = (env: Record<string, string>) => ({
      out: () => {},
      err: (t: string) => err.push(t),
      env: { NODE_ENV: 'test', DATABASE_URL: 'memory://', LATCH_SECRET: NEW_SECRET, ...env },
    })
    expect(await runCli(['secret', 'rotate'], io({}))).toBe(2)
    expect(err.at(-1)).toMatch(/needs the old secret in LATCH_SECRET_PREVIOUS/)
    await expect(
      runCli(['secret', 'rotate'], io({ LATCH_SECRET_PREVIOUS: 'short' })),
    ).rejects.toThrow(/LATCH_SECRET_PREVIOUS must be at least 32 characters/)
    expect(await runCli(['secret', 'spin'], io({}))).toBe(2)
    expect(await runCli(['secret', 'rotate', '--batch', '0'], io({}))).toBe(2)
  })
})
