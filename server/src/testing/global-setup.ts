/**
 * The test run's databases, made once before the workers start (Vitest `globalSetup` of the
 * projects that run the API in process):
 * - one PostgreSQL for the whole run with a migrated template database (MIGRATED_TEMPLATE);
 *   each test server gets a copy of it (runPostgres().createDatabase(name, template));
 * - a migrated PGlite data folder, dumped to a file; each in-memory test server loads it (and
 *   the same cluster before its migrations, for the tests of the migrations themselves);
 * Starting a PostgreSQL, creating a PGlite cluster and running every migration for each test
 * file is what the server's tests spent most of their time on;
 * - the `latch` command bundled for the tests that spawn it (cli-bundle.ts).
 * All are stopped and removed when the run ends. A second project's setup in the same run
 * reuses what the first made.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely } from 'kysely'
import { openDatabase, type PgliteSource } from '../db/index.ts'
import { migrate } from '../db/migrations.ts'
import { pgliteDialect } from '../db/pglite-dialect.ts'
import { DatabaseUnreachableError } from '../db/unavailable.ts'
import { bundleCli, CLI_BUNDLE_ENV } from './cli-bundle.ts'
import { pglitePool } from './pglite-pool.ts'
import {
  MIGRATED_TEMPLATE,
  RUN_POSTGRES_ENV,
  type RunningPostgres,
  startPostgres,
} from './postgres.ts'

/** Where the run's migrated PGlite data folder (a tar file) is. */
export const PGLITE_DATA_ENV = 'LATCH_TEST_PGLITE_DATA'
/** Where the run's blank PGlite data folder (a new cluster, no migration run) is. */
export const PGLITE_BLANK_ENV = 'LATCH_TEST_PGLITE_BLANK'

let pgliteData: Blob | undefined
/** The run's migrated PGlite data folder, read once per worker; undefined outside a run. */
export function runPgliteData(): Blob | undefined {
  const file = process.env[PGLITE_DATA_ENV]
  if (!file) return undefined
  pgliteData ??= new Blob([readFileSync(file)])
  return pgliteData
}

let blankData: Blob | undefined
/**
 * The run's blank PGlite cluster (no migration run), read once per worker; undefined outside a
 * run. For tests of the migrations themselves: creating a cluster costs seconds.
 * @example await openDatabase({ databaseUrl: 'memory://', dataDir: null }, { pgliteData: runBlankPgliteData() })
 */
export function runBlankPgliteData(): Blob | undefined {
  const file = process.env[PGLITE_BLANK_ENV]
  if (!file) return undefined
  blankData ??= new Blob([readFileSync(file)])
  return blankData
}

/** A new in-memory PGlite with no migration run: the run's blank cluster when there is one. */
export function blankPglite(): PGlite {
  const data = runBlankPgliteData()
  return data ? new PGlite({ loadDataDir: data }) : new PGlite()
}

let pool: PgliteSource | undefined
/**
 * Options for startServer, openServices or openDatabase on `memory://` that lend the server a
 * database of the run's migrated PGlite dump (pglite-pool.ts; none outside a run): the server
 * then skips creating and migrating a cluster, the seconds most of an in-memory start takes,
 * and mostly loading the dump too.
 * @example await startServer({ port: 0, env: { DATABASE_URL: 'memory://' }, ...migratedMemory() })
 */
export function migratedMemory(): { pglite?: PgliteSource } {
  const data = runPgliteData()
  if (!data) return {}
  pool ??= pglitePool(data)
  return { pglite: pool }
}

/**
 * A data folder (LATCH_DATA_DIR) whose PGlite database is the run's migrated one, for a test
 * whose subject needs the database to outlive a process but not its creation: creating a
 * cluster and migrating it in a folder costs seconds each time. Outside a run the folder stays
 * empty (the server creates the cluster as usual).
 * @example const env = { LATCH_DATA_DIR: await migratedFolder(mkdtempSync(...)), DATABASE_URL: '' }
 */
export function migratedFolder(dataDir: string): Promise<string> {
  return folderFrom(runPgliteData(), dataDir)
}

/**
 * A data folder whose PGlite database is the run's blank cluster, no migration run: for tests
 * of the migrations on a folder (migratedFolder's reasons).
 */
export function blankFolder(dataDir: string): Promise<string> {
  return folderFrom(runBlankPgliteData(), dataDir)
}

async function folderFrom(data: Blob | undefined, dataDir: string): Promise<string> {
  if (!data) return dataDir
  mkdirSync(dataDir, { recursive: true })
  const client = new PGlite(join(dataDir, 'pglite'), { loadDataDir: data })
  try {
    await client.waitReady
  } finally {
    await client.close()
  }
  return dataDir
}

/**
 * The cluster's data folder after a checkpoint. PGlite's dump copies the files as they are:
 * without one, every database loaded from it would first replay, as crash recovery, the
 * write-ahead log of everything done since the last checkpoint (the migrations).
 */
export async function checkpointedDump(client: PGlite): Promise<Blob> {
  await client.exec('CHECKPOINT')
  return client.dumpDataDir('none')
}

