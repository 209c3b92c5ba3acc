/**
 * Builds a Latch library package for npm (used by the build.ts of host-sdk/, react/, wagmi/ and
 * server-sdk/): `dist/index.js` (and one file per further entry), ES modules from Vite's library
 * mode with the shared contracts (a private workspace) and the host SDK bundled in, so a package
 * declares nothing of this repository, and the package's peers left as imports; and
 * `dist/index.d.ts` over declarations tsc emits for the package, the host SDK and shared, whose
 * `@latch/…` imports are rewritten to the emitted files, so a consumer's TypeScript needs
 * nothing but the peers. scripts/packages.ts packs the four packages and checks what they ship.
 * Each build records the hashes of what it read and wrote, so a later step (the examples' e2e
 * spec) can take a build as current (`currentLibrary`) instead of making it again.
 */

import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build } from 'vite'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
/** The private workspaces bundled into each package, by import name. */
const BUNDLED = {
  '@latch/shared': 'shared/src/index.ts',
  // Types only, free of zod: a package that imports just these ships declarations that need
  // nothing its consumer lacks (shared's index reaches the zod schemas).
  '@latch/shared/types': 'shared/src/types.ts',
  '@latch/host-sdk': 'host-sdk/src/index.ts',
  // The one client per app and modal that @latch/react and @latch/wagmi share on a page.
  '@latch/host-sdk/shared-client': 'host-sdk/src/shared-client.ts',
} as const
/** Each bundled import, matched exactly, to its source file (Vite's aliases). */
export const BUNDLED_SOURCES = Object.entries(BUNDLED).map(([id, file]) => ({
  find: new RegExp(`^${id.replace(/[/.]/g, '\\$&')}$`),
  replacement: join(ROOT, file),
}))
/** `from '@latch/…'` and `import('@latch/…')` of a bundled workspace, in a declaration. */
const BUNDLED_IMPORT = new RegExp(
  `(from |import\\()(['"])(${Object.keys(BUNDLED)
    .map((id) => id.replace(/[/.]/g, '\\$&'))
    .join('|')})\\2`,
  'g',
)

export interface LibraryOptions {
  /** The package's folder name under the repository root, e.g. 'react'. */
  name: string
  /** Imports left to the consumer (the peers), matched also as `name/…` subpaths. */
  external: string[]
  /** Where to write; the package's dist/ by default. */
  outDir?: string
  /**
   * The package's entries, by output name (`dist/<name>.js` and `dist/<name>.d.ts`), each a file
   * under the package's src/; `{ index: 'index.ts' }` when omitted.
   */
  entries?: Record<string, string>
  /** Ambient type packages the declarations are emitted with (`['node']` for a backend package). */
  types?: string[]
}

// Node's builtins stay imports too: a backend package (@latch/node) runs where they exist.
const isExternal = (external: string[]) => (id: string) =>
  id.startsWith('node:') || external.some((name) => id === name || id.startsWith(`${name}/`))

