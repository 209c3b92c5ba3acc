/**
 * Overload on PostgreSQL: more requests than the pool serves, with the database slow (one of
 * two connections held by a long statement). The pool's bound sheds the excess at once with
 * 503 and Retry-After, counted in the metrics, instead of queueing every request behind it
 * (and failing the late ones with a 500 after pg's connection timeout). Nothing answered is
 * lost: a refresh shed by the bound and sent again with its id goes through.
 */
import { randomBytes } from 'node:crypto'
import { REFRESH_ID_HEADER, type RefreshResponse } from '@latch/shared'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, test } from 'vitest'
import {
  MIGRATED_TEMPLATE,
  postgresAvailable,
  RUN_POSTGRES_ENV,
  type RunningPostgres,
  runPostgres,
} from '../testing/postgres.ts'
import { startTestServer, type TestServer } from '../testing/test-server.ts'

const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789'
const WAIT_MS = 250
const QUEUE_MAX = 8

let pg: RunningPostgres | null = null
let s: TestServer | undefined
let close: (() => Promise<void>) | undefined
beforeAll(async () => {
  if (!postgresAvailable()) return
  pg = await runPostgres()
  if (!pg) return
  const url = process.env[RUN_POSTGRES_ENV]
    ? await pg.createDatabase(undefined, MIGRATED_TEMPLATE)
    : await pg.createDatabase()
  const started = await startTestServer('postgres', url, {
    LATCH_PG_POOL_MAX: '2',
    LATCH_PG_POOL_WAIT_MS: String(WAIT_MS),
    LATCH_PG_POOL_QUEUE_MAX: String(QUEUE_MAX),
    LATCH_METRICS: '1',
    LATCH_METRICS_TOKEN: METRICS_TOKEN,
  })
  s = started.server
  close = started.close
}, 60_000)
afterAll(async () => {
  await close?.()
  await pg?.close()
})

const newId = () => randomBytes(16).toString('base64url')

function counter(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line ? Number(line.slice(name.length + 1)) : 0
}

test.skipIf(!postgresAvailable())(
  'reliability: a saturating load on a slow database gets 503 with Retry-After at once, never a 500; the shed requests are counted and a shed refresh sent again goes through',
  async () => {
    if (!s) throw new Error('the test server did not start')
    const server = s
    const app = await server.newApp()
    const signedIn = await Promise.all(
      Array.from({ length: 6 }, (_, n) =>
        server.emailLogin(app.id, `overload.${n}.${Date.now()}@example.com`),
      ),
    )
    const before = counter(
      (await server.deps.metrics?.registry.metrics()) ?? '',
      'latch_db_pool_shed_total',
    )

    // The slow database: one of the two connections busy for 5 s.
    let slowEnded = Number.POSITIVE_INFINITY
    const slow = sql`SELECT pg_sleep(5)`.execute(server.deps.db).then(() => {
      slowEnded = performance.now()
    })
    await new Promise((r) => setTimeout(r, 100))
    // 200 refreshes at once: unknown tokens (two statements each, answered 401) and the six
    // real sessions among them, each with its Latch-Refresh-Id.
    const ids = signedIn.map(() => newId())
    const timed = async <T>(send: () => Promise<T>) => {
      const answer = await send()
      return { answer, at: performance.now() }
    }
    const strangers = Array.from({ length: 194 }, () =>
      timed(() =>
        server.request('/sessions', {
          appId: app.id,
          body: { refresh_token: randomBytes(32).toString('base64url') },
        }),
      ),
    )
    const owners = signedIn.map((auth, k) =>
      timed(() =>
        server.request<RefreshResponse>('/sessions', {
          appId: app.id,
          body: { refresh_token: auth.refresh_token },
          headers: { [REFRESH_ID_HEADER]: ids[k] ?? '' },
        }),
      ),
    )
    const answers = await Promise.all([...strangers, ...owners])
    await slow

    const statuses = answers.map((a) => a.answer.status)
    const shed = answers.filter((a) => a.answer.status === 503)
    // Only the two answers the load may get: refused as unknown, or shed.
    expect(new Set(statuses.filter((x) => x !== 401 && x !== 200 && x !== 503))).toEqual(new Set())
    expect(shed.length).toBeGreaterThan(50)
    for (const a of shed) {
      expect(a.answer.body).toMatchObject({ error: { code: 'service_unavailable' } })
      expect(a.answer.headers.get('retry-after')).toBe('1')
    }
    // Shed at once or after the bound, not queued behind the slow statement: every shed answer
    // arrived while it still ran. (The bound's own length is the bench's to measure: this
    // machine's load makes any figure here a guess.)
    const lastShed = Math.max(...shed.map((a) => a.at))
    expect(lastShed).toBeLessThan(slowEnded)
    // Counted.
    const after = counter(
      (await server.deps.metrics?.registry.metrics()) ?? '',
      'latch_db_pool_shed_total',
    )
    expect(after - before).toBeGreaterThanOrEqual(shed.length)

    // Each owner's refresh, sent again with its id where it was shed, goes through; none was
    // signed out by the overload.
    for (const [k, auth] of signedIn.entries()) {
      const first = (await owners[k])?.answer
      if (first?.status === 200) continue
      const again = await server.request<RefreshResponse>('/sessions', {
        appId: app.id,
        body: { refresh_token: auth.refresh_token },
        headers: { [REFRESH_ID_HEADER]: ids[k] ?? '' },
      })
      expect(again.status).toBe(200)
    }
  },
  60_000,
)
