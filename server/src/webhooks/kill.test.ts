/**
 * No event is lost when an API process dies after the change's commit: `latch serve` child
 * processes on one PostgreSQL. The first process commits a sign-in (and its events), starts
 * delivering them to a receiver that holds the requests open, and is killed with SIGKILL
 * mid-delivery; a second process takes the deliveries over once their lease ends and delivers
 * each event, with the same webhook-id, so the receiver processes each exactly once. The dead
 * process's leases are moved into the past in the database, as if their 20 s had run out,
 * instead of being waited out; that a live lease keeps a delivery from another process is
 * webhooks.test.ts's ('a lease keeps a delivery from a second process until it expires').
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { API_PREFIX, APP_ID_HEADER, CLIENT_HEADER, CLIENT_NAME } from '@latch/shared'
import { afterAll, expect, test } from 'vitest'
import { openServices } from '../index.ts'
import { latchCommand, REPO_ROOT } from '../testing/cli-bundle.ts'
import { postgresAvailable, type RunningPostgres, runPostgres } from '../testing/index.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { type Receiver, startReceiver } from '../testing/webhook-receiver.ts'
import { addEndpoint } from './endpoints.ts'
import { LEASE_MS } from './worker.ts'

const START_TIMEOUT_MS = 60_000

interface Child {
  url: string
  lines: string[]
  process: ChildProcess
}

const children: ChildProcess[] = []
let pg: RunningPostgres | null = null
let hook: Receiver | undefined
let frameDir = ''

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  await hook?.close()
  await pg?.close()
  if (frameDir) rmSync(frameDir, { recursive: true, force: true })
})

/** `latch serve --api-only` on a free port; resolves once it listens. */
function serve(env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, latchCommand('serve', '--api-only'), {
    cwd: REPO_ROOT,
    env: { ...env, LATCH_API_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  const lines: string[] = []
  let stderr = ''
  child.stderr?.setEncoding('utf8')
  child.stderr?.on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000)
  })
  child.stdout?.setEncoding('utf8')
  let buffered = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve did not listen in time: ${stderr}`)),
      START_TIMEOUT_MS,
    )
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`serve exited (${code ?? signal}) while starting: ${stderr}`))
    })
    child.stdout?.on('data', (d: string) => {
      buffered += d
      const parts = buffered.split('\n')
      buffered = parts.pop() ?? ''
      for (const line of parts) {
        lines.push(line)
        const url = /Latch API listening on (http:\/\/\S+)/.exec(line)?.[1]
        if (url) {
          clearTimeout(timer)
          resolve({ url, lines, process: child })
        }
      }
    })
  })
}

async function until<T>(what: string, check: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

test.skipIf(!postgresAvailable())(
  'reliability: an API process killed with SIGKILL between the commit and the delivery loses no event; another process delivers each, once per id [postgres]',
  async () => {
    pg = await runPostgres()
    if (!pg) throw new Error('PostgreSQL did not start')
    frameDir = mkdtempSync(join(tmpdir(), 'latch-kill-frame-'))
    for (const page of ['index.html', 'export.html']) writeFileSync(join(frameDir, page), '')
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      DATABASE_URL: await pg.createDatabase(),
      LATCH_SECRET: TEST_SECRET,
      LATCH_API_HOST: '127.0.0.1',
      LATCH_WALLET_FRAME_DIR: frameDir,
      SMTP_URL: '',
      LATCH_PRICE_URL: '',
    }
    hook = await startReceiver()
    // Held open: the first process is mid-delivery when it dies.
    let answering = false
    const held: (() => void)[] = []
    hook.answer = (_req, res) => {
      if (answering) res.writeHead(200).end()
      else held.push(() => res.destroy())
    }
    const services = await openServices({ env, log: () => {} })
    const app = await services.admin.createApp({
      name: 'Kill',
      allowedOrigins: ['http://localhost:5173'],
      loginMethods: ['email'],
    })
    const { db } = services.deps
    await addEndpoint(services.deps, app.id, { url: hook.url })

    const first = await serve(env)
    const email = 'killed@example.com'
    const headers = {
      'content-type': 'application/json',
      [APP_ID_HEADER]: app.id,
      [CLIENT_HEADER]: CLIENT_NAME,
    }
    const call = (path: string, body: unknown) =>
      fetch(`${first.url}${API_PREFIX}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      })
    expect((await call('/passwordless/init', { email })).status).toBe(200)
    const code = await until(
      'the code',
      () =>
        first.lines
          .map((l) => /e-mail code for \S+: (\d{6})/.exec(l)?.[1])
          .find((c) => c !== undefined),
      10_000,
    )
    const signIn = await call('/passwordless/authenticate', { email, code })
    expect(signIn.status).toBe(200)
    // Committed: user.created and user.authenticated are in the outbox.
    const events = await db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'event_type'])
      .where('app_id', '=', app.id)
      .execute()
    expect(events.map((e) => e.event_type).sort()).toEqual(['user.authenticated', 'user.created'])
    // The first process leases both and sends them; the receiver holds them; then it dies.
    await hook.waitFor(2, 15_000)
    const leased = await db
      .selectFrom('webhook_deliveries')
      .select(['status', 'lease_owner', 'lease_until'])
      .where('app_id', '=', app.id)
      .execute()
    expect(leased.every((d) => d.status === 'pending' && d.lease_owner !== null)).toBe(true)
    const killedAt = Date.now()
    // Leased for LEASE_MS from the send: without the move below, another process would wait
    // most of it out.
    for (const d of leased) {
      expect(new Date(d.lease_until ?? 0).getTime()).toBeGreaterThan(killedAt + LEASE_MS / 2)
    }
    first.process.kill('SIGKILL')
    await new Promise((r) => first.process.once('exit', r))
    for (const cut of held) cut()
    answering = true

    // Another process takes over once the dead one's leases end: moved into the past here.
    const second = await serve(env)
    await db
      .updateTable('webhook_deliveries')
      .set({ lease_until: new Date(Date.now() - 1_000) })
      .where('app_id', '=', app.id)
      .where('lease_owner', 'is not', null)
      .execute()
    await until(
      'the second delivery of both events',
      () => (hook && hook.received.length >= 4 ? true : undefined),
      30_000,
    )
    // The second process records its attempts once the answers came.
    let finished: { event_id: string; status: string; attempts: number }[] = []
    for (let i = 0; i < 200; i++) {
      finished = await db
        .selectFrom('webhook_deliveries')
        .select(['event_id', 'status', 'attempts'])
        .where('app_id', '=', app.id)
        .execute()
      if (finished.every((d) => d.status === 'delivered')) break
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(finished.map((d) => [d.status, d.attempts])).toEqual([
      ['delivered', 2],
      ['delivered', 2],
    ])
    // Each event arrived twice (the cut request and the retry) with the same id: processed
    // once per id, both events.
    const ids = hook.received.map((r) => String(r.headers['webhook-id']))
    expect(new Set(ids)).toEqual(new Set(events.map((e) => e.event_id)))
    expect(ids).toHaveLength(4)
    second.process.kill('SIGTERM')
    await services.close()
  },
  180_000,
)
