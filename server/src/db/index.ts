/** Opens the database the configuration names and runs the migrations. */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { Config } from '../config.ts'
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
}

/** PostgreSQL when DATABASE_URL is a postgres URL, PGlite in memory for 'memory://', else PGlite in the data folder. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
): Promise<OpenDatabase> {
  const url = config.databaseUrl
  if (url && !url.startsWith('memory:')) {
    const pool = new pg.Pool({
      connectionString: url,
      max: 10,
      // An unreachable server is an error within seconds, not a hang.
      connectionTimeoutMillis: 10_000,
    })
    // An idle client's network error must not take the process down.
    pool.on('error', () => {})
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    try {
      await migrate(db as Kysely<unknown>)
    } catch (e) {
      await db.destroy()
      const where = new URL(url).host
      throw new Error(`Cannot open the PostgreSQL database at ${where}: ${(e as Error).message}`, {
        cause: e,
      })
    }
    return { db, kind: 'postgres', close: () => db.destroy() }
  }

  let release = (): void => {}
  let client: PGlite
  if (url?.startsWith('memory:') || !config.dataDir) {
    client = new PGlite()
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
    await migrate(db as Kysely<unknown>)
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
