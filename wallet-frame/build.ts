/** Builds the wallet frame page into wallet-frame/dist (programmatic Vite; no config file). */
import { rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'vite'
import { penpalWithoutDebugLines, pureZodCalls } from '../scripts/frontend-plugins.ts'

export const WALLET_FRAME_ROOT = fileURLToPath(new URL('.', import.meta.url))
export const WALLET_FRAME_DIST = fileURLToPath(new URL('./dist', import.meta.url))
/** Where the API serves the frame's hashed assets (server/src/wallets/frame.ts). */
export const WALLET_FRAME_BASE = '/embedded-wallets/'

/** The shared contracts are plain declarations: what the frame does not use stays out. */
const sharedHasNoSideEffects = (id: string) => (id.includes('/shared/src/') ? false : undefined)

/** Builds into a fresh folder, then swaps it in: a server never reads a half-written build. */
export async function buildWalletFrame(options: { outDir?: string } = {}): Promise<void> {
  const outDir = options.outDir ?? WALLET_FRAME_DIST
  const staging = `${outDir}.building-${process.pid}-${Date.now()}`
  const old = `${outDir}.old-${process.pid}-${Date.now()}`
  try {
    await build({
      root: WALLET_FRAME_ROOT,
      configFile: false,
      logLevel: 'warn',
      base: WALLET_FRAME_BASE,
      mode: 'production',
      plugins: [pureZodCalls(), penpalWithoutDebugLines()],
      build: {
        outDir: staging,
        emptyOutDir: true,
        target: 'es2022',
        sourcemap: false,
        reportCompressedSize: false,
        modulePreload: { polyfill: false },
        rolldownOptions: {
          // Two pages: the hidden wallet frame and the key export page (export.ts).
          input: {
            index: join(WALLET_FRAME_ROOT, 'index.html'),
            export: join(WALLET_FRAME_ROOT, 'export.html'),
          },
          // The shared contracts' unused zod schemas drop out too (pureZodCalls).
          treeshake: { moduleSideEffects: sharedHasNoSideEffects },
        },
      },
    })
    await rename(outDir, old).catch(() => {})
    await rename(staging, outDir)
  } finally {
    await rm(staging, { recursive: true, force: true })
    await rm(old, { recursive: true, force: true })
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildWalletFrame()
}
