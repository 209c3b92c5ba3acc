/**
 * Fresh data folders for the API server, fast: creating a PGlite cluster and running the
 * migrations takes 10-20 s on two busy cores, copying an empty migrated one takes a second. The
 * e2e global setup makes the run's template (from the server tests' migrated dump when they run
 * too, else a real server start and stop on an empty folder); every harness then starts on its
 * own copy.
 */
import { existsSync, readFileSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from '@latch/server'
import { writeMigratedFolder } from '../../server/src/testing/global-setup.ts'
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
    // In a run with the server's tests, their global setup (which runs first) made a migrated
    // dump: loaded into the server's folder it is the same empty, migrated database. Each
    // harness's server then writes its own secret file beside it.
    if (!(await writeMigratedFolder(join(dir, 'pglite')))) {
      const api = await startServer({
        host: '127.0.0.1',
        port: 0,
        log: () => {},
        env: { NODE_ENV: 'test', LATCH_DATA_DIR: dir, DATABASE_URL: '' },
      })
      await api.close()
    }
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

/**
 * Makes this run's template unless one is published: the e2e global setup calls it once before
 * the workers start, so they copy it instead of each making one.
 */
export async function ensureTemplate(): Promise<void> {
  if (!currentTemplate()) await makeTemplate()
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
