/** Builds the modal page into modal-app/dist (programmatic Vite; no config file). */
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { brotliCompress, gzip, constants as zlib } from 'node:zlib'
import { API_PREFIX, APP_ID_HEADER, CLIENT_HEADER, CLIENT_NAME } from '@latch/shared'
import { build, type Plugin, type Rolldown } from 'vite'
import { penpalWithoutDebugLines, pureZodCalls } from '../scripts/frontend-plugins.ts'
import { type ModalRenderer, modalRenderer, rendererAliases } from './renderer.ts'
import type { ClientConstants } from './src/startup/early.ts'
import { REFUSAL_SCRIPT } from './src/startup/refusal-data.ts'

export const MODAL_ROOT = fileURLToPath(new URL('.', import.meta.url))
export const MODAL_DIST = fileURLToPath(new URL('./dist', import.meta.url))

/** Statically reachable from the entry, yet needed only by lazy chunks. */
const LAZY_ONLY =
  /[\\/](libphonenumber-js[\\/]|shared[\\/]src[\\/](phone|transaction-check|protocol[\\/]call-shapes)\.ts$)/

export interface BuildModalOptions {
  /** Where to write; modal-app/dist by default. */
  outDir?: string
  /** React DOM unless LATCH_MODAL_RENDERER=preact (renderer.ts). */
  renderer?: ModalRenderer
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
    await viteBuild(staging, options.renderer ?? modalRenderer())
    await writeFile(join(staging, REFUSAL_SCRIPT), await refusalScript())
    await connectorFrameBuild(staging)
    await precompress(join(staging, 'assets'))
    await rename(outDir, old).catch(() => {})
    await rename(staging, outDir)
  } finally {
    await rm(staging, { recursive: true, force: true })
    await rm(old, { recursive: true, force: true })
  }
}

const CLIENT_CONSTANTS: ClientConstants = {
  apiPrefix: API_PREFIX,
  appIdHeader: APP_ID_HEADER,
  clientHeader: CLIENT_HEADER,
  clientName: CLIENT_NAME,
}

/** Bundled and inlined into the page's head: it starts the app configuration request. */
const EARLY_ENTRY = fileURLToPath(new URL('./src/startup/early-start.ts', import.meta.url))

/**
 * Two parts of WalletConnect the modal replaces, so they are not even built: its QR modal
 * (Reown AppKit, a UI kit the provider imports only to show it; the modal draws its own QR
 * code, `showQrModal: false`) and its browser storage, which reads `window.localStorage` as it
 * loads and so throws in a cross-site frame whose storage the browser refuses (the connector
 * gives the provider its own, connectors/walletconnect.ts). Each resolves to a module that
 * refuses if ever used.
 */
function withoutWalletConnectParts(): Plugin {
  const stubs: [RegExp, string, string][] = [
    [
      /^@reown\/appkit(\/|$)/,
      '\0latch-no-appkit',
      "throw new Error('WalletConnect QR modal is not part of Latch (showQrModal: false)')",
    ],
    [
      /^@walletconnect\/keyvaluestorage$/,
      '\0latch-no-wc-storage',
      "export default class { constructor() { throw new Error('WalletConnect storage is the connector s own') } }",
    ],
  ]
  return {
    name: 'latch-without-walletconnect-parts',
    enforce: 'pre',
    resolveId(id) {
      return stubs.find(([pattern]) => pattern.test(id))?.[1] ?? null
    },
    load(id) {
      return stubs.find(([, stub]) => stub === id)?.[2] ?? null
    },
  }
}

/** The shared contracts are plain declarations: what the modal does not use stays out. */
const sharedHasNoSideEffects = (id: string) => (id.includes('/shared/src/') ? false : undefined)

/**
 * early-start.ts as one classic script. Inline, it runs as the parser reaches it, before the
 * bundle has even been fetched; an external file would cost a request first. The modal server
 * allows it by its hash in the CSP.
 */
async function earlyScript(): Promise<string> {
  const result = await build({
    root: MODAL_ROOT,
    configFile: false,
    logLevel: 'warn',
    mode: 'production',
    define: { __LATCH_CLIENT__: JSON.stringify(CLIENT_CONSTANTS) },
    build: {
      write: false,
      target: 'es2022',
      minify: true,
      lib: { entry: EARLY_ENTRY, formats: ['iife'], name: 'latchEarly' },
    },
  })
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[]
  const chunk = outputs.flatMap((o) => o.output).find((o) => o.type === 'chunk')
  const code = chunk?.type === 'chunk' ? chunk.code.trim() : ''
  if (!code || /<\/script/i.test(code)) throw new Error('early-start.ts did not bundle inline')
  return code
}

