// @vitest-environment node
/**
 * @latch/host-sdk as npm ships it: buildHostSdkPackage's dist/npm (what `exports` names), its
 * export names, no import left to resolve (shared and penpal are bundled in; the wallet bridge
 * and the provider come from the modal URL at run time), and a consumer's strict TypeScript
 * compiling against the declarations alone. What the tarball holds is checked by
 * `npm run check:packages` (scripts/packages.ts).
 */
import { execFile } from 'node:child_process'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { CONSUMER_COMPILER_OPTIONS, importedPackages } from '../../scripts/packages.ts'
import { buildHostSdkPackage } from '../build.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// Under the repository's node_modules, where a consumer finds zod's types as an app with
// `skipLibCheck: false` must (host-sdk/README.md); one folder per process.
const OUT = join(ROOT, `node_modules/.cache/latch-library/host-sdk-${process.pid}`)
let dist = ''

beforeAll(async () => {
  dist = await buildHostSdkPackage({ outDir: OUT })
}, 120_000)
afterAll(async () => {
  await rm(OUT, { recursive: true, force: true })
})

test('behavior: package.json exports the built ESM and its declarations from dist/npm, the files it ships', async () => {
  const pkg = JSON.parse(await readFile(join(ROOT, 'host-sdk/package.json'), 'utf8'))
  expect({
    exports: pkg.exports,
    types: pkg.types,
    files: pkg.files,
    private: pkg.private,
  }).toEqual({
    exports: { '.': { types: './dist/npm/index.d.ts', default: './dist/npm/index.js' } },
    types: './dist/npm/index.d.ts',
    files: ['dist/npm', 'README.md'],
    private: undefined,
  })
  expect(pkg.dependencies).toBeUndefined()
})

test('behavior: the built module exports createLatch and LatchError and imports nothing', async () => {
  const mod = await import(join(dist, 'index.js'))
  expect(Object.keys(mod).sort()).toEqual(['LatchError', 'createLatch'])
  expect(importedPackages(await readFile(join(dist, 'index.js'), 'utf8'))).toEqual([])
  // Importing it touched neither window nor document (it runs on a server's render too).
  expect(typeof mod.createLatch).toBe('function')
})

test('behavior: the declarations name no private workspace and type-check in a strict consumer', async () => {
  const files = (await readdir(join(dist, 'types'), { recursive: true })).filter((f) =>
    f.endsWith('.d.ts'),
  )
  for (const file of files) {
    expect(await readFile(join(dist, 'types', file), 'utf8')).not.toMatch(/['"]@latch\//)
  }
  await writeFile(
    join(dist, 'consumer.ts'),
    `import { createLatch, LatchError, type LatchClient, type User } from './index.js'
export async function signIn(): Promise<User | null> {
  const latch: LatchClient = createLatch({ appId: 'a', modalUrl: 'https://auth.example.com' })
  await latch.ready
  try {
    return (await latch.login()).user
  } catch (e) {
    if (e instanceof LatchError && e.code === 'login_exited') return null
    throw e
  }
}
// @ts-expect-error the client has no such member: the declarations are real, not any
export const wrong = (l: LatchClient) => l.nonexistent
`,
  )
  await writeFile(
    join(dist, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        ...CONSUMER_COMPILER_OPTIONS,
      },
      files: ['consumer.ts'],
    }),
  )
  const tsc = join(ROOT, 'node_modules/.bin/tsc')
  const result = await promisify(execFile)(tsc, ['-p', join(dist, 'tsconfig.json')]).then(
    () => 'ok',
    (e: { stdout?: string }) => e.stdout ?? String(e),
  )
  expect(result).toBe('ok')
}, 60_000)
