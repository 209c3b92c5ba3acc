/**
 * Builds the frontend (host SDK and modal app) at most once per source state: the e2e spec
 * files each run in their own worker, so a hash of the sources, kept beside the cache, tells a
 * worker that an earlier one of the same run (or an earlier run) already built these sources.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildHostSdk } from '../../host-sdk/build.ts'
import { buildModalApp } from '../../modal-app/build.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'latch-e2e')
const MARKER = join(CACHE_DIR, 'frontend.sha256')

/** Folders whose files end up in the bundles. Tests, builds and caches are left out. */
const SOURCES = ['shared', 'host-sdk', 'modal-app']
const SKIP_DIRS = new Set(['node_modules', 'dist', '.cache', '.vite'])
const SKIP_FILE = /\.test\.tsx?$/

function collect(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) collect(path, out)
    } else if (entry.isFile() && !SKIP_FILE.test(entry.name)) {
      out.push(path)
    }
  }
}

/** A hash of every source file that goes into the frontend bundles. */
export function frontendSourceHash(): string {
  const files: string[] = []
  for (const dir of SOURCES) collect(join(ROOT, dir), files)
  files.sort()
  const hash = createHash('sha256')
  for (const file of files) {
    hash.update(file.slice(ROOT.length))
    hash.update('\0')
    hash.update(readFileSync(file))
    hash.update('\0')
  }
  return hash.digest('hex')
}

/** Output folders the builds write; a missing one means the marker cannot be trusted. */
function outputsExist(): boolean {
  return ['host-sdk/dist', 'modal-app/dist'].every((dir) => {
    const path = join(ROOT, dir)
    return existsSync(path) && statSync(path).isDirectory()
  })
}

let pending: Promise<void> | undefined

/**
 * Builds the host SDK and the modal app unless these exact sources were built already.
 * Set LATCH_E2E_REBUILD=1 to force a build.
 */
export function buildFrontendOnce(): Promise<void> {
  pending ??= (async () => {
    const hash = frontendSourceHash()
    const force = process.env.LATCH_E2E_REBUILD === '1'
    if (!force && outputsExist() && existsSync(MARKER) && readFileSync(MARKER, 'utf8') === hash) {
      return
    }
    await buildHostSdk()
    await buildModalApp()
    mkdirSync(CACHE_DIR, { recursive: true })
    writeFileSync(MARKER, hash)
  })()
  return pending
}
