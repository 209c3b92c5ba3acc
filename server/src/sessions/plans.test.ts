/**
 * Every statement of the hot paths (e-mail sign-in, refresh, fork and recover, logout, the
 * bearer liveness check, the wallet frame's share lookups, a wallet's SIWE sign-in) uses an index on PostgreSQL once
 * the tables have grown.
 *
 * The tables are filled with tens of thousands of rows and analyzed rather than running with
 * `enable_seqscan = off`: that setting only proves an index exists, while a filled table shows
 * the planner actually picks it for the statement as written (a condition it cannot match to
 * an index, or a wrong column order, still scans here).
 */
import type { AuthResponse, ForkResponse, RefreshResponse } from '@latch/shared'
import {
  API_PREFIX,
  APP_ID_HEADER,
  CLIENT_HEADER,
  CLIENT_NAME,
  SIWE_STATEMENT,
} from '@latch/shared'
import { type CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createApi } from '../api.ts'
import type { Database } from '../db/schema.ts'
import { postgresAvailable, type RunningPostgres, runPostgres } from '../testing/index.ts'
import { startTestServer, type TestServer } from '../testing/test-server.ts'

/** Tables that grow with users and use; apps and signing keys stay a handful of rows. */
const GROWING = new Set([
  'users',
  'linked_accounts',
  'sessions',
  'refresh_tokens',
  'verification_codes',
  'rate_limits',
  'fork_tokens',
  'analytics_events',
  'oauth_states',
  'wallets',
  'siwe_nonces',
])
const ROWS = 50_000

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  Plans?: PlanNode[]
}

function seqScans(node: PlanNode): string[] {
  const own =
    node['Node Type'] === 'Seq Scan' && node['Relation Name'] ? [node['Relation Name']] : []
  return [...own, ...(node.Plans ?? []).flatMap(seqScans)]
}

