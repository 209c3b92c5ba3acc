/** Builds the modal page into modal-app/dist (programmatic Vite; no config file). */
import { fileURLToPath } from 'node:url'
import { build } from 'vite'

export const MODAL_ROOT = fileURLToPath(new URL('.', import.meta.url))
export const MODAL_DIST = fileURLToPath(new URL('./dist', import.meta.url))

export interface BuildModalOptions {
  /** Where to write; modal-app/dist by default. */
  outDir?: string
}

export async function buildModalApp(options: BuildModalOptions = {}): Promise<void> {
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
      outDir: options.outDir ?? MODAL_DIST,
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
