import { createHash } from 'node:crypto'
import { Kysely, Migrator, sql } from 'kysely'
import { afterEach, expect, test } from 'vitest'
import { createSecrets } from '../crypto.ts'
import { kyselyStateStore, OAUTH_STATE_TTL_MS } from '../oauth/state-store.ts'
import { blankPglite, runBlankPgliteData } from '../testing/global-setup.ts'
import { openDatabase } from './index.ts'
import { MIGRATIONS, migrate } from './migrations.ts'
import { pgliteDialect } from './pglite-dialect.ts'
import type { Database } from './schema.ts'

const LEGACY = ['latch_oauth_migrations', 'latch_oauth_migrations_lock']

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

async function tableNames(db: Kysely<Database>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  return tables.map((t) => t.name)
}

test('behavior: opening a database creates the OAuth state table with the rest, in one migration set', async () => {
  const { db, close } = await openDatabase(
    { databaseUrl: 'memory://', dataDir: null },
    { pgliteData: runBlankPgliteData() },
  )
  closers.push(close)
  const names = await tableNames(db)
  expect(names).toEqual(expect.arrayContaining(['apps', 'sessions', 'oauth_states']))
  for (const legacy of LEGACY) expect(names).not.toContain(legacy)
  const ran = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(
    db,
  )
  expect(ran.rows.map((r) => r.name)).toEqual(Object.keys(MIGRATIONS).sort())
  expect(ran.rows.map((r) => r.name)).toContain('0002_oauth_states')
})

test('behavior: a database from the former lazy OAuth migrator keeps its table and rows, and loses that migrator’s tables; its pending flows, without a MAC, no longer finish', async () => {
  const db = new Kysely<Database>({ dialect: pgliteDialect(blankPglite()) })
  closers.push(() => db.destroy())
  const raw = db as Kysely<unknown>
  // The layout before: the main set up to 0001, and oauth_states from the OAuth feature's own
  // migrator, tracked in its own tables.
  const before = new Migrator({ db: raw, provider: { getMigrations: async () => MIGRATIONS } })
  expect((await before.migrateTo('0001_initial')).error).toBeUndefined()
  const legacy = new Migrator({
    db: raw,
    provider: {
      getMigrations: async () => ({
        '0001_oauth_states': {
          async up(d: Kysely<unknown>) {
            await sql`CREATE TABLE oauth_states (
              state_hash text PRIMARY KEY, app_id text NOT NULL, provider text NOT NULL,
              redirect_to text NOT NULL, redirect_uri text NOT NULL, code_verifier text,
              nonce text, user_id text, is_link boolean NOT NULL,
              expires_at timestamptz NOT NULL, created_at timestamptz NOT NULL)`.execute(d)
            await sql`CREATE INDEX oauth_states_expires ON oauth_states (expires_at)`.execute(d)
          },
        },
      }),
    },
    migrationTableName: 'latch_oauth_migrations',
    migrationLockTableName: 'latch_oauth_migrations_lock',
  })
  expect((await legacy.migrateToLatest()).error).toBeUndefined()
  expect(await tableNames(db)).toEqual(expect.arrayContaining(LEGACY))

  const now = new Date()
  const store = kyselyStateStore(
    { db, secrets: createSecrets('migrations-test-secret-0123456789abcdef'), log: () => {} },
    () => now,
  )
  const pending = {
    appId: 'app',
    provider: 'github' as const,
    redirectTo: 'http://localhost:5173/',
    redirectUri: 'http://127.0.0.1:8787/api/v1/oauth/callback/github',
    codeVerifier: 'v'.repeat(43),
    nonce: null,
    userId: null,
    isLink: false,
    browserHash: null,
    expiresAt: new Date(now.getTime() + OAUTH_STATE_TTL_MS),
  }
  // Written as the former store wrote it: the table has no browser_hash yet (0003 adds it).
  await db
    .insertInto('oauth_states')
    .values({
      state_hash: createHash('sha256').update('pending-state').digest('hex'),
      app_id: pending.appId,
      provider: pending.provider,
      redirect_to: pending.redirectTo,
      redirect_uri: pending.redirectUri,
      code_verifier: pending.codeVerifier,
      nonce: pending.nonce,
      user_id: pending.userId,
      is_link: pending.isLink,
      expires_at: pending.expiresAt,
      created_at: now,
    })
    .execute()

  await migrate(raw)
  await migrate(raw)

  const names = await tableNames(db)
  expect(names).toContain('oauth_states')
  for (const name of LEGACY) expect(names).not.toContain(name)
  const kept = await db
    .selectFrom('oauth_states')
    .select(['app_id', 'redirect_to', 'code_verifier', 'mac'])
    .where('state_hash', '=', createHash('sha256').update('pending-state').digest('hex'))
    .executeTakeFirst()
  expect(kept).toEqual({
    app_id: pending.appId,
    redirect_to: pending.redirectTo,
    code_verifier: pending.codeVerifier,
    mac: null,
  })
  expect(await store.take('pending-state')).toBeUndefined()
})
