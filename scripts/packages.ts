/**
 * The public npm packages (@latch/host-sdk, @latch/react, @latch/wagmi, @latch/node): packed
 * for the API to serve, and checked as npm would publish them.
 *
 *   tsx scripts/packages.ts pack [folder]   npm pack each built package into dist/packages
 *                                           (what `npm run build` ends with; the API serves it)
 *   tsx scripts/packages.ts check           npm pack --dry-run each built package and check it
 *   tsx scripts/packages.ts check --publish the same, then npm publish --dry-run (asks the
 *                                           registry, so only where it is reachable)
 *
 * What `check` refuses, per package: a private or unlicensed manifest, a version other than the
 * server's, a `repository` not naming its folder, no public `publishConfig`, an `exports`,
 * `types` or `main` target that the tarball does not hold (or a TypeScript source as one), and
 * a built module importing a package the manifest neither declares nor is Node's.
 */
import { execFile } from 'node:child_process'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { PACKAGES_DIST_DIR, PUBLIC_PACKAGES, SERVER_VERSION } from '../server/src/ops/packages.ts'

/**
 * A consumer's strict TypeScript project, as the packages' exports tests compile one against a
 * built package: the declarations are checked as the consumer's compiler reads them
 * (`skipLibCheck` off), with no ambient types but the DOM's.
 */
export const CONSUMER_COMPILER_OPTIONS = {
  strict: true,
  noEmit: true,
  skipLibCheck: false,
  module: 'ESNext',
  moduleResolution: 'bundler',
  target: 'ES2022',
  lib: ['ES2023', 'DOM'],
  types: [] as string[],
}

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../', import.meta.url))
/** Every npm call here has its bound: a registry or a disk that does not answer fails it. */
const NPM_TIMEOUT_MS = 120_000

export interface Packed {
  name: string
  version: string
  filename: string
  integrity: string
  files: string[]
}

interface PackJson {
  name: string
  version: string
  filename: string
  integrity: string
  files: { path: string }[]
}

const ALL = PUBLIC_PACKAGES.map(({ name }) => name)

