/**
 * A connection PostgreSQL ends while a request holds it (pg_terminate_backend here; a restart
 * or a failover alike): the statement fails as the database out of reach, the process goes on
 * (an unhandled 'error' event would end it, and fail this run), the loss is counted, and the
 * next statement runs on a new connection.
 */
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, expect, test } from 'vitest'
import {
  MIGRATED_TEMPLATE,
  postgresAvailable,
  RUN_POSTGRES_ENV,
  type RunningPostgres,
  runPostgres,
} from '../testing/postgres.ts'
import { openDatabase } from './index.ts'
import { databaseUnavailable } from './unavailable.ts'

let postgres: RunningPostgres | null = null
afterAll(async () => {
  await postgres?.close()
})

test.skipIf(!postgresAvailable())(
  'reliability: a connection terminated mid-transaction fails its statement as the database out of reach, is counted, and the next statement succeeds',
  async () => {
    postgres = await runPostgres()
    if (!postgres) throw new Error('PostgreSQL did not start')
    const url = process.env[RUN_POSTGRES_ENV]
      ? await postgres.createDatabase(undefined, MIGRATED_TEMPLATE)
      : await postgres.createDatabase()
    const database = await openDatabase({
      databaseUrl: url,
      dataDir: null,
      postgres: { poolMax: 2, statementTimeoutMs: 0, poolWaitMs: 1_000, poolQueueMax: 10 },
    })
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      // A transaction between its statements, and one in the middle of a statement.
      const between = database.db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx)
        await new Promise((r) => setTimeout(r, 600))
        await sql`SELECT 2`.execute(trx)
      })
      const during = sql`SELECT pg_sleep(5)`.execute(database.db)
      // Handled from the start: they fail as soon as the backends end, which may be before the
      // terminating query answers.
      const settled = Promise.allSettled([between, during])
      await new Promise((r) => setTimeout(r, 300))
      const ended = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )
      expect(ended.rowCount).toBeGreaterThanOrEqual(2)
      const failures = await settled
      for (const f of failures) {
        expect(f.status).toBe('rejected')
        if (f.status === 'rejected') expect(databaseUnavailable(f.reason)).toBe('lost')
      }
      expect(database.poolStats?.().lost).toBeGreaterThanOrEqual(2)
      const again = await sql<{ n: number }>`SELECT 3 AS n`.execute(database.db)
      expect(again.rows[0]?.n).toBe(3)
    } finally {
      await admin.end()
      await database.close()
    }
  },
  30_000,
)