/** The refusal page's script (src/startup/refused.ts), written to the build's root as REFUSAL_SCRIPT. */
const REFUSAL_ENTRY = fileURLToPath(new URL('./src/startup/refused.ts', import.meta.url))

/**
 * src/startup/refused.ts as one classic script of its own: the page an unlisted origin's frame gets
 * (server.ts) loads nothing of the modal.
 */
async function refusalScript(): Promise<string> {
  const result = await build({
    root: MODAL_ROOT,
    configFile: false,
    logLevel: 'warn',
    mode: 'production',
    plugins: [penpalWithoutDebugLines()],
    build: {
      write: false,
      target: 'es2022',
      minify: true,
      lib: { entry: REFUSAL_ENTRY, formats: ['iife'], name: 'latchRefusal' },
      rolldownOptions: { treeshake: { moduleSideEffects: sharedHasNoSideEffects } },
    },
  })
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[]
  const chunk = outputs.flatMap((o) => o.output).find((o) => o.type === 'chunk')
  const code = chunk?.type === 'chunk' ? chunk.code : ''
  if (!code) throw new Error('src/startup/refused.ts did not bundle')
  return code
}

/**
 * Puts the early script after the page's meta tags (the API URL it reads, the referrer policy)
 * and before the stylesheet the build adds: a classic script after a stylesheet waits for it
 * to load before it runs.
 */
function inlineEarlyScript(code: string): Plugin {
  return {
    name: 'latch-inline-early-script',
    transformIndexHtml: {
      // Before Vite adds its tags: it puts them after this script.
      order: 'pre',
      handler(html) {
        if (!/<meta name="latch-api-url"[^>]*>[\s\S]*<\/head>/.test(html)) {
          throw new Error(
            'index.html has no latch-api-url meta tag in its head for the early script',
          )
        }
        return html.replace('</head>', `  <script>${code}</script>\n  </head>`)
      },
    },
  }
}

/**
 * Marks the root element of a React DOM build `data-latch-hydrate`: its page may hydrate a
 * landing the modal server rendered (ssr.ts). The Preact build's page renders client-side.
 */
function hydratingRoot(renderer: ModalRenderer): Plugin {
  return {
    name: 'latch-hydrating-root',
    transformIndexHtml(html) {
      if (renderer !== 'react') return html
      if (!html.includes('<div id="root">') || !html.includes('<!--/latch-root-->')) {
        throw new Error('index.html has no root element with its end marker')
      }
      return html.replace('<div id="root">', '<div id="root" data-latch-hydrate>')
    },
  }
}

/**
 * V8's explicit compile hint on the landing's chunk: its functions are compiled eagerly, on a
 * background thread while the file streams in, instead of one by one on the main thread the
 * first time each runs (nearly all of them run before the first screen: the renderer, the
 * store, startup, the landing). Chromium honours the comment only as the file's first line, so
 * it goes in once the files are written, after minification (which drops comments) and Vite's
 * own preamble.
 */
function eagerCompileHint(): Plugin {
  return {
    name: 'latch-eager-compile-hint',
    async writeBundle(options, bundle) {
      // The entry and what it imports statically (with React DOM, Rolldown's CommonJS runtime
      // comes as a chunk of its own): every file the landing runs.
      const initial = new Set<string>()
      for (const file of Object.values(bundle)) {
        if (file.type !== 'chunk' || !file.isEntry) continue
        initial.add(file.fileName)
        for (const imported of file.imports) initial.add(imported)
      }
      if (!options.dir) return
      for (const name of initial) {
        const path = join(options.dir, name)
        await writeFile(path, `//# allFunctionsCalledOnLoad\n${await readFile(path, 'utf8')}`)
      }
    },
  }
}

/**
 * React's scheduler explains a wrong `unstable_forceFrameRate(fps)` in a 110-character sentence
 * that every page carries; the modal never calls it (nor does React DOM), so a short text does.
 * The build fails if the scheduler's text changes, instead of silently growing.
 */
function schedulerShortFrameRateText(): Plugin {
  const TEXT =
    '"forceFrameRate takes a positive int between 0 and 125, forcing frame rates higher than 125 fps is not supported"'
  return {
    name: 'latch-scheduler-short-frame-rate-text',
    transform(code, id) {
      if (!/[\\/]scheduler[\\/]cjs[\\/]scheduler\.production\.js$/.test(id)) return null
      if (!code.includes(TEXT)) this.error('scheduler changed: no forceFrameRate text to shorten')
      return { code: code.replace(TEXT, '"forceFrameRate: 0 to 125"'), map: null }
    },
  }
}

