/**
 * In-memory databases lent to a worker's test servers (openDatabase's `pglite` source): each is
 * the run's migrated dump, loaded once, and emptied when a server hands it back, so the next
 * server gets what a fresh load would give it. A load costs 0.5-0.7 s of CPU and most test
 * servers live for a handful of requests; emptying takes milliseconds (docs/performance.md).
 *
 * A database goes back into the pool only when it is as the dump left it apart from its rows:
 * a client that was closed (a test of the database's loss), a reset that fails, or a schema
 * that differs from the dump's (a test that altered it) is dropped, and the next server loads
 * a new one. Servers of one worker may overlap; each has a database of its own.
 */
import { PGlite } from '@electric-sql/pglite'
import { MEMORY_START_PARAMS, type PgliteSource } from '../db/index.ts'

/** At most this many idle databases per worker: enough for a file's servers to overlap. */
const IDLE_MAX = 2

/**
 * Everything of the schema a test could change and a reset would not undo: relations and their
 * columns, constraints, indexes, triggers, functions and the applied migrations.
 */
const SCHEMA = `
  SELECT md5(string_agg(item, ',' ORDER BY item)) AS schema FROM (
    SELECT c.relname || ':' || c.relkind::text || ':' || coalesce(a.attname, '') || ':' ||
      coalesce(format_type(a.atttypid, a.atttypmod), '') || ':' || coalesce(a.attnotnull::text, '') || ':' ||
      coalesce(pg_get_expr(d.adbin, d.adrelid), '') AS item
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    UNION ALL SELECT 'constraint:' || conname || ':' || pg_get_constraintdef(oid) FROM pg_constraint
      WHERE connamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
    UNION ALL SELECT 'index:' || indexdef FROM pg_indexes
      WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
    UNION ALL SELECT 'trigger:' || tgname FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT 'function:' || p.oid::regprocedure::text FROM pg_proc p
      WHERE pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
    UNION ALL SELECT 'setting:' || array_to_string(setconfig, ',') FROM pg_db_role_setting
    UNION ALL SELECT 'migration:' || name FROM kysely_migration
  ) items`

/** The rows' tables: every table but the migrator's own (its rows are the schema's). */
const TABLES = `
  SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
  WHERE schemaname NOT IN ('pg_catalog', 'information_schema') AND tablename NOT LIKE 'kysely_migration%'`

const SEQUENCES = `
  SELECT format('%I.%I', schemaname, sequencename) AS name FROM pg_sequences
  WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`

async function schemaOf(client: PGlite): Promise<string> {
  const { rows } = await client.query<{ schema: string }>(SCHEMA)
  return rows[0]?.schema ?? ''
}

/** Empties every table and restarts every sequence: the rows a fresh load has (none). */
async function empty(client: PGlite): Promise<void> {
  // A transaction its server left open ends here, unapplied.
  if (client.isInTransaction()) await client.exec('ROLLBACK')
  const names = async (query: string) =>
    (await client.query<{ name: string }>(query)).rows.map((row) => row.name)
  const tables = await names(TABLES)
  const sequences = await names(SEQUENCES)
  await client.transaction(async (tx) => {
    if (tables.length > 0) await tx.exec(`TRUNCATE ${tables.join(', ')} RESTART IDENTITY CASCADE`)
    for (const sequence of sequences) await tx.exec(`ALTER SEQUENCE ${sequence} RESTART`)
  })
}

/**
 * A lender of databases loaded from `data` (a migrated dump): idle ones are reused, emptied.
 * @example await startServer({ env: { DATABASE_URL: 'memory://' }, pglite: pglitePool(dump) })
 */
export function pglitePool(data: Blob): PgliteSource {
  const idle: PGlite[] = []
  let schema: Promise<string> | undefined
  return {
    async open() {
      const reused = idle.pop()
      if (reused) return reused
      const client = new PGlite({ loadDataDir: data, startParams: MEMORY_START_PARAMS })
      await client.waitReady
      schema ??= schemaOf(client)
      await schema
      return client
    },
    async close(client) {
      if (client.closed) return
      try {
        await empty(client)
        if (idle.length < IDLE_MAX && (await schemaOf(client)) === (await schema)) {
          idle.push(client)
          return
        }
      } catch {
        // Not reusable (see the file's comment): dropped below.
      }
      await client.close()
    },
  }
}
