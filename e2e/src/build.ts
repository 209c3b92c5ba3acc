/**
 * Builds the frontend (host SDK, modal app and wallet frame) once per run into a private folder: the e2e
 * global setup builds before the workers start, and a marker beside the cache (the run's id and
 * a hash of the sources) tells a worker (or a test of another project that serves the frontend)
 * that this run, or an earlier run of the same sources, already built them. Each build goes into a folder of its own under `builds/`, and the
 * served paths (FRONTEND_DIRS) are links switched to it in one rename each: another vitest
 * process building meanwhile (another session in the same tree) never empties what a running
 * harness serves, and a page loaded from an older build still finds its files.
 */
import { createHash } from 'node:crypto'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ModalRenderer, modalRenderer } from '../../modal-app/renderer.ts'

/**
 * The three builds, loaded only when a build is due: they bring vite and rollup (seconds of CPU
 * to load), which a process serving an existing build (a worker, `npm start`) never needs.
 */
async function builders() {
  const [{ buildHostSdk }, { buildModalApp }, { buildWalletFrame }] = await Promise.all([
    import('../../host-sdk/build.ts'),
    import('../../modal-app/build.ts'),
    import('../../wallet-frame/build.ts'),
  ])
  return { buildHostSdk, buildModalApp, buildWalletFrame }
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
export const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'latch-e2e')
const MARKER = join(CACHE_DIR, 'frontend.json')

/** Where the harness and `npm start` serve the built frontend from. */
export const FRONTEND_DIRS = {
  /** The modal page (index.html and assets), for startModalServer's distDir. */
  modal: join(CACHE_DIR, 'modal'),
  /** sdk.js, latch.js and wallet-bridge.js, for startModalServer's sdkDir. */
  sdk: join(CACHE_DIR, 'sdk'),
  /** The wallet frame page and assets, for the API's LATCH_WALLET_FRAME_DIR. */
  walletFrame: join(CACHE_DIR, 'wallet-frame'),
} as const

/** Folders whose files end up in the bundles. Tests, builds and caches are left out. */
const SOURCES = ['shared', 'host-sdk', 'modal-app', 'wallet-frame']
/** The repository's build helpers the frontends' build.ts files use. */
const BUILD_HELPERS = ['scripts/build-library.ts', 'scripts/frontend-plugins.ts']
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
  files.push(...BUILD_HELPERS.map((file) => join(ROOT, file)))
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

/** The files served; a missing one means the marker cannot be trusted. */
function outputsExist(): boolean {
  return [
    join(FRONTEND_DIRS.modal, 'index.html'),
    join(FRONTEND_DIRS.sdk, 'sdk.js'),
    join(FRONTEND_DIRS.sdk, 'latch.js'),
    join(FRONTEND_DIRS.sdk, 'wallet-bridge.js'),
    join(FRONTEND_DIRS.sdk, 'provider.js'),
    join(FRONTEND_DIRS.walletFrame, 'index.html'),
    join(FRONTEND_DIRS.walletFrame, 'export.html'),
  ].every((file) => existsSync(file))
}

/** Vitest's workers are children of one process per run; LATCH_E2E_RUN_ID overrides. */
export const runId = () => process.env.LATCH_E2E_RUN_ID ?? `ppid-${process.ppid}`

interface Marker {
  hash: string
  runId: string
  /** The modal's renderer in that build (LATCH_MODAL_RENDERER); React when absent. */
  renderer?: ModalRenderer
}

function readMarker(path = MARKER): Marker | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Marker
  } catch {
    return null
  }
}

/** Whether a marker's build serves these sources with this renderer. */
const markerFits = (marker: Marker | null, hash: string, renderer: ModalRenderer) =>
  (marker?.renderer ?? 'react') === renderer && (marker?.hash === hash || marker?.runId === runId())

/** Whether a marker's build may be served: with LATCH_E2E_REBUILD=1, only one of this run. */
const builtFor = (marker: Marker | null, hash: string, renderer: ModalRenderer) =>
  process.env.LATCH_E2E_REBUILD === '1'
    ? (marker?.renderer ?? 'react') === renderer && marker?.runId === runId()
    : markerFits(marker, hash, renderer)

/** Each build's own folder; FRONTEND_DIRS link to the newest complete one. */
const BUILDS_DIR = join(CACHE_DIR, 'builds')
/** Older builds go when a new one is linked in; a run that started on one lasts minutes. */
const KEEP_BUILDS_MS = 2 * 60 * 60_000

/** Points `link` at `target` with one rename: a reader sees the old build or the new one. */
function relink(link: string, target: string): void {
  let isLink = false
  let exists = true
  try {
    isLink = lstatSync(link).isSymbolicLink()
  } catch {
    exists = false
  }
  // The layout before links (a plain folder) is removed once.
  if (exists && !isLink) rmSync(link, { recursive: true, force: true })
  const temporary = `${link}.${process.pid}.link`
  rmSync(temporary, { force: true })
  symlinkSync(target, temporary, 'dir')
  renameSync(temporary, link)
}

