/**
 * The test run's lender of in-memory databases: a database comes back as a fresh load of the
 * migrated dump would be, or not at all.
 */
import type { PGlite } from '@electric-sql/pglite'
import { sql } from 'kysely'
import { describe, expect, test } from 'vitest'
import { openDatabase } from '../db/index.ts'
import { runPgliteData } from './global-setup.ts'
import { pglitePool } from './pglite-pool.ts'

function migratedDump(): Blob {
  const data = runPgliteData()
  if (!data) throw new Error('the run has no migrated PGlite dump (global-setup.ts)')
  return data
}

/** A row of a table with an identity column; answers the id it was given. */
async function event(client: PGlite): Promise<number | undefined> {
  const { rows } = await client.query<{ id: number }>(EVENT)
  return rows[0]?.id
}

const EVENT = `INSERT INTO analytics_events (app_id, event_name, client_id, payload, created_at)
  VALUES ('app-1', 'opened', 'client-1', '{}', now()) RETURNING id`

async function count(client: PGlite, table: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)
  return rows[0]?.n ?? -1
}

describe('pglitePool', () => {
  test('behavior: a database handed back is lent again emptied, its identities restarted', async () => {
    const pool = pglitePool(migratedDump())
    const first = await pool.open()
    expect(await event(first)).toBe(1)
    expect(await event(first)).toBe(2)
    await pool.close(first)

    const again = await pool.open()
    expect(again).toBe(first)
    expect(await count(again, 'analytics_events')).toBe(0)
    expect(await event(again)).toBe(1)
    // The migrations stay applied.
    expect(await count(again, 'kysely_migration')).toBeGreaterThan(0)
    await pool.close(again)
  }, 60_000)

  test('behavior: servers that overlap get databases of their own', async () => {
    const pool = pglitePool(migratedDump())
    const a = await pool.open()
    const b = await pool.open()
    expect(a).not.toBe(b)
    await event(a)
    expect(await count(b, 'analytics_events')).toBe(0)
    await pool.close(a)
    await pool.close(b)
  }, 60_000)

  test('error: a database whose schema was changed is closed, not lent again', async () => {
    const pool = pglitePool(migratedDump())
    const altered = await pool.open()
    await altered.exec('ALTER TABLE apps ADD COLUMN extra text')
    await pool.close(altered)
    expect(altered.closed).toBe(true)

    const next = await pool.open()
    expect(next).not.toBe(altered)
    const { rows } = await next.query(
      `SELECT 1 FROM information_schema.columns WHERE table_name = 'apps' AND column_name = 'extra'`,
    )
    expect(rows).toEqual([])
    await pool.close(next)
  }, 60_000)

  test('error: a database closed by its test is not lent again', async () => {
    const pool = pglitePool(migratedDump())
    const lost = await pool.open()
    await lost.close()
    await pool.close(lost)
    const next = await pool.open()
    expect(next).not.toBe(lost)
    expect(next.closed).toBe(false)
    await pool.close(next)
  }, 60_000)

  test('behavior: a transaction left open, even a failed one, is undone and the database lent again', async () => {
    const pool = pglitePool(migratedDump())
    const client = await pool.open()
    await client.exec('BEGIN')
    await event(client)
    await expect(client.exec('SELECT * FROM no_such_table')).rejects.toThrow()
    await pool.close(client)
    const again = await pool.open()
    expect(again).toBe(client)
    expect(again.isInTransaction()).toBe(false)
    expect(await count(again, 'analytics_events')).toBe(0)
    await pool.close(again)
  }, 60_000)

  test('behavior: a server closed while a transaction holds its database hands it back after that transaction, and reaches it no more', async () => {
    const pool = pglitePool(migratedDump())
    const database = await openDatabase(
      { databaseUrl: 'memory://', dataDir: null },
      { pglite: pool },
    )
    let finish = () => {}
    const holding = new Promise<void>((resolve) => {
      finish = resolve
    })
    let began = () => {}
    const inside = new Promise<void>((resolve) => {
      began = resolve
    })
    const transaction = database.db.transaction().execute(async (tx) => {
      await sql.raw(EVENT).execute(tx)
      began()
      await holding
    })
    await inside
    let closed = false
    const closing = database.close().then(() => {
      closed = true
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(closed).toBe(false)
    finish()
    await transaction
    await closing

    await expect(sql`SELECT 1`.execute(database.db)).rejects.toThrow(/destroyed/)
    const next = await pool.open()
    expect(await count(next, 'analytics_events')).toBe(0)
    await pool.close(next)
  }, 60_000)
})
