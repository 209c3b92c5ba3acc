/** Builds the modal page into modal-app/dist (programmatic Vite; no config file). */
import { rename, rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { build } from 'vite'

export const MODAL_ROOT = fileURLToPath(new URL('.', import.meta.url))
export const MODAL_DIST = fileURLToPath(new URL('./dist', import.meta.url))

/** Statically reachable from the entry, yet needed only by lazy chunks. */
const LAZY_ONLY = /[\\/](libphonenumber-js[\\/]|shared[\\/]src[\\/]phone\.ts$)/

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
      // Every browser the modal supports knows <link rel=modulepreload>.
      modulePreload: { polyfill: false },
      rolldownOptions: {
        output: {
          codeSplitting: {
            groups: [
              {
                // Left alone, Rolldown puts what the entry shares with its lazy chunks (React,
                // the store, actions) in common chunks of their own (rolldown#9963): more
                // requests and worse compression before the landing. So everything the entry
                // imports statically goes in one chunk, which Rolldown merges into the entry.
                // Excluded: what the entry reaches only through a barrel's re-export and only
                // a lazy chunk uses (the phone metadata); a module added to the entry's static
                // graph that only lazy code uses must be excluded here too (size.test.ts
                // catches it).
                name: 'landing',
                tags: ['$initial'],
                test: (id: string) => !LAZY_ONLY.test(id),
                includeDependenciesRecursively: false,
              },
            ],
          },
        },
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
