import { createHash } from 'node:crypto'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createSecrets } from '../crypto.ts'
import { type Database, type Db, openDatabase } from '../db/index.ts'
import { migrate } from '../db/migrations.ts'
import { runBlankPgliteData } from '../testing/global-setup.ts'
import { type RunningPostgres, runPostgres } from '../testing/index.ts'
import {
  kyselyStateStore,
  OAUTH_STATE_TTL_MS,
  type OAuthStateRecord,
  type OAuthStateStore,
} from './state-store.ts'

let postgres: RunningPostgres | null = null
const open: Db[] = []
const closers: (() => Promise<void>)[] = []

beforeAll(async () => {
  postgres = await runPostgres()
}, 60_000)

afterAll(async () => {
  for (const close of closers) await close()
  await postgres?.close()
})

const SECRET = 'oauth-state-store-test-secret-0123456789abcdef'
const logs: string[] = []
const log = (line: string) => logs.push(line)

const databases = [
  {
    name: 'PGlite',
    // The server's own PGlite database (one process only, so migrations run one at a time).
    concurrentMigrations: false,
    async open() {
      const { db, close } = await openDatabase(
        { databaseUrl: 'memory://', dataDir: null },
        // The run's blank cluster: the migrations run here, without a cluster's creation.
        { pgliteData: runBlankPgliteData() },
      )
      closers.push(close)
      return db
    },
  },
  {
    name: 'PostgreSQL',
    concurrentMigrations: true,
    async open() {
      if (!postgres) return null
      const pool = new pg.Pool({ connectionString: await postgres.createDatabase(), max: 8 })
      // Idle clients see the server stop at the end; that is not a failure.
      pool.on('error', () => {})
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
      closers.push(() => db.destroy())
      return db
    },
  },
]

describe.each(databases)('the state store on $name', (database) => {
  let store: OAuthStateStore | null = null
  let now = new Date('2026-01-01T00:00:00Z')

  beforeAll(async () => {
    const db = await database.open()
    if (!db) {
      console.warn('PostgreSQL binaries are absent: the PostgreSQL state store tests are skipped')
      return
    }
    open.push(db)
    const migrateAll = () => migrate(db as Kysely<unknown>)
    // Twice: the migrations are idempotent, and on PostgreSQL safe from several processes at once.
    if (database.concurrentMigrations) await Promise.all([migrateAll(), migrateAll()])
    else await migrateAll().then(migrateAll)
    store = kyselyStateStore({ db, secrets: createSecrets(SECRET), log }, () => now)
  })

  const record = (): OAuthStateRecord => ({
    appId: 'app',
    provider: 'google',
    redirectTo: 'http://localhost:5173/',
    redirectUri: 'http://127.0.0.1:8787/api/v1/oauth/callback/google',
    codeVerifier: 'v'.repeat(43),
    nonce: 'n',
    userId: null,
    isLink: false,
    browserHash: 'h'.repeat(43),
    expiresAt: new Date(now.getTime() + OAUTH_STATE_TTL_MS),
  })

  test('behavior: peek leaves the state, take uses it up', async ({ skip }) => {
    if (!store) return skip()
    await store.put('state-1', record())
    expect(await store.peek('state-1')).toEqual(record())
    expect(await store.take('state-1')).toEqual(record())
    expect(await store.take('state-1')).toBeUndefined()
    expect(await store.peek('state-1')).toBeUndefined()
  })

  test('behavior: of parallel takes of one state, exactly one wins', async ({ skip }) => {
    if (!store) return skip()
    const s = store
    await s.put('state-race', record())
    const results = await Promise.all(Array.from({ length: 8 }, () => s.take('state-race')))
    expect(results.filter((r) => r !== undefined)).toHaveLength(1)
  })

  test('behavior: a state lives 10 minutes', async ({ skip }) => {
    if (!store) return skip()
    await store.put('state-old', record())
    await store.put('state-edge', record())
    now = new Date(now.getTime() + OAUTH_STATE_TTL_MS - 1)
    expect(await store.take('state-edge')).toBeDefined()
    now = new Date(now.getTime() + 1)
    expect(await store.peek('state-old')).toBeUndefined()
    expect(await store.take('state-old')).toBeUndefined()
  })

  test('security: a row changed, or moved to another state, by a database writer without the secret is no flow, and the refusal is logged', async ({
    skip,
  }) => {
    if (!store) return skip()
    const db = open.at(-1) as Db
    const changes = {
      app_id: 'other-app',
      provider: 'github',
      redirect_to: 'https://evil.example/catch',
      redirect_uri: 'https://evil.example/callback',
      code_verifier: 'w'.repeat(43),
      nonce: 'm',
      user_id: 'someone',
      is_link: true,
      browser_hash: 'x'.repeat(43),
      expires_at: new Date(now.getTime() + 2 * OAUTH_STATE_TTL_MS),
    }
    for (const [column, value] of Object.entries(changes)) {
      const state = `state-changed-${column}`
      await store.put(state, record())
      await db
        .updateTable('oauth_states')
        .set({ [column]: value })
        .where('state_hash', '=', createHash('sha256').update(state).digest('hex'))
        .execute()
      logs.length = 0
      expect(await store.peek(state), column).toBeUndefined()
      expect(await store.take(state), column).toBeUndefined()
      expect(logs.join('\n'), column).toContain('refused oauth state')
    }
    // A genuine row moved under the hash of a state the writer chose.
    await store.put('state-genuine', record())
    await db
      .updateTable('oauth_states')
      .set({ state_hash: createHash('sha256').update('state-chosen').digest('hex') })
      .where('state_hash', '=', createHash('sha256').update('state-genuine').digest('hex'))
      .execute()
    expect(await store.take('state-chosen')).toBeUndefined()
    // A row without a MAC (a flow pending from before the MAC existed) is no flow either.
    await store.put('state-unsealed', record())
    await db
      .updateTable('oauth_states')
      .set({ mac: null })
      .where('state_hash', '=', createHash('sha256').update('state-unsealed').digest('hex'))
      .execute()
    expect(await store.take('state-unsealed')).toBeUndefined()
  })

  test('behavior: a flow stored before a secret rotation still finishes while the previous secret is kept', async ({
    skip,
  }) => {
    if (!store) return skip()
    const db = open.at(-1) as Db
    await store.put('state-rotated', record())
    const rotated = kyselyStateStore(
      { db, secrets: createSecrets(`${SECRET}-next`, SECRET), log },
      () => now,
    )
    expect(await rotated.take('state-rotated')).toEqual(record())
    await store.put('state-forgotten', record())
    const forgotten = kyselyStateStore(
      { db, secrets: createSecrets(`${SECRET}-next`), log },
      () => now,
    )
    expect(await forgotten.take('state-forgotten')).toBeUndefined()
  })

  test('behavior: the state itself is not stored, only its hash', async ({ skip }) => {
    if (!store) return skip()
    const db = open.at(-1) as Db
    await store.put('plain-state-value', record())
    const rows = await db.selectFrom('oauth_states').select('state_hash').execute()
    expect(rows.some((r) => r.state_hash === 'plain-state-value')).toBe(false)
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.state_hash))).toBe(true)
  })
})