/** Removes the builds older than KEEP_BUILDS_MS, except `current`. */
function pruneBuilds(current: string): void {
  for (const name of readdirSync(BUILDS_DIR)) {
    const path = join(BUILDS_DIR, name)
    try {
      if (path !== current && Date.now() - statSync(path).mtimeMs > KEEP_BUILDS_MS) {
        rmSync(path, { recursive: true, force: true })
      }
    } catch {
      // Removed meanwhile by another process.
    }
  }
}

let pending: Promise<void> | undefined

/**
 * Builds the host SDK, the modal app and the wallet frame into FRONTEND_DIRS, unless this run or
 * these exact sources built them already with the same modal renderer (React DOM, or Preact with
 * LATCH_MODAL_RENDERER=preact, modal-app/renderer.ts). Set LATCH_E2E_REBUILD=1 to build once in
 * this run whatever was built before (the e2e global setup builds, the workers then use it).
 */
export function buildFrontendOnce(): Promise<typeof FRONTEND_DIRS> {
  pending ??= (async () => {
    const hash = frontendSourceHash()
    const renderer = modalRenderer()
    if (outputsExist() && builtFor(readMarker(), hash, renderer)) return
    const out = join(BUILDS_DIR, `${Date.now()}-${process.pid}`)
    const dirs = {
      sdk: join(out, 'sdk'),
      modal: join(out, 'modal'),
      walletFrame: join(out, 'wallet-frame'),
    }
    mkdirSync(out, { recursive: true })
    // A production build whatever the caller's NODE_ENV (vitest sets 'test', and a modal built
    // under 'test' pairs the dev JSX runtime with production React). Restored afterwards so
    // the server started next (npm start) does not inherit it.
    const nodeEnv = process.env.NODE_ENV
    process.env.NODE_ENV = 'production'
    try {
      const { buildHostSdk, buildModalApp, buildWalletFrame } = await builders()
      await buildHostSdk({ outDir: dirs.sdk })
      await buildModalApp({ outDir: dirs.modal, renderer })
      await buildWalletFrame({ outDir: dirs.walletFrame })
    } catch (error) {
      rmSync(out, { recursive: true, force: true })
      throw error
    } finally {
      if (nodeEnv === undefined) delete process.env.NODE_ENV
      else process.env.NODE_ENV = nodeEnv
    }
    relink(FRONTEND_DIRS.sdk, dirs.sdk)
    relink(FRONTEND_DIRS.modal, dirs.modal)
    relink(FRONTEND_DIRS.walletFrame, dirs.walletFrame)
    writeFileSync(MARKER, JSON.stringify({ hash, runId: runId(), renderer } satisfies Marker))
    pruneBuilds(out)
  })()
  return pending.then(() => FRONTEND_DIRS)
}

/** The modal page built with a renderer other than the run's, beside FRONTEND_DIRS.modal. */
export const otherRendererModalDir = (renderer: ModalRenderer) =>
  join(CACHE_DIR, `modal-${renderer}`)

const pendingModals = new Map<ModalRenderer, Promise<string>>()

/**
 * The modal page built with `renderer`, for a spec that checks the build it does not run on
 * (e2e/src/preact-build.spec.ts): the run's own build when it is that renderer, else a modal
 * built once per run or per change of the sources into a folder of its own, switched in like
 * FRONTEND_DIRS. The host SDK and the wallet frame are the run's (buildFrontendOnce).
 */
export function buildModalOnce(renderer: ModalRenderer): Promise<string> {
  if (renderer === modalRenderer()) return buildFrontendOnce().then((dirs) => dirs.modal)
  let modal = pendingModals.get(renderer)
  if (!modal) {
    modal = (async () => {
      const link = otherRendererModalDir(renderer)
      const marker = `${link}.json`
      const hash = frontendSourceHash()
      if (existsSync(join(link, 'index.html')) && builtFor(readMarker(marker), hash, renderer)) {
        return link
      }
      const out = join(BUILDS_DIR, `${Date.now()}-${process.pid}-${renderer}`)
      mkdirSync(out, { recursive: true })
      const nodeEnv = process.env.NODE_ENV
      process.env.NODE_ENV = 'production'
      try {
        const { buildModalApp } = await builders()
        await buildModalApp({ outDir: join(out, 'modal'), renderer })
      } catch (error) {
        rmSync(out, { recursive: true, force: true })
        throw error
      } finally {
        if (nodeEnv === undefined) delete process.env.NODE_ENV
        else process.env.NODE_ENV = nodeEnv
      }
      relink(link, join(out, 'modal'))
      writeFileSync(marker, JSON.stringify({ hash, runId: runId(), renderer } satisfies Marker))
      return link
    })()
    pendingModals.set(renderer, modal)
  }
  return modal
}