/**
 * Vite's helper behind each lazy import, in the few lines the modal needs: it preloads the
 * chunk's own imports (`<link rel=modulepreload>`, once per file, none that index.html already
 * links) in parallel with the chunk, then imports it. Vite's own also handles stylesheets
 * (the modal's lazy chunks have none: one stylesheet, linked by index.html), CSP nonces (the
 * modal server allows scripts by origin and hash), browsers without modulepreload (none the
 * modal supports) and a `vite:preloadError` event (nothing listens: a failed import rejects
 * either way). `base` is '/' and the dependencies are paths under it.
 */
const PRELOAD_HELPER_ID = '\0vite/preload-helper.js'
const PRELOAD_HELPER = `export const __vitePreload = (load, deps) => {
  for (const dep of deps || []) {
    const href = '/' + dep
    if (document.querySelector('link[href="' + href + '"]')) continue
    const link = document.createElement('link')
    link.rel = 'modulepreload'
    link.crossOrigin = ''
    link.href = href
    document.head.appendChild(link)
  }
  return Promise.resolve().then(load)
}`
function leanPreloadHelper(): Plugin {
  let used = false
  return {
    name: 'latch-lean-preload-helper',
    enforce: 'pre',
    load(id) {
      if (id !== PRELOAD_HELPER_ID) return null
      used = true
      return PRELOAD_HELPER
    },
    buildEnd(error) {
      // Vite renamed or stopped using its helper: look again rather than ship its own.
      if (!error && !used) this.error(`Vite's ${PRELOAD_HELPER_ID.slice(1)} was never loaded`)
    },
  }
}

/** What the modal server sends compressed (modal-app/server.ts); smaller files are not worth it. */
const PRECOMPRESSED = new Set(['.js', '.css', '.svg', '.json'])
const MIN_COMPRESS_BYTES = 1024

/**
 * Writes `x.br` and `x.gz` beside each asset, at the highest settings: too slow to make per
 * request, and the modal server would otherwise make them for the first visitor after a deploy.
 */
async function precompress(folder: string): Promise<void> {
  const brotli = promisify(brotliCompress)
  const gz = promisify(gzip)
  const files = (await readdir(folder)).filter((f) => PRECOMPRESSED.has(extname(f)))
  await Promise.all(
    files.map(async (name) => {
      const file = await readFile(join(folder, name))
      if (file.length < MIN_COMPRESS_BYTES) return
      const [br, gzipped] = await Promise.all([
        brotli(file, {
          params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: file.length },
        }),
        gz(file, { level: 9 }),
      ])
      await writeFile(join(folder, `${name}.br`), br)
      await writeFile(join(folder, `${name}.gz`), gzipped)
    }),
  )
}

async function viteBuild(outDir: string, renderer: ModalRenderer): Promise<void> {
  const early = await earlyScript()
  await build({
    root: MODAL_ROOT,
    configFile: false,
    logLevel: 'warn',
    base: '/',
    mode: 'production',
    // A build started from tests (NODE_ENV=test) must not take a dependency's development path.
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    oxc: { jsx: { runtime: 'automatic', development: false } },
    resolve: { alias: rendererAliases(renderer) },
    plugins: [
      inlineEarlyScript(early),
      hydratingRoot(renderer),
      pureZodCalls(),
      withoutWalletConnectParts(),
      penpalWithoutDebugLines(),
      schedulerShortFrameRateText(),
      leanPreloadHelper(),
      eagerCompileHint(),
    ],
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
          moduleSideEffects: sharedHasNoSideEffects,
        },
        // Imported constants (the catalogue's, the defaults', …) written where they are used
        // instead of read from a variable: with the message table's keys and its loader, the
        // landing needed these bytes to stay within its budget.
        optimization: { inlineConst: { mode: 'all', pass: 2 } },
      },
    },
  })
}

/**
 * The connector frames' pages: connectors.html (src/connectors/frame/main.ts, WalletConnect,
 * served at /connectors.html) and coinbase.html (frame/coinbase-main.ts, Coinbase Wallet's SDK,
 * served only on the connector origin), into the same folder. A build of its own: the modal
 * page's chunking puts everything an entry imports statically into its landing chunk, and
 * nothing of the frame's may reach the modal's bundle.
 */
async function connectorFrameBuild(outDir: string): Promise<void> {
  await build({
    root: MODAL_ROOT,
    configFile: false,
    logLevel: 'warn',
    base: '/',
    mode: 'production',
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    plugins: [pureZodCalls(), withoutWalletConnectParts()],
    build: {
      outDir,
      emptyOutDir: false,
      target: 'es2022',
      sourcemap: false,
      reportCompressedSize: false,
      modulePreload: { polyfill: false },
      rolldownOptions: {
        input: {
          connectors: fileURLToPath(new URL('./connectors.html', import.meta.url)),
          coinbase: fileURLToPath(new URL('./coinbase.html', import.meta.url)),
        },
        treeshake: { moduleSideEffects: sharedHasNoSideEffects },
      },
    },
  })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildModalApp()
}