async function npmPack(args: string[], names: readonly string[] = ALL): Promise<Packed[]> {
  const workspaces = names.flatMap((name) => ['-w', name])
  const { stdout } = await run('npm', ['pack', ...workspaces, '--json', ...args], {
    cwd: ROOT,
    timeout: NPM_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((e: { stderr?: string; message: string }) => {
    throw new Error(`npm pack failed: ${e.stderr || e.message}`)
  })
  return (JSON.parse(stdout) as PackJson[]).map((p) => ({
    name: p.name,
    version: p.version,
    filename: p.filename,
    integrity: p.integrity,
    files: p.files.map((f) => f.path),
  }))
}

/** Packs each built public package (or those named) into `dest` (dist/packages), as the API serves them. */
export async function packPackages(
  dest = PACKAGES_DIST_DIR,
  names: readonly string[] = ALL,
): Promise<Packed[]> {
  await mkdir(dest, { recursive: true })
  return npmPack(['--pack-destination', dest], names)
}

/** Each file an `exports` value names, through its conditions and subpaths. */
function exportTargets(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (value && typeof value === 'object') return Object.values(value).flatMap(exportTargets)
  return []
}

/** The bare specifiers a built module imports (static, re-exported or dynamic with a literal). */
export function importedPackages(code: string): string[] {
  const specifiers = new Set<string>()
  const pattern =
    /(?:^|[\s;])(?:import|export)\s*(?:[^'"`;]*?\sfrom\s*)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g
  for (const match of code.matchAll(pattern)) {
    const specifier = match[1] ?? match[2]
    if (!specifier || specifier.startsWith('.') || specifier.startsWith('/')) continue
    const parts = specifier.split('/')
    specifiers.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? ''))
  }
  return [...specifiers].sort()
}

export interface Manifest {
  name?: string
  version?: string
  private?: boolean
  license?: string
  repository?: { type?: string; url?: string; directory?: string }
  publishConfig?: { access?: string }
  exports?: unknown
  types?: string
  main?: string
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
}

/**
 * What is wrong with one package as packed: `files` is what the tarball holds (npm pack's list,
 * relative to the package folder), `read` gives a packed file's text.
 */
export async function packageProblems(
  manifest: Manifest,
  folder: string,
  files: readonly string[],
  read: (path: string) => Promise<string>,
  version = SERVER_VERSION,
): Promise<string[]> {
  const problems: string[] = []
  const name = manifest.name ?? folder
  if (manifest.private) problems.push(`${name} is private`)
  if (manifest.license !== 'MIT') problems.push(`${name}'s license is not MIT`)
  if (manifest.version !== version) {
    problems.push(`${name} is version ${manifest.version}, the server ${version}`)
  }
  if (manifest.repository?.directory !== folder || !manifest.repository.url) {
    problems.push(`${name}'s repository does not name its url and folder (${folder})`)
  }
  if (manifest.publishConfig?.access !== 'public') {
    problems.push(`${name} has no publishConfig.access "public" (a scoped package is restricted)`)
  }
  if (!files.includes('README.md')) problems.push(`${name} ships no README.md`)
  const held = new Set(files)
  const targets = [...exportTargets(manifest.exports), manifest.types, manifest.main].filter(
    (t): t is string => typeof t === 'string',
  )
  if (exportTargets(manifest.exports).length === 0) problems.push(`${name} has no exports`)
  for (const target of targets) {
    const path = target.replace(/^\.\//, '')
    if (/\.tsx?$/.test(path) && !path.endsWith('.d.ts')) {
      problems.push(`${name} names a TypeScript source as an entry: ${target}`)
    } else if (!held.has(path)) {
      problems.push(`${name} names ${target}, which its tarball does not hold`)
    }
  }
  const declared = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ])
  for (const file of files.filter((f) => f.endsWith('.js'))) {
    for (const imported of importedPackages(await read(file))) {
      if (!imported.startsWith('node:') && !declared.has(imported)) {
        problems.push(`${name}'s ${file} imports ${imported}, which it does not declare`)
      }
    }
  }
  return problems
}

/** Packs each public package without writing it (npm pack --dry-run) and checks it. */
export async function checkPackages(options: { publish?: boolean } = {}): Promise<string[]> {
  const packed = await npmPack(['--dry-run'])
  const problems: string[] = []
  for (const { name, dir } of PUBLIC_PACKAGES) {
    const pack = packed.find((p) => p.name === name)
    if (!pack) {
      problems.push(`npm pack did not pack ${name}`)
      continue
    }
    const folder = join(ROOT, dir)
    const manifest = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')) as Manifest
    problems.push(
      ...(await packageProblems(manifest, dir, pack.files, (path) =>
        readFile(join(folder, path), 'utf8'),
      )),
    )
  }
  if (options.publish && problems.length === 0) {
    const workspaces = PUBLIC_PACKAGES.flatMap(({ name }) => ['-w', name])
    await run('npm', ['publish', '--dry-run', ...workspaces], {
      cwd: ROOT,
      timeout: NPM_TIMEOUT_MS,
    }).catch((e: { stderr?: string; message: string }) => {
      problems.push(`npm publish --dry-run failed: ${e.stderr || e.message}`)
    })
  }
  return problems
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [command, arg] = process.argv.slice(2)
  if (command === 'pack') {
    for (const p of await packPackages(arg ? join(process.cwd(), arg) : undefined)) {
      console.log(`${p.filename} ${p.integrity}`)
    }
  } else if (command === 'check') {
    const problems = await checkPackages({ publish: arg === '--publish' })
    for (const problem of problems) console.error(problem)
    if (problems.length > 0) process.exit(1)
    console.log(
      `${PUBLIC_PACKAGES.map((p) => p.name).join(', ')}: ${SERVER_VERSION}, ready to publish`,
    )
  } else {
    console.error('usage: tsx scripts/packages.ts pack [folder] | check [--publish]')
    process.exit(2)
  }
}
