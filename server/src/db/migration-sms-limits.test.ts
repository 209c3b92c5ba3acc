import { Kysely, Migrator, sql } from 'kysely'
import { afterEach, expect, test } from 'vitest'
import { createSecrets } from '../crypto.ts'
import { blankPglite } from '../testing/global-setup.ts'
import { MIGRATIONS, migrate } from './migrations.ts'
import { pgliteDialect } from './pglite-dialect.ts'
import type { Database } from './schema.ts'

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

test('behavior: 0004_sms_limits keeps existing apps to US numbers and existing windows to an hour', async () => {
  const db = new Kysely<Database>({ dialect: pgliteDialect(blankPglite()) })
  closers.push(() => db.destroy())
  const raw = db as Kysely<unknown>
  // Every migration before this one, as a database made by an earlier version has them.
  const earlier = Object.keys(MIGRATIONS).filter((name) => name < '0004_sms_limits')
  const last = earlier.at(-1) ?? ''
  const before = new Migrator({ db: raw, provider: { getMigrations: async () => MIGRATIONS } })
  expect((await before.migrateTo(last)).error).toBeUndefined()
  const now = new Date()
  await sql`INSERT INTO apps (id, name, allowed_origins, login_methods, allowlist_entries,
    allowlist_config, appearance, legal, embedded_wallet_config, created_at, updated_at)
    VALUES ('a'::text, 'Old', '[]', '["sms"]', '[]', '{}', '{}', '{}', '{}', ${now}, ${now})`.execute(
    raw,
  )
  await sql`INSERT INTO rate_limits (key, window_start, count) VALUES ('old', ${now}, 3)`.execute(
    raw,
  )

  await migrate(raw, createSecrets('migration-test-secret-0123456789abcdef'))

  const app = await db.selectFrom('apps').select('sms_countries').executeTakeFirstOrThrow()
  expect(app.sms_countries).toEqual(['US'])
  const window = await db.selectFrom('rate_limits').selectAll().executeTakeFirstOrThrow()
  expect(window).toMatchObject({ key: 'old', count: 3, expires_at: null })
})
