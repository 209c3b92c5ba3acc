/**
 * The API under load over real HTTP: e-mail sign-in (init + authenticate) and refresh, at a
 * fixed concurrency, on PGlite (in memory and in a data folder) and on PostgreSQL (from the
 * installed binaries).
 * Refresh runs twice: on the tables the run itself filled, then once 100k rotated tokens sit in
 * refresh_tokens; the two should stay within 10 % of each other (every hot path is indexed).
 * Codes are read from the log delivery, so no mail server sits in the measurement.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { API_PREFIX, APP_ID_HEADER, CLIENT_HEADER, CLIENT_NAME } from '@latch/shared'
import { sql } from 'kysely'
import type { Db } from '../server/src/db/index.ts'
import { startServer } from '../server/src/index.ts'
import { REFRESH_COOKIE_PREFIX, refreshCookieName } from '../server/src/sessions/refresh-cookie.ts'
import { startPostgres } from '../server/src/testing/index.ts'

/** The modal origin the API is told, and whose Origin the refresh calls carry. */
const BENCH_MODAL_ORIGIN = 'http://127.0.0.1:5174'
const CONCURRENCY = 8
const LOGINS = 160
const REFRESHES = 1000
/**
 * Rounds of each sign-in and refresh run; the fastest is reported. The two refresh runs are compared with
 * each other, and on a shared machine the best round is the one least disturbed by others.
 */
const ROUNDS = 3
const SECRET = 'bench-secret-bench-secret-bench-secret-0123'
/** Rotated refresh tokens already in the table for the second refresh run. */
const EXISTING_TOKENS = 100_000
/** Tokens per filler session: a long-lived session that refreshed this often. */
const TOKENS_PER_SESSION = 100

interface Row {
  backend: string
  scenario: string
  ops: number
  seconds: number
  p50: number
  p99: number
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

async function measure(
  backend: string,
  scenario: string,
  ops: number,
  op: (i: number, worker: number) => Promise<void>,
): Promise<Row> {
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = next++; i < ops; i = next++) {
        const t = performance.now()
        await op(i, worker)
        latencies.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    backend,
    scenario,
    ops,
    seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  }
}

/**
 * Writes `count` rotated, unexpired refresh tokens (in sessions of one filler user) straight
 * into the database, as a server that has been refreshing for a while holds them.
 */
async function fillTokens(db: Db, appId: string, count: number): Promise<void> {
  const now = new Date()
  const userId = `bench-filler-${appId}`
  await db.insertInto('users').values({ id: userId, app_id: appId, created_at: now }).execute()
  const sessions = Math.ceil(count / TOKENS_PER_SESSION)
  await sql`
    INSERT INTO sessions (id, app_id, user_id, parent_id, family_id, created_at, expires_at, mac)
    SELECT 'fill-' || g, ${appId}, ${userId}, NULL, 'fill-' || g, ${now},
      ${now}::timestamptz + interval '30 days', 'filler'
    FROM generate_series(1, ${sessions}) AS g`.execute(db)
  // Filler rows: never presented, so their MACs are never checked.
  await sql`
    INSERT INTO refresh_tokens (hash, token_sha256, session_id, created_at, rotated_at, child_hash, mac)
    SELECT md5('fill-' || g), md5('sha-' || g), 'fill-' || (1 + g % ${sessions}), ${now}, ${now},
      md5('fill-' || (g + ${sessions})), 'filler'
    FROM generate_series(1, ${count}) AS g`.execute(db)
  // Vacuumed and analyzed now, so autovacuum does not take a core in the middle of the run.
  await sql`VACUUM ANALYZE refresh_tokens, sessions`.execute(db)
  // Written out now, so the run does not share the disk with a checkpoint of the fill.
  await sql`CHECKPOINT`.execute(db)
}

