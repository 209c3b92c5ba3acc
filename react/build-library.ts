/**
 * Builds a Latch library package for npm (used by react/build.ts and wagmi/build.ts):
 * `dist/index.js`, one ES module from Vite's library mode with the host SDK and the shared
 * contracts bundled in (they are this repository's private workspaces, not published) and the
 * package's peers left as imports; and `dist/index.d.ts` over declarations tsc emits for the
 * package, the host SDK and shared, whose `@latch/…` imports are rewritten to the emitted
 * files, so a consumer's TypeScript needs nothing but the peers.
 */

import { execFile } from 'node:child_process'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build } from 'vite'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
/** The private workspaces bundled into each package, by import name. */
const BUNDLED = {
  '@latch/shared': 'shared/src/index.ts',
  '@latch/host-sdk': 'host-sdk/src/index.ts',
} as const

export interface LibraryOptions {
  /** The package's folder name under the repository root, e.g. 'react'. */
  name: string
  /** Imports left to the consumer (the peers), matched also as `name/…` subpaths. */
  external: string[]
  /** Where to write; the package's dist/ by default. */
  outDir?: string
}

const isExternal = (external: string[]) => (id: string) =>
  external.some((name) => id === name || id.startsWith(`${name}/`))

async function declarations(name: string, outDir: string): Promise<void> {
  const typesDir = join(outDir, 'types')
  const config = join(outDir, 'tsconfig.types.json')
  await writeFile(
    config,
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: {
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        rootDir: ROOT,
        outDir: typesDir,
        types: [],
        // Through paths, not node_modules: files found under node_modules are never emitted.
        paths: Object.fromEntries(
          Object.entries(BUNDLED).map(([id, file]) => [id, [join(ROOT, file)]]),
        ),
      },
      include: [],
      files: [join(ROOT, name, 'src/index.ts')],
    }),
  )
  const tsc = join(ROOT, 'node_modules/.bin/tsc')
  await promisify(execFile)(tsc, ['-p', config]).catch((e: { stdout?: string }) => {
    throw new Error(`tsc could not emit the declarations:\n${e.stdout ?? e}`)
  })
  await rm(config)
  // @latch/… to the emitted file, and .ts/.tsx specifiers to .js, in every declaration.
  const files = (await readdir(typesDir, { recursive: true })).filter((f) => f.endsWith('.d.ts'))
  for (const file of files) {
    const path = join(typesDir, file)
    const text = await readFile(path, 'utf8')
    const rewritten = text
      .replace(
        /(from |import\()(['"])(@latch\/(?:shared|host-sdk))\2/g,
        (_, lead: string, quote: string, id: keyof typeof BUNDLED) => {
          const target = join(typesDir, BUNDLED[id].replace(/\.ts$/, '.js'))
          const rel = relative(dirname(path), target)
          return `${lead}${quote}${rel.startsWith('.') ? rel : `./${rel}`}${quote}`
        },
      )
      .replace(/(from |import\()(['"])(\.{1,2}\/[^'"]*)\.tsx?\2/g, '$1$2$3.js$2')
    if (rewritten !== text) await writeFile(path, rewritten)
  }
  await writeFile(join(outDir, 'index.d.ts'), `export * from './types/${name}/src/index.js'\n`)
}

/** Builds `dist/index.js` and `dist/index.d.ts` (with `dist/types/`) of one package. */
export async function buildLibrary({ name, external, outDir }: LibraryOptions): Promise<string> {
  const out = outDir ?? join(ROOT, name, 'dist')
  await rm(out, { recursive: true, force: true })
  await mkdir(out, { recursive: true })
  await build({
    root: join(ROOT, name),
    configFile: false,
    logLevel: 'error',
    mode: 'production',
    // React's production JSX runtime whatever NODE_ENV the build runs under (a test's is 'test').
    oxc: { jsx: { runtime: 'automatic', development: false } },
    build: {
      outDir: out,
      emptyOutDir: false,
      target: 'es2022',
      minify: false,
      sourcemap: false,
      lib: { entry: join(ROOT, name, 'src/index.ts'), formats: ['es'], fileName: () => 'index.js' },
      rolldownOptions: {
        external: isExternal(external),
        // The shared contracts run nothing at import (host-sdk/build.ts relies on it too): what
        // the package does not use (zod schemas, phone metadata) stays out.
        treeshake: { moduleSideEffects: (id: string) => !/[\\/]shared[\\/]src[\\/]/.test(id) },
      },
    },
  })
  await declarations(name, out)
  return out
}
