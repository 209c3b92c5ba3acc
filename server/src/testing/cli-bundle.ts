/**
 * The `latch` command as the tests spawn it: server/src/cli.ts bundled once per test run (the
 * servers' global setup) into one ES module, so a child process starts on plain Node instead
 * of compiling hundreds of TypeScript files under tsx first (seconds of CPU per child). The
 * packages stay imports, resolved from the server package as when run from source; the
 * repository's own modules keep their `import.meta.url`, so files they find beside themselves
 * (wallet-frame/dist, the modal's dist, package.json) are the same. server/src/ops/bin.test.ts
 * and e2e/src/production.spec.ts still run the real `bin/latch.js` as an operator would.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** Where the run's bundled CLI is (set by the global setup, read by the workers). */
export const CLI_BUNDLE_ENV = 'LATCH_TEST_CLI'

const CLI_SOURCE = fileURLToPath(new URL('../cli.ts', import.meta.url))
const SERVER_DIR = fileURLToPath(new URL('../../', import.meta.url))
/** The repository root: the working directory the tests give the command. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/**
 * Node's arguments that run `latch <argv…>`: the run's bundle when there is one, else the
 * sources under tsx (outside a test run, e.g. `npm run bench`).
 * @example spawn(process.execPath, latchCommand('serve', '--api-only'), { cwd: REPO_ROOT })
 */
export function latchCommand(...argv: string[]): string[] {
  const bundle = process.env[CLI_BUNDLE_ENV]
  return bundle ? [bundle, ...argv] : ['--import', 'tsx', CLI_SOURCE, ...argv]
}

/** Bundles the CLI; `remove` deletes it. */
export async function bundleCli(): Promise<{ file: string; remove(): void }> {
  const { build } = await import('vite')
  // Under the server's node_modules, so the bundle's package imports resolve as the sources'
  // do (Node looks in server/node_modules, then the root's).
  const cache = join(SERVER_DIR, 'node_modules/.cache')
  mkdirSync(cache, { recursive: true })
  const outDir = mkdtempSync(join(cache, 'latch-cli-'))
  const entry = '\0latch-cli-entry'
  await build({
    configFile: false,
    logLevel: 'warn',
    root: SERVER_DIR,
    plugins: [
      {
        name: 'latch-cli-bundle',
        enforce: 'pre',
        resolveId: (id) => (id.endsWith('latch-cli-entry') ? entry : undefined),
        load: (id) =>
          id === entry
            ? `import { main } from ${JSON.stringify(CLI_SOURCE)}\nmain(process.argv.slice(2))\n`
            : undefined,
        // Each module's own URL, not the bundle's.
        transform: (code, id) =>
          /\.tsx?$/.test(id) && code.includes('import.meta.url')
            ? code.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(id).href))
            : undefined,
      },
    ],
    build: {
      ssr: 'latch-cli-entry',
      outDir,
      emptyOutDir: false,
      minify: false,
      target: 'node20',
      rolldownOptions: {
        // The repository's workspaces are bundled; packages and Node's builtins stay imports.
        external: (id: string) =>
          id.startsWith('node:') || (/^[^./\0]/.test(id) && !id.startsWith('@latch/')),
        output: { entryFileNames: 'cli.mjs', format: 'es', codeSplitting: false },
      },
    },
    ssr: { noExternal: [/^@latch\//] },
  })
  return {
    file: join(outDir, 'cli.mjs'),
    remove: () => rmSync(outDir, { recursive: true, force: true }),
  }
}
