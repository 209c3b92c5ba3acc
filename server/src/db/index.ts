/** Opens the database the configuration names and runs the migrations. */
import { accessSync, constants, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import {
  type Config,
  DEFAULT_PG_POOL_MAX,
  DEFAULT_PG_POOL_QUEUE_MAX,
  DEFAULT_PG_POOL_WAIT_MS,
} from '../config.ts'
import type { Secrets } from '../crypto.ts'
import { acquireLock } from './lock.ts'
import { migrate } from './migrations.ts'
import { pgliteDialect } from './pglite-dialect.ts'
import type { Database, Db } from './schema.ts'
import { DatabaseBusyError, DatabaseUnreachableError, databaseUnavailable } from './unavailable.ts'

export type { Database, Db } from './schema.ts'
export { json } from './schema.ts'

export interface OpenDatabase {
  db: Db
  kind: 'pglite' | 'postgres'
  close(): Promise<void>
  /** PostgreSQL: the request pool's connections now and what it refused (the metrics read them). */
  poolStats?: () => PoolStats
}

export interface PoolStats {
  total: number
  idle: number
  waiting: number
  /** Requests answered 503 because every connection stayed busy past the bound (since start). */
  shed: number
  /** Connections the server ended or that failed to open (since start). */
  lost: number
}

/** Opening the migrations' connection may take longer than a request's wait: start-up is not a request. */
const MIGRATION_CONNECT_TIMEOUT_MS = 10_000

/**
 * The pool as Kysely sees it, with the queue bounded: a request that finds `queueMax` others
 * already waiting for a connection is refused at once (DatabaseBusyError, a 503), and one that
 * waited the whole bound is counted as shed too. Overload sheds instead of queueing, so the
 * requests that are served keep their latency.
 */
function shedding(
  pool: pg.Pool,
  queueMax: number,
  counts: { shed: number; lost: number },
): Pick<pg.Pool, 'connect' | 'end'> {
  return {
    // Kysely calls connect() without a callback: only the promise form is needed.
    connect: (async () => {
      if (pool.waitingCount >= queueMax) {
        counts.shed++
        throw new DatabaseBusyError(`${pool.waitingCount} requests already wait for a connection`)
      }
      try {
        return await pool.connect()
      } catch (e) {
        if (databaseUnavailable(e) === 'busy') {
          counts.shed++
          throw e
        }
        // Whatever kept the connection from opening (refused, reset, timed out, the server
        // starting or full) is the database out of reach, named so here where it is known.
        counts.lost++
        throw new DatabaseUnreachableError(`No connection to PostgreSQL: ${(e as Error).message}`, {
          cause: e,
        })
      }
    }) as pg.Pool['connect'],
    end: () => pool.end(),
  }
}

/** A lender of in-memory PGlite databases (OpenOptions.pglite). */
export interface PgliteSource {
  open(): Promise<PGlite>
  close(client: PGlite): Promise<void>
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
  /**
   * Where an in-memory database comes from instead of a new PGlite: `open` answers a ready
   * client, which the database uses alone until its `close` hands it back (it is not closed
   * here). The test runs lend each server a migrated database emptied after its last user,
   * since loading one costs more CPU than most tests (server/src/testing/pglite-pool.ts).
   */
  pglite?: PgliteSource
  /** The server secret's keys: a migration that gives existing rows a MAC seals them with it. */
  secrets?: Secrets
}

/**
 * A data folder PGlite cannot use, said plainly: PGlite itself reports one it cannot read or
 * write as a bare errno, and nothing may be written to a folder half opened.
 */
function unusableFolder(folder: string, e: unknown): Error {
  const { message, code, errno } = e as { message?: unknown; code?: unknown; errno?: unknown }
  const why =
    typeof message === 'string' && message
      ? message
      : `${typeof code === 'string' ? code : 'error'}${typeof errno === 'number' ? ` (errno ${errno})` : ''}`
  return new Error(
    `Cannot use the PGlite data folder ${folder}: ${why}. This process must be able to read and write the folder and every file in it (LATCH_DATA_DIR), or set DATABASE_URL to use PostgreSQL.`,
    { cause: e },
  )
}

/**
 * How an in-memory PGlite starts: PGlite's own parameters (its fsync is off already) with
 * - 16 MB of shared buffers instead of PostgreSQL's 128 MB: its data files are already in
 *   memory, so that cache only held second copies of their pages;
 * - no full-page images and the minimal write-ahead log: the images and the fuller log serve
 *   crash recovery, archiving and replicas, none of which a database that lives in this
 *   process's memory can have. Each commit then writes less to the log, whose files are in the
 *   in-memory file system like the rest.
 * A throwaway database then needs an eighth of the memory and runs on less CPU
 * (docs/performance.md).
 */
export const MEMORY_START_PARAMS = [
  ...PGlite.defaultStartParams,
  '-c',
  'shared_buffers=16MB',
  '-c',
  'full_page_writes=off',
  '-c',
  'wal_level=minimal',
  // wal_level=minimal refuses to start with WAL senders allowed (PostgreSQL's default is 10).
  '-c',
  'max_wal_senders=0',
]

/** PostgreSQL when DATABASE_URL is a postgres URL, PGlite in memory for 'memory://', else PGlite in the data folder. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'postgres'>>,
  options: OpenOptions = {},
): Promise<OpenDatabase> {
  const url = config.databaseUrl
  const runMigrations = options.migrate ?? true
  if (url && !url.startsWith('memory:')) {
    const settings = config.postgres
    const counts = { shed: 0, lost: 0 }
    let lastPool: pg.Pool | undefined
    const poolFor = (max: number, statementTimeoutMs: number, waitMs: number, queueMax: number) => {
      const pool = new pg.Pool({
        connectionString: url,
        max,
        // Bounds the wait for a free connection and the opening of a new one alike: an
        // unreachable or stalled server, or a pool busy past the bound, is a 503 within
        // `waitMs`, never a hang.
        connectionTimeoutMillis: waitMs,
        // 0 leaves PostgreSQL's own setting (none by default).
        ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
      })
      // The pool listens on idle connections only; a connection checked out (between the
      // statements of a transaction, or mid-statement) that the server ends (a restart, a
      // failover, pg_terminate_backend) emits 'error' with no listener, which would end the
      // process. Its statement fails on its own and the pool drops it once released.
      pool.on('connect', (client) => {
        client.on('error', () => {
          counts.lost++
        })
      })
      // An idle connection's error reaches the listener above too: the pool's own is silent.
      pool.on('error', () => {})
      lastPool = pool
      return new Kysely<Database>({
        dialect: new PostgresDialect({ pool: shedding(pool, queueMax, counts) }),
      })
    }
    const where = new URL(url).host
    if (runMigrations) {
      // Migrations get a connection of their own without the statement timeout: rewriting a
      // large table may rightly take longer than any request should.
      const migrator = poolFor(1, 0, MIGRATION_CONNECT_TIMEOUT_MS, Number.POSITIVE_INFINITY)
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
    const db = poolFor(
      settings?.poolMax ?? DEFAULT_PG_POOL_MAX,
      settings?.statementTimeoutMs ?? 0,
      settings?.poolWaitMs ?? DEFAULT_PG_POOL_WAIT_MS,
      settings?.poolQueueMax ?? DEFAULT_PG_POOL_QUEUE_MAX,
    )
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
      ? () => ({
          total: pool.totalCount,
          idle: pool.idleCount,
          waiting: pool.waitingCount,
          shed: counts.shed,
          lost: counts.lost,
        })
      : undefined
    return { db, kind: 'postgres', close: () => db.destroy(), ...(poolStats ? { poolStats } : {}) }
  }

  let release = (): void => {}
  let client: PGlite
  let folder: string | undefined
  const dataDir = url?.startsWith('memory:') ? null : config.dataDir
  const source = dataDir ? undefined : options.pglite
  if (source) {
    client = await source.open()
  } else if (!dataDir) {
    client = new PGlite({
      startParams: MEMORY_START_PARAMS,
      ...(options.pgliteData ? { loadDataDir: options.pgliteData } : {}),
    })
  } else {
    folder = join(dataDir, 'pglite')
    try {
      mkdirSync(folder, { recursive: true })
      accessSync(folder, constants.R_OK | constants.W_OK | constants.X_OK)
      release = acquireLock(join(dataDir, 'pglite.lock'))
    } catch (e) {
      // The lock's own refusal (another process holds the folder) already says what to do.
      if ((e as NodeJS.ErrnoException).code === undefined) throw e
      throw unusableFolder(folder, e)
    }
    try {
      client = new PGlite(folder)
    } catch (e) {
      release()
      throw unusableFolder(folder, e)
    }
  }
  const lent = client
  const db = new Kysely<Database>({
    dialect: pgliteDialect(client, source ? () => source.close(lent) : undefined),
  })
  try {
    try {
      await client.waitReady
    } catch (e) {
      throw folder ? unusableFolder(folder, e) : e
    }
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
