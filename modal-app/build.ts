/** Builds the modal page into modal-app/dist (programmatic Vite; no config file). */
import { rename, rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { build } from 'vite'

export const MODAL_ROOT = fileURLToPath(new URL('.', import.meta.url))
export const MODAL_DIST = fileURLToPath(new URL('./dist', import.meta.url))

export interface BuildModalOptions {
  /** Where to write; modal-app/dist by default. */
  outDir?: string
}

/**
 * Builds into a fresh folder, then swaps it in, so a server reading the old build never sees
 * a half-written one.
 */
export async function buildModalApp(options: BuildModalOptions = {}): Promise<void> {
  const outDir = options.outDir ?? MODAL_DIST
  const staging = `${outDir}.building-${process.pid}-${Date.now()}`
  const old = `${outDir}.old-${process.pid}-${Date.now()}`
  try {
    await viteBuild(staging)
    await rename(outDir, old).catch(() => {})
    await rename(staging, outDir)
  } finally {
    await rm(staging, { recursive: true, force: true })
    await rm(old, { recursive: true, force: true })
  }
}

async function viteBuild(outDir: string): Promise<void> {
  await build({
    root: MODAL_ROOT,
    configFile: false,
    logLevel: 'warn',
    base: '/',
    mode: 'production',
    // Builds started from tests (NODE_ENV=test) must still ship React's production build.
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    oxc: { jsx: { runtime: 'automatic', development: false } },
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      sourcemap: false,
      reportCompressedSize: false,
      rolldownOptions: {
        treeshake: {
          // The shared contracts are plain declarations: what the modal does not use stays out.
          moduleSideEffects: (id: string) => (id.includes('/shared/src/') ? false : undefined),
          // zod schema builders are pure; unused schemas (and zod with them) drop out.
          manualPureFunctions: ['z'],
        },
      },
    },
  })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildModalApp()
}