async function benchBackend(backend: string, databaseUrl: string, dataDir = ''): Promise<Row[]> {
  const codes = new Map<string, string>()
  const api = await startServer({
    port: 0,
    env: {
      DATABASE_URL: databaseUrl,
      LATCH_DATA_DIR: dataDir,
      LATCH_SECRET: SECRET,
      LATCH_TRUST_PROXY: '1',
      SMTP_URL: '',
      TWILIO_ACCOUNT_SID: '',
      TWILIO_AUTH_TOKEN: '',
      TWILIO_FROM: '',
      NODE_ENV: 'development',
      LATCH_MODAL_ORIGIN: BENCH_MODAL_ORIGIN,
    },
    log: (line) => {
      const m = /^\[latch\] e-mail code for (\S+): (\d{6})$/.exec(line)
      if (m?.[1] && m[2]) codes.set(m[1], m[2])
    },
  })
  try {
    const app = await api.admin.createApp({
      name: 'Bench',
      allowedOrigins: ['http://localhost:5173'],
    })
    // As the modal's credentialed fetch: a refresh token goes in the refresh cookie (with the
    // modal's Origin), and the one an answer's cookie sets comes back as `refresh_token`.
    const post = async (
      path: string,
      body: unknown,
      ip: string,
    ): Promise<Record<string, unknown>> => {
      const { refresh_token: token, ...rest } = body as { refresh_token?: string }
      const send = () =>
        fetch(`${api.url}${API_PREFIX}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [APP_ID_HEADER]: app.id,
            [CLIENT_HEADER]: CLIENT_NAME,
            // One client per operation: the per-IP budget is not what is measured.
            'x-forwarded-for': ip,
            origin: BENCH_MODAL_ORIGIN,
            ...(token ? { cookie: `${refreshCookieName(app.id)}=${token}` } : {}),
          },
          body: JSON.stringify(rest),
        })
      // A keep-alive socket the server closed while idle (the 100k fill takes longer than its
      // keep-alive timeout) fails before any answer: send once more on a new one. A refresh
      // sent twice is safe: within 10 s the same token answers the same pair.
      const res = await send().catch(send)
      const json = (await res.json()) as Record<string, unknown>
      if (res.status !== 200)
        throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`)
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith(REFRESH_COOKIE_PREFIX))
      if (cookie) json.refresh_token = cookie.slice(cookie.indexOf('=') + 1).split(';')[0]
      return json
    }
    const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
    const login = async (i: number): Promise<string> => {
      const email = `bench${i}@example.com`
      await post('/passwordless/init', { email }, ip(i))
      const code = codes.get(email)
      if (!code) throw new Error(`no code logged for ${email}`)
      const auth = await post('/passwordless/authenticate', { email, code }, ip(i))
      return auth.refresh_token as string
    }
    // Warm up (JIT, key cache, connection pool).
    for (let i = 0; i < CONCURRENCY; i++) await login(1_000_000 + i)

    const rows: Row[] = []
    // Best of three rounds, as for refresh below: one round is about a second, and on a shared
    // machine a single one mostly measures the neighbours.
    let signIns: Row | undefined
    for (let round = 0; round < ROUNDS; round++) {
      const row = await measure(backend, 'e-mail init + authenticate', LOGINS, (i) =>
        login(round * LOGINS + i).then(() => {}),
      )
      if (!signIns || row.seconds < signIns.seconds) signIns = row
    }
    rows.push(signIns as Row)
    const chains = await Promise.all(
      Array.from({ length: CONCURRENCY }, (_, w) => login(2_000_000 + w)),
    )
    const refreshes = async (scenario: string, base: number): Promise<Row> => {
      let best: Row | undefined
      for (let round = 0; round < ROUNDS; round++) {
        const offset = base + round * REFRESHES
        const row = await measure(backend, scenario, REFRESHES, async (i, worker) => {
          const answer = await post('/sessions', { refresh_token: chains[worker] }, ip(offset + i))
          chains[worker] = answer.refresh_token as string
        })
        if (!best || row.seconds < best.seconds) best = row
      }
      return best as Row
    }
    // Warm up the refresh path too, so the first measured run does not pay for the JIT.
    for (let i = 0; i < 200; i++) {
      const w = i % CONCURRENCY
      const answer = await post('/sessions', { refresh_token: chains[w] }, ip(2_500_000 + i))
      chains[w] = answer.refresh_token as string
    }
    rows.push(await refreshes('refresh (rotation)', 3_000_000))
    // The same chains again once the table holds EXISTING_TOKENS more rotated tokens: a hot
    // path that scans the table slows down here, an indexed one does not.
    await fillTokens(api.deps.db, app.id, EXISTING_TOKENS)
    rows.push(await refreshes(`refresh, ${EXISTING_TOKENS / 1000}k tokens in the table`, 5_000_000))
    return rows
  } finally {
    await api.close()
  }
}

/** `npm run bench -- server [pglite] [postgres]`: every backend, or only those named. */
export default async function run(args: string[] = []): Promise<void> {
  const only = (name: string) => args.length === 0 || args.includes(name)
  const rows: Row[] = []
  console.log(`Latch API benchmark: concurrency ${CONCURRENCY}, real HTTP on 127.0.0.1\n`)
  if (only('pglite')) {
    rows.push(...(await benchBackend('PGlite (memory)', 'memory://')))
    // The embedded default: PGlite in a data folder on disk.
    const dir = mkdtempSync(join(tmpdir(), 'latch-bench-'))
    try {
      rows.push(...(await benchBackend('PGlite (data folder)', '', dir)))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const pg = only('postgres') ? await startPostgres() : null
  if (pg) {
    try {
      rows.push(...(await benchBackend('PostgreSQL 15', await pg.createDatabase('latch_bench'))))
    } finally {
      await pg.close()
    }
  } else if (only('postgres')) {
    console.log(
      'PostgreSQL binaries not found under /usr/lib/postgresql/15/bin: PostgreSQL skipped\n',
    )
  }
  const header = ['backend', 'scenario', 'ops', 'ops/s', 'p50 ms', 'p99 ms']
  const table = rows.map((r) => [
    r.backend,
    r.scenario,
    String(r.ops),
    (r.ops / r.seconds).toFixed(1),
    r.p50.toFixed(1),
    r.p99.toFixed(1),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => (t[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`
  console.log(line(header))
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
  for (const t of table) console.log(line(t))
  console.log('')
  for (const backend of new Set(rows.map((r) => r.backend))) {
    const [empty, full] = rows
      .filter((r) => r.backend === backend && r.scenario.startsWith('refresh'))
      .map((r) => r.ops / r.seconds)
    if (empty && full) {
      console.log(
        `${backend}: refresh with ${EXISTING_TOKENS / 1000}k tokens runs at ${((100 * full) / empty).toFixed(0)} % of the empty table`,
      )
    }
  }
}
