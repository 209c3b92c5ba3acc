/**
 * Fresh data folders for the API server, fast: creating a PGlite cluster and running the
 * migrations takes 10-20 s on two busy cores, copying an empty migrated one takes a second. The
 * first harness of a run makes the template (a real server start and stop on an empty folder);
 * every harness then starts on its own copy.
 */
import { existsSync, readFileSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from '@latch/server'
import { CACHE_DIR, runId } from './build.ts'

const TEMPLATE = join(CACHE_DIR, 'pglite-template')
const MARKER = join(CACHE_DIR, 'pglite-template.json')

function templateIsCurrent(): boolean {
  if (!existsSync(TEMPLATE) || !existsSync(MARKER)) return false
  try {
    return (JSON.parse(readFileSync(MARKER, 'utf8')) as { runId?: string }).runId === runId()
  } catch {
    return false
  }
}

async function makeTemplate(): Promise<void> {
  await mkdir(CACHE_DIR, { recursive: true })
  const building = await mkdtemp(join(CACHE_DIR, 'pglite-building-'))
  try {
    const api = await startServer({
      host: '127.0.0.1',
      port: 0,
      log: () => {},
      env: { NODE_ENV: 'test', LATCH_DATA_DIR: building, DATABASE_URL: '' },
    })
    await api.close()
    await rm(TEMPLATE, { recursive: true, force: true })
    await rename(building, TEMPLATE)
    await writeFile(MARKER, JSON.stringify({ runId: runId() }))
  } finally {
    await rm(building, { recursive: true, force: true })
  }
}

let template: Promise<void> | undefined
/** Copies of the template tried before giving up (see freshDataDir). */
const COPY_ATTEMPTS = 6

/**
 * A new temporary data folder holding an empty, migrated PGlite database (and its secret).
 * The caller removes it.
 */
export async function freshDataDir(): Promise<string> {
  template ??= templateIsCurrent() ? Promise.resolve() : makeTemplate()
  await template
  // Another vitest process (another session in this tree) may be swapping the template in right
  // now: a copy that meets a vanishing file is thrown away and tried again.
  for (let attempt = 1; ; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), 'latch-e2e-'))
    try {
      await cp(TEMPLATE, dir, { recursive: true })
      return dir
    } catch (error) {
      await rm(dir, { recursive: true, force: true })
      if (attempt >= COPY_ATTEMPTS || (error as { code?: unknown }).code !== 'ENOENT') throw error
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt))
    }
  }
}
