// @vitest-environment node
/**
 * The package as npm would ship it: react/build.ts's output (ESM and declarations), its export
 * names, no import of this repository's private workspaces left in it, and a consumer's strict
 * TypeScript compiling against the declarations alone.
 */
import { execFile } from 'node:child_process'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { buildLibrary, currentLibrary, stampOf } from '../../scripts/build-library.ts'
import { CONSUMER_COMPILER_OPTIONS } from '../../scripts/packages.ts'
import { REACT_EXTERNAL } from '../build.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// Under the repository's node_modules, so the consumer finds the peers (react) as an app would;
// one folder per process, so two runs in this tree do not build into each other.
const OUT = join(ROOT, `node_modules/.cache/latch-library/react-${process.pid}`)
let dist = ''

beforeAll(async () => {
  dist = await buildLibrary({ name: 'react', external: REACT_EXTERNAL, outDir: OUT })
}, 120_000)
afterAll(async () => {
  await rm(OUT, { recursive: true, force: true })
  await rm(stampOf(OUT), { force: true })
})

test('behavior: package.json exports the built ESM and its declarations, and ships dist', async () => {
  const pkg = JSON.parse(await readFile(join(ROOT, 'react/package.json'), 'utf8'))
  expect({ exports: pkg.exports, files: pkg.files, sideEffects: pkg.sideEffects }).toEqual({
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    files: ['dist', 'README.md'],
    sideEffects: false,
  })
})

test('behavior: the built module exports exactly the public API and imports only its peers', async () => {
  const mod = await import(join(dist, 'index.js'))
  expect(Object.keys(mod).sort()).toMatchInlineSnapshot(`
    [
      "LatchError",
      "LatchLoginButton",
      "LatchProvider",
      "useConnectWallet",
      "useFork",
      "useLatch",
      "useLogin",
      "useSendCalls",
      "useWallet",
    ]
  `)
  const code = await readFile(join(dist, 'index.js'), 'utf8')
  const imports = [...code.matchAll(/^import .* from "([^"]+)";?$/gm)].map((m) => m[1])
  expect(imports.sort()).toEqual(['react', 'react/jsx-runtime'])
})

test('behavior: the build is taken as current (currentLibrary) only with its options, while every recorded input and every output is as it was', async () => {
  const options = { name: 'react', external: REACT_EXTERNAL, outDir: OUT }
  expect(await currentLibrary(options)).toBe(OUT)
  expect(await currentLibrary({ ...options, external: ['react'] })).toBeNull()
  // An output the build did not write.
  await writeFile(join(OUT, 'extra.js'), '')
  expect(await currentLibrary(options)).toBeNull()
  await rm(join(OUT, 'extra.js'))
  expect(await currentLibrary(options)).toBe(OUT)
  // A source other than the one built from: its recorded hash no longer matches the file's.
  const stamp = await readFile(stampOf(OUT), 'utf8')
  const edited = JSON.parse(stamp) as { inputs: Record<string, string> }
  expect(Object.keys(edited.inputs)).toContain('react/src/index.ts')
  expect(Object.keys(edited.inputs)).toContain('host-sdk/src/index.ts')
  edited.inputs['react/src/index.ts'] = '0'.repeat(64)
  await writeFile(stampOf(OUT), JSON.stringify(edited))
  expect(await currentLibrary(options)).toBeNull()
  await writeFile(stampOf(OUT), stamp)
  expect(await currentLibrary(options)).toBe(OUT)
})

test('behavior: the declarations name no private workspace and type-check in a strict consumer', async () => {
  const files = (await readdir(join(dist, 'types'), { recursive: true })).filter((f) =>
    f.endsWith('.d.ts'),
  )
  for (const file of files) {
    expect(await readFile(join(dist, 'types', file), 'utf8')).not.toMatch(/['"]@latch\//)
  }
  await writeFile(
    join(dist, 'consumer.tsx'),
    `import { LatchError, LatchProvider, useLatch, useWallet, type User, type UseLatch } from './index.js'
export function Who(): JSX.Element {
  const latch: UseLatch = useLatch()
  const user: User | null = latch.user
  const { wallet, signMessage } = useWallet()
  void signMessage('hi', { title: 'Sign' }).catch((e: LatchError) => e.code)
  return <LatchProvider appId="a" modalUrl="https://auth.example.com">{user?.id}{wallet?.address}</LatchProvider>
}
import type { JSX } from 'react'
`,
  )
  await writeFile(
    join(dist, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        ...CONSUMER_COMPILER_OPTIONS,
        jsx: 'react-jsx',
      },
      files: ['consumer.tsx'],
    }),
  )
  const tsc = join(ROOT, 'node_modules/.bin/tsc')
  const result = await promisify(execFile)(tsc, ['-p', join(dist, 'tsconfig.json')]).then(
    () => 'ok',
    (e: { stdout?: string }) => e.stdout ?? String(e),
  )
  expect(result).toBe('ok')
}, 60_000)
