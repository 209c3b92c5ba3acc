/**
 * The package as npm would ship it: wagmi/build.ts's output (ESM and declarations), its export
 * names, no import of this repository's private workspaces left in it, and a consumer's strict
 * TypeScript putting the connector into wagmi's createConfig against the declarations alone, on
 * @wagmi/core 3 and 2.
 */
import { execFile } from 'node:child_process'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { buildLibrary } from '../../scripts/build-library.ts'
import { CONSUMER_COMPILER_OPTIONS } from '../../scripts/packages.ts'
import { WAGMI_EXTERNAL } from '../build.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// Under the workspace's node_modules, so the consumer finds the peers as an app would: npm may
// keep this workspace's @wagmi/core there rather than at the root.
const OUT = join(ROOT, `wagmi/node_modules/.cache/latch-library/wagmi-${process.pid}`)
let dist = ''

beforeAll(async () => {
  dist = await buildLibrary({ name: 'wagmi', external: WAGMI_EXTERNAL, outDir: OUT })
}, 120_000)
afterAll(async () => {
  await rm(OUT, { recursive: true, force: true })
})

test('behavior: package.json exports the built ESM and its declarations, and ships dist', async () => {
  const pkg = JSON.parse(await readFile(join(ROOT, 'wagmi/package.json'), 'utf8'))
  expect({ exports: pkg.exports, files: pkg.files, sideEffects: pkg.sideEffects }).toEqual({
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    files: ['dist', 'README.md'],
    sideEffects: false,
  })
})

test('behavior: the built module exports exactly latch() and imports only its peers', async () => {
  const mod = await import(join(dist, 'index.js'))
  expect(Object.keys(mod).sort()).toEqual(['latch'])
  expect(mod.latch.type).toBe('latch')
  const code = await readFile(join(dist, 'index.js'), 'utf8')
  const imports = [...code.matchAll(/^import .* from "([^"]+)";?$/gm)].map((m) => m[1])
  expect(imports.sort()).toEqual(['@wagmi/core', 'viem'])
})

test('behavior: the declarations name no private workspace and type-check in a strict consumer on wagmi 3 and on wagmi 2', async () => {
  const files = (await readdir(join(dist, 'types'), { recursive: true })).filter((f) =>
    f.endsWith('.d.ts'),
  )
  for (const file of files) {
    expect(await readFile(join(dist, 'types', file), 'utf8')).not.toMatch(/['"]@latch\//)
  }
  // Against each major of the peer range: wagmi 3 as installed, wagmi 2's declarations through
  // the dev dependency @wagmi/core-v2; `loaded` says which declarations the compile used.
  const v2 = join(
    dirname(createRequire(import.meta.url).resolve('@wagmi/core-v2/package.json')),
    'dist/types/exports/index.d.ts',
  )
  const tsc = join(ROOT, 'node_modules/.bin/tsc')
  const results = await Promise.all(
    (['3', '2'] as const).map(async (major) => {
      await writeFile(
        join(dist, `consumer-${major}.ts`),
        `import { createConfig, http, version } from '@wagmi/core'
import { mainnet } from 'viem/chains'
import { latch, type LatchParameters } from './index.js'
const options: LatchParameters = { appId: 'a', modalUrl: 'https://auth.example.com', disconnect: 'local' }
export const config = createConfig({
  chains: [mainnet],
  connectors: [latch(options)],
  transports: { [mainnet.id]: http() },
})
export const loaded: \`${major}.\${string}\` = version
`,
      )
      await writeFile(
        join(dist, `tsconfig-${major}.json`),
        JSON.stringify({
          compilerOptions: {
            ...CONSUMER_COMPILER_OPTIONS,
            ...(major === '2' ? { paths: { '@wagmi/core': [v2] } } : {}),
          },
          files: [`consumer-${major}.ts`],
        }),
      )
      return promisify(execFile)(tsc, ['-p', join(dist, `tsconfig-${major}.json`)]).then(
        () => `${major}: ok`,
        (e: { stdout?: string }) => `${major}: ${e.stdout ?? String(e)}`,
      )
    }),
  )
  expect(results).toEqual(['3: ok', '2: ok'])
}, 60_000)
