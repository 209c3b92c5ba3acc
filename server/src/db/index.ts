/** Opens the database the configuration names and runs the migrations. */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import type { Config } from '../config.ts'
import type { Secrets } from '../crypto.ts'
import { acquireLock } from './lock.ts'
import { migrate } from './migrations.ts'
import { pgliteDialect } from './pglite-dialect.ts'
import type { Database, Db } from './schema.ts'

export type { Database, Db } from './schema.ts'
export { json } from './schema.ts'

export interface OpenDatabase {
  db: Db
  kind: 'pglite' | 'postgres'
  close(): Promise<void>
  /** PostgreSQL: the request pool's connections now (the metrics read them). */
  poolStats?: () => { total: number; idle: number; waiting: number }
}

export interface OpenOptions {
  /**
   * Bring the schema up to date before answering (the default). `latch serve` opens without,
   * unless told to migrate, and refuses to start on a schema that is not current.
   */
  migrate?: boolean
  /**
   * An in-memory PGlite starts from this data folder (`dumpDataDir()` of a migrated database)
   * instead of an empty one: the test servers' template, made once per run.
   */
  pgliteData?: Blob
  /** The server secret's keys: a migration that gives existing rows a MAC seals them with it. */
  secrets?: Secrets
}

/** PostgreSQL when DATABASE_URL is a postgres URL, PGlite in memory for 'memory://', else PGlite in the data folder. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'postgres'>>,
  options: OpenOptions = {},
): Promise<OpenDatabase> {
  const url = config.databaseUrl
  const runMigrations = options.migrate ?? true
  if (url && !url.startsWith('memory:')) {
    const settings = config.postgres
    let lastPool: pg.Pool | undefined
    const poolFor = (max: number, statementTimeoutMs: number) => {
      const pool = new pg.Pool({
        connectionString: url,
        max,
        // An unreachable server is an error within seconds, not a hang.
        connectionTimeoutMillis: 10_000,
        // 0 leaves PostgreSQL's own setting (none by default).
        ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
      })
      // An idle client's network error must not take the process down.
      pool.on('error', () => {})
      lastPool = pool
      return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    }
    const where = new URL(url).host
    if (runMigrations) {
      // Migrations get a connection of their own without the statement timeout: rewriting a
      // large table may rightly take longer than any request should.
      const migrator = poolFor(1, 0)
      try {
        await migrate(migrator as Kysely<unknown>, options.secrets ?? null)
      } catch (e) {
        throw new Error(
          `Cannot open the PostgreSQL database at ${where}: ${(e as Error).message}`,
          {
            cause: e,
          },
        )
      } finally {
        await migrator.destroy()
      }
    }
    const db = poolFor(settings?.poolMax ?? 10, settings?.statementTimeoutMs ?? 0)
    if (!runMigrations) {
      try {
        await sql`SELECT 1`.execute(db)
      } catch (e) {
        await db.destroy()
        throw new Error(
          `Cannot open the PostgreSQL database at ${where}: ${(e as Error).message}`,
          {
            cause: e,
          },
        )
      }
    }
    const pool = lastPool
    const poolStats = pool
      ? () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
      : undefined
    return { db, kind: 'postgres', close: () => db.destroy(), ...(poolStats ? { poolStats } : {}) }
  }

  let release = (): void => {}
  let client: PGlite
  if (url?.startsWith('memory:') || !config.dataDir) {
    client = new PGlite(options.pgliteData ? { loadDataDir: options.pgliteData } : {})
  } else {
    const folder = join(config.dataDir, 'pglite')
    mkdirSync(folder, { recursive: true })
    release = acquireLock(join(config.dataDir, 'pglite.lock'))
    try {
      client = new PGlite(folder)
    } catch (e) {
      release()
      throw e
    }
  }
  const db = new Kysely<Database>({ dialect: pgliteDialect(client) })
  try {
    await client.waitReady
    if (runMigrations) await migrate(db as Kysely<unknown>, options.secrets ?? null)
  } catch (e) {
    await db.destroy().catch(() => {})
    release()
    throw e
  }
  return {
    db,
    kind: 'pglite',
    async close() {
      try {
        await db.destroy()
      } finally {
        release()
      }
    },
  }
}