describe.skipIf(!postgresAvailable())('hot-path plans [postgres]', () => {
  let postgres: RunningPostgres | null = null
  let server: TestServer
  let closeServer: () => Promise<void>
  let logged: Kysely<Database>
  let databaseUrl = ''
  const captured: CompiledQuery[] = []

  beforeAll(async () => {
    postgres = await runPostgres()
    if (!postgres) throw new Error('PostgreSQL did not start')
    const url = await postgres.createDatabase()
    databaseUrl = url
    const started = await startTestServer('postgres', url)
    server = started.server
    closeServer = started.close
    // The same database through a Kysely that records every statement it sends.
    const pool = new pg.Pool({ connectionString: url, max: 4 })
    // The server's shutdown at the end may reach a connection still closing: not a failure.
    pool.on('error', () => {})
    logged = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === 'query') captured.push(event.query)
      },
    })
  }, 120_000)

  afterAll(async () => {
    await logged?.destroy()
    await closeServer?.()
    await postgres?.close()
  })

  test('behavior: sign-in, refresh, fork, recover, logout and the liveness check and wallet-share lookups scan no growing table; a refresh is two statements', async () => {
    const db = server.deps.db
    const app = await server.newApp()
    const now = new Date()
    // A server that has been used: users with accounts, sessions with rotated tokens, codes,
    // rate-limit windows and fork tokens.
    await sql`INSERT INTO users (id, app_id, created_at)
      SELECT 'fill-' || g, ${app.id}, ${now} FROM generate_series(1, ${ROWS}) g`.execute(db)
    // Filler rows: their MACs are never checked here, only the plans that find them.
    await sql`INSERT INTO linked_accounts (id, app_id, user_id, type, identifier, data, mac,
        created_at)
      SELECT 'fill-' || g, ${app.id}, 'fill-' || g, 'email', 'fill' || g || '@example.com', '{}',
        'filler', ${now} FROM generate_series(1, ${ROWS}) g`.execute(db)
    await sql`INSERT INTO sessions (id, app_id, user_id, parent_id, family_id, created_at,
        expires_at, mac)
      SELECT 'fill-' || g, ${app.id}, 'fill-' || g, NULL, 'fill-' || g, ${now},
        ${now}::timestamptz + interval '30 days', 'filler' FROM generate_series(1, ${ROWS}) g`.execute(
      db,
    )
    await sql`INSERT INTO refresh_tokens (hash, token_sha256, session_id, created_at, rotated_at,
        child_hash, mac)
      SELECT md5('t' || g), md5('s' || g), 'fill-' || (1 + g % ${ROWS}), ${now}, ${now},
        md5('t' || (g + ${ROWS})), 'filler'
      FROM generate_series(1, ${2 * ROWS}) g`.execute(db)
    await sql`INSERT INTO verification_codes (app_id, channel, identifier, code_hmac, created_at,
        expires_at) SELECT ${app.id}, 'email', 'fill' || g || '@example.com', md5('c' || g),
        ${now}, ${now}::timestamptz + interval '10 minutes'
      FROM generate_series(1, ${ROWS}) g`.execute(db)
    await sql`INSERT INTO rate_limits (key, window_start, count)
      SELECT 'fill:' || g, ${now}, 1 FROM generate_series(1, ${ROWS}) g`.execute(db)
    await sql`INSERT INTO fork_tokens (hash, app_id, session_id, created_at, expires_at)
      SELECT md5('f' || g), ${app.id}, 'fill-' || g, ${now}, ${now}::timestamptz + interval '1 minute'
      FROM generate_series(1, ${ROWS / 10}) g`.execute(db)
    await sql`INSERT INTO wallets (id, app_id, user_id, address, chain_id, recovery_method,
        auth_share_sealed, recovery_sealed, created_at)
      SELECT 'fill-' || g, ${app.id}, 'fill-' || g, '0x' || lpad(to_hex(g), 40, '0'), '1',
        'latch', 'sealed', 'sealed', ${now} FROM generate_series(1, ${ROWS}) g`.execute(db)
    await sql`INSERT INTO siwe_nonces (nonce_hash, app_id, address, expires_at, created_at)
      SELECT md5('n' || g), ${app.id}, '0x' || lpad(to_hex(g), 40, '0'),
        ${now}::timestamptz + interval '10 minutes', ${now} FROM generate_series(1, ${ROWS}) g`.execute(
      db,
    )
    await sql`ANALYZE`.execute(db)

    const api = createApi({ ...server.deps, db: logged })
    // The browser's cookie jar: the wallet credentials and refresh cookie the sign-ins set, sent
    // back on every request as the modal's credentialed fetch does (with its Origin, and the
    // wallet frame's fetch metadata on the wallet routes).
    const jar = new Map<string, string>()
    const post = async <T>(path: string, body: unknown, token?: string): Promise<T> => {
      const frame = path.startsWith('/wallets')
      const res = await api.request(`${API_PREFIX}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [APP_ID_HEADER]: app.id,
          [CLIENT_HEADER]: CLIENT_NAME,
          'x-forwarded-for': '10.99.0.1',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
          ...(frame
            ? { 'sec-fetch-site': 'same-origin' }
            : { origin: server.deps.config.modalOrigin ?? '' }),
        },
        body: JSON.stringify(body),
      })
      for (const set of res.headers.getSetCookie()) {
        const pair = set.split(';')[0] ?? ''
        const eq = pair.indexOf('=')
        if (eq > 0) jar.set(pair.slice(0, eq), pair.slice(eq + 1))
      }
      const text = await res.text()
      if (res.status !== 200 && res.status !== 404)
        throw new Error(`${path}: ${res.status} ${text}`)
      return JSON.parse(text) as T
    }
    const signIn = async (email: string): Promise<AuthResponse> => {
      await post('/passwordless/init', { email })
      const code = await server.smtp.waitForCode(email, { timeoutMs: 10_000 })
      return post<AuthResponse>('/passwordless/authenticate', { email, code })
    }

    // A first sign-in (new user), a returning one, a refresh, a fork and its recovery, the
    // bearer check of an authenticated route, and logout.
    const email = 'plans@example.com'
    await signIn(email)
    server.clock.advance(61_000) // past the resend interval
    const signInMark = captured.length
    await signIn(email)
    // A returning user's e-mail sign-in. Init: the IP's window, the day's wrong codes, the
    // hour's sends, the code (no transaction). Authenticate: the IP's window and a try taken
    // from the day's budget in one statement, the code checked, consumed and the try given back
    // in one more, then the account, the user and the session (it was sixteen).
    expect(captured.slice(signInMark).map((q) => q.sql.trim().slice(0, 11).toLowerCase())).toEqual([
      'insert into',
      'select "cou',
      'insert into',
      'insert into',
      'insert into',
      'with tried ',
      'update "lin',
      'select "u".',
      'with "sessi',
    ])
    const mark = captured.length
    await post<RefreshResponse>('/sessions', {})
    // A refresh is two round trips: the rotation and the user (it was nine); the app comes from
    // the cache the sign-in filled.
    expect(captured.slice(mark).map((q) => q.sql.trim().slice(0, 11).toLowerCase())).toEqual([
      'with rotate',
      'select "u".',
    ])
    const fork = await post<ForkResponse>('/sessions/fork', {})
    await post('/sessions/fork/recover', { refresh_token: fork.new_session_refresh_token })
    await post('/passwordless/unlink', { address: 'nobody@example.com' }, fork.token)
    // The wallet frame's share lookups (another user's wallet: the same lookup, answered 404).
    const someoneElses = `0x${'7'.padStart(40, '0')}`
    await post('/wallets/info', { address: someoneElses }, fork.token)
    await post('/wallets/shares', { address: someoneElses }, fork.token)
    // A wallet's sign-in (SIWE): its nonce, then the nonce used up and the account.
    const wallet = privateKeyToAccount(generatePrivateKey())
    const { nonce } = await post<{ nonce: string }>('/siwe/init', { address: wallet.address })
    const message = createSiweMessage({
      domain: 'localhost:5173',
      uri: 'http://localhost:5173',
      address: wallet.address,
      statement: SIWE_STATEMENT,
      version: '1',
      chainId: 1,
      nonce,
      issuedAt: server.clock.now(),
    })
    await post('/siwe/authenticate', {
      message,
      signature: await wallet.signMessage({ message }),
      chainId: 1,
      walletClientType: 'metamask',
      connectorType: 'injected',
    })
    await post('/sessions/logout', {})

    const statements = captured.filter((q) =>
      /^\s*(select|insert|update|delete|with)\b/i.test(q.sql),
    )
    expect(statements.length).toBeGreaterThan(10)
    // The wallet requests reached their lookup (a 404 of an unmounted route would not).
    expect(statements.filter((q) => q.sql.includes('from "wallets"')).length).toBeGreaterThan(1)
    expect(statements.filter((q) => q.sql.includes('"siwe_nonces"'))).toHaveLength(2)
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      const scans: { sql: string; tables: string[] }[] = []
      for (const q of statements) {
        const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          `EXPLAIN (FORMAT JSON) ${q.sql}`,
          q.parameters as unknown[],
        )
        const plan = rows[0]?.['QUERY PLAN'][0]?.Plan
        if (!plan) throw new Error(`no plan for ${q.sql}`)
        const tables = seqScans(plan).filter((t) => GROWING.has(t))
        if (tables.length > 0) scans.push({ sql: q.sql, tables })
      }
      expect(scans).toEqual([])
    } finally {
      await client.end()
    }
  }, 180_000)
})
