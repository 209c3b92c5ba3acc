/**
 * Fresh databases for the harness's API server, fast: creating a PGlite cluster and running the
 * migrations takes 10-20 s on two busy cores. In a test run each server gets a copy of the run's
 * migrated PostgreSQL template, or loads the run's migrated PGlite dump into memory
 * (freshDatabase). Outside one (a bench script), the first harness makes a template folder (a
 * real server start and stop on an empty folder) and every harness starts on its own copy of it
 * (freshDataDir).
 */
import { existsSync, readFileSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from '@latch/server'
import { runPgliteData } from '../../server/src/testing/global-setup.ts'
import {
  MIGRATED_TEMPLATE,
  RUN_POSTGRES_ENV,
  runPostgres,
} from '../../server/src/testing/postgres.ts'
import { CACHE_DIR, runId } from './build.ts'

/** Names the current template folder and the run it was made for; replaced with one rename. */
const MARKER = join(CACHE_DIR, 'pglite-template.json')
const PREFIX = 'pglite-template-'

interface Marker {
  runId: string
  dir: string
}

/** The run's template folder, when one is published and complete. */
function currentTemplate(): string | null {
  try {
    const marker = JSON.parse(readFileSync(MARKER, 'utf8')) as Marker
    return marker.runId === runId() && existsSync(marker.dir) ? marker.dir : null
  } catch {
    return null
  }
}

/**
 * Makes a template in a folder of its own and publishes it by renaming the marker over the old
 * one, so a reader always names a complete folder. The workers of one run may each make one
 * (the first to finish is used by later readers); none is removed while its run may copy it, so
 * no copy ever mixes the files of two clusters (which PGlite answers with an abort). Templates
 * of other runs go.
 */
async function makeTemplate(): Promise<string> {
  await mkdir(CACHE_DIR, { recursive: true })
  const tag = runId().replace(/[^A-Za-z0-9-]/g, '_')
  const dir = await mkdtemp(join(CACHE_DIR, `${PREFIX}${tag}-`))
  try {
    const api = await startServer({
      host: '127.0.0.1',
      port: 0,
      log: () => {},
      env: { NODE_ENV: 'test', LATCH_DATA_DIR: dir, DATABASE_URL: '' },
    })
    await api.close()
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw error
  }
  const next = `${MARKER}.${process.pid}`
  await writeFile(next, JSON.stringify({ runId: runId(), dir } satisfies Marker))
  await rename(next, MARKER)
  for (const name of await readdir(CACHE_DIR)) {
    // (and the single folder the template lived in before)
    const older = name === 'pglite-template' || name.startsWith(PREFIX)
    if (older && !name.startsWith(`${PREFIX}${tag}-`)) {
      await rm(join(CACHE_DIR, name), { recursive: true, force: true })
    }
  }
  return dir
}

let template: Promise<string> | undefined
/** Copies of the template tried before giving up (see freshDataDir). */
const COPY_ATTEMPTS = 6

/**
 * A new temporary data folder holding an empty, migrated PGlite database (and its secret).
 * The caller removes it.
 */
export async function freshDataDir(): Promise<string> {
  // Another vitest process (another session in this tree) may remove a template of its own run's
  // past: a copy that meets a vanishing file is thrown away and tried from the current one.
  for (let attempt = 1; ; attempt++) {
    const current = currentTemplate()
    template ??= current ? Promise.resolve(current) : makeTemplate()
    const source = await template
    const dir = await mkdtemp(join(tmpdir(), 'latch-e2e-'))
    try {
      await cp(source, dir, { recursive: true })
      return dir
    } catch (error) {
      await rm(dir, { recursive: true, force: true })
      if (attempt >= COPY_ATTEMPTS || (error as { code?: unknown }).code !== 'ENOENT') throw error
      template = undefined
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt))
    }
  }
}

/** A harness server's database: what its environment and start options get. */
export interface FreshDatabase {
  /** LATCH_DATA_DIR, a temporary folder holding the database; the caller removes it. */
  dataDir?: string
  /** DATABASE_URL, when the database is not the folder's PGlite. */
  databaseUrl?: string
  /** startServer's pgliteData. */
  pgliteData?: Blob
}

/**
 * An empty, migrated database for a harness's server. In a test run, a copy of the migrated
 * template on the run's PostgreSQL (made by the global setup; a copy takes milliseconds), the
 * database production runs on; where this machine has none, an in-memory PGlite loaded from
 * the run's migrated dump (read once per worker). Elsewhere (a bench script) a copy of the
 * template folder. A spec's API on PostgreSQL costs the worker less CPU than on PGlite, which
 * runs inside it (docs/performance.md); the embedded database's own paths are the server
 * tests' (both databases) and npm-start.spec.ts's.
 */
export async function freshDatabase(): Promise<FreshDatabase> {
  if (process.env[RUN_POSTGRES_ENV]) {
    const postgres = await runPostgres()
    if (postgres) {
      return { databaseUrl: await postgres.createDatabase(undefined, MIGRATED_TEMPLATE) }
    }
  }
  const pgliteData = runPgliteData()
  if (!pgliteData) return { dataDir: await freshDataDir() }
  return { databaseUrl: 'memory://', pgliteData }
}