async function declarations(
  name: string,
  outDir: string,
  entries: Record<string, string>,
  types: string[],
): Promise<void> {
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
        types,
        // Through paths, not node_modules: files found under node_modules are never emitted.
        paths: Object.fromEntries(
          Object.entries(BUNDLED).map(([id, file]) => [id, [join(ROOT, file)]]),
        ),
      },
      include: [],
      files: Object.values(entries).map((file) => join(ROOT, name, 'src', file)),
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
      .replace(BUNDLED_IMPORT, (_, lead: string, quote: string, id: keyof typeof BUNDLED) => {
        const target = join(typesDir, BUNDLED[id].replace(/\.ts$/, '.js'))
        const rel = relative(dirname(path), target)
        return `${lead}${quote}${rel.startsWith('.') ? rel : `./${rel}`}${quote}`
      })
      .replace(/(from |import\()(['"])(\.{1,2}\/[^'"]*)\.tsx?\2/g, '$1$2$3.js$2')
    if (rewritten !== text) await writeFile(path, rewritten)
  }
  for (const [entry, file] of Object.entries(entries)) {
    const emitted = `./types/${name}/src/${file.replace(/\.tsx?$/, '.js')}`
    await writeFile(join(outDir, `${entry}.d.ts`), `export * from '${emitted}'\n`)
  }
}

/**
 * The bundler heads each module's code with its path from the working folder (`// ../shared/…`
 * under `npm run build`, `// shared/…` from the root): written from the repository's root
 * instead, the same sources give the same bytes, and so the same tarball integrity, whoever
 * builds them from where.
 */
async function sameFromAnyFolder(out: string): Promise<void> {
  for (const file of (await readdir(out)).filter((f) => f.endsWith('.js'))) {
    const path = join(out, file)
    const code = await readFile(path, 'utf8')
    const rewritten = code.replace(
      /^\/\/ (\S+\.[cm]?[jt]sx?)$/gm,
      (_, module: string) => `// ${relative(ROOT, resolve(process.cwd(), module))}`,
    )
    if (rewritten !== code) await writeFile(path, rewritten)
  }
}

/**
 * Where a build into `out` is recorded, so that a later step can use that build instead of
 * making it again (`currentLibrary`): the hash of each file it was made from and of each file it
 * wrote. Kept outside the output, which is packed.
 */
export const stampOf = (out: string) =>
  join(
    ROOT,
    'node_modules/.cache/latch-build',
    `${createHash('sha256').update(resolve(out)).digest('hex').slice(0, 16)}.json`,
  )

interface Stamp {
  options: string
  inputs: Record<string, string>
  outputs: Record<string, string>
}

/** The sha256 of a file, by its path from the root (whatever the working folder). */
const hashFile = (path: string) =>
  readFile(resolve(ROOT, path)).then(
    (bytes) => createHash('sha256').update(bytes).digest('hex'),
    () => 'missing',
  )

async function hashAll(paths: Iterable<string>): Promise<Record<string, string>> {
  const sorted = [...new Set(paths)].sort()
  const hashes = await Promise.all(sorted.map(hashFile))
  return Object.fromEntries(sorted.map((path, i) => [path, hashes[i] ?? 'missing']))
}

/** Every file under `dir`, relative to the repository root. */
const filesUnder = async (dir: string) =>
  (await readdir(join(ROOT, dir), { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))

/**
 * The files a build reads, relative to the root: the whole src/ of the package and of each
 * bundled workspace (type-only imports, which the bundler drops, are read by tsc), every other
 * module the bundler loaded, the lockfile (the versions of node_modules, whose types tsc reads),
 * the root tsconfig, this script and the package's manifest.
 */
async function inputsOf(name: string, loaded: Iterable<string>): Promise<string[]> {
  const trees = [...new Set([name, ...Object.values(BUNDLED).map((file) => file.split('/')[0])])]
  const sources = (
    await Promise.all(trees.map((tree) => filesUnder(join(tree ?? '', 'src'))))
  ).flat()
  const modules = [...loaded]
    .filter((id) => id.startsWith(ROOT) && !id.includes('\0'))
    .map((id) => relative(ROOT, id.replace(/[?#].*$/, '')))
  const fixed = [
    'package-lock.json',
    'tsconfig.json',
    relative(ROOT, fileURLToPath(import.meta.url)),
    join(name, 'package.json'),
  ]
  return [...sources, ...modules, ...fixed]
}

const optionsKey = (o: Required<Omit<LibraryOptions, 'outDir'>>) =>
  JSON.stringify([o.name, [...o.external].sort(), o.entries, o.types])

/**
 * The output folder (the package's dist/ by default) when the last build into it is provably
 * current (the same options, every input and every output byte for byte as recorded), else null.
 */
export async function currentLibrary(options: LibraryOptions): Promise<string | null> {
  const { name, entries = { index: 'index.ts' }, types = [] } = options
  const out = options.outDir ?? join(ROOT, name, 'dist')
  const stamp = await readFile(stampOf(out), 'utf8')
    .then((text) => JSON.parse(text) as Stamp)
    .catch(() => null)
  if (!stamp || stamp.options !== optionsKey({ ...options, entries, types })) return null
  const same = (recorded: Record<string, string>, now: Record<string, string>) =>
    Object.keys(now).length === Object.keys(recorded).length &&
    Object.entries(now).every(([path, hash]) => hash !== 'missing' && recorded[path] === hash)
  const inputs = await hashAll(Object.keys(stamp.inputs))
  // A source added since the build (the recorded list lacks it) counts too.
  const sources = await inputsOf(name, [])
  if (sources.some((path) => !(path in stamp.inputs))) return null
  const outputs = await hashAll(await filesUnder(relative(ROOT, out)))
  return same(stamp.inputs, inputs) && same(stamp.outputs, outputs) ? out : null
}

/** The package's current dist/ (`currentLibrary`), or a fresh build of it. */
export async function builtLibrary(options: LibraryOptions): Promise<string> {
  return (await currentLibrary(options)) ?? buildLibrary(options)
}

/** Builds `dist/<entry>.js` and `dist/<entry>.d.ts` (with `dist/types/`) of one package. */
export async function buildLibrary({
  name,
  external,
  outDir,
  entries = { index: 'index.ts' },
  types = [],
}: LibraryOptions): Promise<string> {
  const out = outDir ?? join(ROOT, name, 'dist')
  // A build that stops half way leaves no record of a current output.
  await rm(stampOf(out), { force: true })
  await rm(out, { recursive: true, force: true })
  await mkdir(out, { recursive: true })
  const loaded = new Set<string>()
  const before = await hashAll(await inputsOf(name, []))
  await build({
    root: join(ROOT, name),
    configFile: false,
    logLevel: 'error',
    mode: 'production',
    // React's production JSX runtime whatever NODE_ENV the build runs under (a test's is 'test').
    oxc: { jsx: { runtime: 'automatic', development: false } },
    // The sources, whatever the workspace's package.json exports (the host SDK's name the
    // built package, which this very build may be making).
    resolve: { alias: BUNDLED_SOURCES },
    build: {
      outDir: out,
      emptyOutDir: false,
      target: 'es2022',
      minify: false,
      sourcemap: false,
      lib: {
        entry: Object.fromEntries(
          Object.entries(entries).map(([entry, file]) => [entry, join(ROOT, name, 'src', file)]),
        ),
        formats: ['es'],
        fileName: (_format, entry) => `${entry}.js`,
      },
      rolldownOptions: {
        external: isExternal(external),
        // The shared contracts run nothing at import (host-sdk/build.ts relies on it too): what
        // the package does not use (zod schemas, phone metadata) stays out.
        treeshake: { moduleSideEffects: (id: string) => !/[\\/]shared[\\/]src[\\/]/.test(id) },
      },
    },
    plugins: [
      {
        name: 'latch-build-inputs',
        buildEnd() {
          for (const id of this.getModuleIds()) loaded.add(id)
        },
      },
    ],
  })
  await sameFromAnyFolder(out)
  await declarations(name, out, entries, types)
  // Hashed before the build and again after: a source edited meanwhile records no stamp.
  const inputs = await hashAll(await inputsOf(name, loaded))
  const unchanged = Object.entries(before).every(([path, hash]) => inputs[path] === hash)
  if (unchanged && !Object.values(inputs).includes('missing')) {
    const outputs = await hashAll(await filesUnder(relative(ROOT, out)))
    const stamp: Stamp = {
      options: optionsKey({ name, external, entries, types }),
      inputs,
      outputs,
    }
    await mkdir(dirname(stampOf(out)), { recursive: true })
    await writeFile(stampOf(out), JSON.stringify(stamp))
  }
  return out
}