/**
 * Drops the cluster's two template databases. Latch uses the cluster's `postgres` database only
 * and never creates another, which is all a template is for; each is a third of the files a
 * test database loads from the dump (the rest is `postgres` and the write-ahead log), and the
 * run loads the migrated dump for every in-memory test server. The blank dump keeps them: the
 * tests of the migrations start from the cluster PGlite makes.
 */
async function dropTemplates(client: PGlite): Promise<void> {
  await client.exec(
    `UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')`,
  )
  await client.exec('DROP DATABASE template0')
  await client.exec('DROP DATABASE template1')
}

/** The blank cluster and the migrated one, dumped side by side into one folder. */
async function pgliteTemplate(): Promise<{ file: string; blank: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'latch-pglite-template-'))
  const write = async (name: string, dump: Blob) => {
    const file = join(dir, name)
    writeFileSync(file, new Uint8Array(await dump.arrayBuffer()))
    return file
  }
  const remove = () => rmSync(dir, { recursive: true, force: true })
  const client = new PGlite()
  const db = new Kysely<unknown>({ dialect: pgliteDialect(client) })
  try {
    // A dump asked for before the cluster is up never answers.
    await client.waitReady
    const blank = await write('blank.tar', await checkpointedDump(client))
    await migrate(db)
    await dropTemplates(client)
    const file = await write('data.tar', await checkpointedDump(client))
    return { file, blank, remove }
  } catch (error) {
    remove()
    throw error
  } finally {
    await db.destroy()
  }
}

/**
 * Makes the run's migrated PGlite dump unless an earlier setup of the run made it, and answers
 * how to remove it (nothing to do when it was not made here). The e2e setup calls it too: the
 * projects' setups run in the order of the run's first files, so either may come first.
 */
export async function ensurePgliteData(): Promise<() => void> {
  if (process.env[PGLITE_DATA_ENV]) return () => {}
  const template = await pgliteTemplate()
  process.env[PGLITE_DATA_ENV] = template.file
  process.env[PGLITE_BLANK_ENV] = template.blank
  return () => {
    delete process.env[PGLITE_DATA_ENV]
    delete process.env[PGLITE_BLANK_ENV]
    template.remove()
  }
}

/**
 * Starts the run's PostgreSQL with its migrated template unless an earlier setup of the run
 * did, and answers how to stop it (nothing to do when it was not started here, or when this
 * machine has no PostgreSQL: then RUN_POSTGRES_ENV stays unset). The e2e setup calls it: its
 * harnesses' API servers each get a copy of the template.
 */
export async function ensureRunPostgres(): Promise<() => Promise<void>> {
  if (process.env[RUN_POSTGRES_ENV]) return async () => {}
  const postgres = await startRunPostgres()
  if (!postgres) return async () => {}
  process.env[RUN_POSTGRES_ENV] = postgres.url
  return async () => {
    delete process.env[RUN_POSTGRES_ENV]
    await postgres.close()
  }
}

/** Whether `error`, or an error it was caused by, is the database not answering at all. */
function unreachable(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e instanceof DatabaseUnreachableError) return true
  }
  return false
}

async function startRunPostgres(): Promise<RunningPostgres | null> {
  const running = await startPostgres()
  if (!running) return null
  try {
    const url = await running.createDatabase(MIGRATED_TEMPLATE)
    // The migrations' connection has 10 s to open, as in production. The run's setup shares
    // the cores with the frontend build and the PGlite dump (and with whatever else the machine
    // runs), and once, on a loaded machine, that was not enough: the connection is tried
    // again, twice at most, before the run fails for it.
    for (let attempt = 1; ; attempt++) {
      try {
        const { close } = await openDatabase({ databaseUrl: url, dataDir: null })
        await close()
        break
      } catch (error) {
        if (attempt >= 3 || !unreachable(error)) throw error
      }
    }
  } catch (error) {
    await running.close()
    throw error
  }
  return running
}

/** Each part is made unless an earlier setup of the run made it (the env names it). */
export default async function setup(): Promise<() => Promise<void>> {
  const made = await Promise.allSettled([
    ensurePgliteData(),
    process.env[CLI_BUNDLE_ENV] ? null : bundleCli(),
    process.env[RUN_POSTGRES_ENV] ? null : startRunPostgres(),
  ] as const)
  const [data, cli, postgres] = made.map((m) => (m.status === 'fulfilled' ? m.value : null)) as [
    (() => void) | null,
    Awaited<ReturnType<typeof bundleCli>> | null,
    RunningPostgres | null,
  ]
  const teardown = async () => {
    data?.()
    if (cli) {
      delete process.env[CLI_BUNDLE_ENV]
      cli.remove()
    }
    if (postgres) {
      delete process.env[RUN_POSTGRES_ENV]
      await postgres.close()
    }
  }
  const failed = made.find((m) => m.status === 'rejected')
  if (failed) {
    await teardown()
    throw failed.reason
  }
  if (cli) process.env[CLI_BUNDLE_ENV] = cli.file
  if (postgres) process.env[RUN_POSTGRES_ENV] = postgres.url
  return teardown
}
