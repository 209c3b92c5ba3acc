/**
 * The API's package route (ops/packages.ts) over a folder of tarballs, and the check each public
 * package passes before it is served or published (scripts/packages.ts). The packages as
 * built, packed and installed are e2e/src/examples.spec.ts's.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Manifest, packageProblems } from '../../../scripts/packages.ts'
import { PUBLIC_PACKAGES, packageRoutes, SERVER_VERSION, tarballName } from './packages.ts'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
let dir = ''
const bytes = new Map<string, Buffer>()

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'latch-packages-'))
  for (const { name } of PUBLIC_PACKAGES) {
    const file = tarballName(name, '1.2.3')
    bytes.set(name, Buffer.from(`a tarball of ${name}`))
    await writeFile(join(dir, file), bytes.get(name) ?? '')
  }
  // Beside the tarballs, never served: only the names the route lists are.
  await writeFile(join(dir, 'secret.txt'), 'not a package')
})
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

const routes = () => packageRoutes({ dir, version: '1.2.3', publicUrl: 'https://api.example.com' })
const sri = (b: Buffer | undefined) =>
  `sha512-${createHash('sha512')
    .update(b ?? '')
    .digest('base64')}`

describe('GET /packages', () => {
  test('behavior: the index lists each public package at the server version, with its URL, integrity and install command', async () => {
    const res = await routes().request('/packages/')
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-cache')
    const body = (await res.json()) as { version: string; packages: Record<string, unknown>[] }
    expect(body.version).toBe('1.2.3')
    expect(body.packages.map((p) => p.name)).toEqual([
      '@latch/host-sdk',
      '@latch/react',
      '@latch/wagmi',
      '@latch/node',
    ])
    expect(body.packages[1]).toEqual({
      name: '@latch/react',
      version: '1.2.3',
      url: 'https://api.example.com/packages/latch-react-1.2.3.tgz',
      latestUrl: 'https://api.example.com/packages/latch-react.tgz',
      integrity: sri(bytes.get('@latch/react')),
      shasum: createHash('sha1')
        .update(bytes.get('@latch/react') ?? '')
        .digest('hex'),
      size: bytes.get('@latch/react')?.byteLength,
      install: 'npm install https://api.example.com/packages/latch-react-1.2.3.tgz',
    })
    expect((await routes().request('/packages')).status).toBe(200)
  })

  test('behavior: a tarball by its versioned name is immutable, by its plain name revalidated; both carry the integrity', async () => {
    for (const [path, cache] of [
      ['/packages/latch-node-1.2.3.tgz', 'public, max-age=31536000, immutable'],
      ['/packages/latch-node.tgz', 'public, no-cache'],
    ] as const) {
      const res = await routes().request(path)
      expect(res.status).toBe(200)
      expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes.get('@latch/node'))
      const integrity = sri(bytes.get('@latch/node'))
      expect(Object.fromEntries(res.headers)).toMatchObject({
        'content-type': 'application/gzip',
        'cache-control': cache,
        etag: `"${integrity}"`,
        'repr-digest': `sha-512=:${integrity.slice('sha512-'.length)}:`,
        'content-disposition': 'attachment; filename="latch-node-1.2.3.tgz"',
        'x-content-type-options': 'nosniff',
      })
      const again = await routes().request(path, {
        headers: { 'if-none-match': `"${integrity}"` },
      })
      expect(again.status).toBe(304)
    }
  })

  test('error: an unknown name, another version, a file beside the tarballs or a path that climbs answers 404 JSON naming what is served', async () => {
    for (const path of [
      '/packages/latch-shared.tgz',
      '/packages/latch-react-0.0.1.tgz',
      '/packages/secret.txt',
      '/packages/..%2Fsecret.txt',
      '/packages/%2e%2e%2f%2e%2e%2fpackage.json',
      '/packages/latch-react.tgz%00',
    ]) {
      const res = await routes().request(path)
      expect(res.status, path).toBe(404)
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe('not_found')
      expect(body.error.message).toContain('it serves version 1.2.3 as latch-host-sdk-1.2.3.tgz')
      expect(body.error.message).toContain('index: /packages/')
    }
    // Nothing outside the route's names is reached at all (Hono normalises the dots away).
    const climbed = await routes().request('/packages/../package.json')
    expect(climbed.status).toBe(404)
  })

  test('error: a server that has not built its packages says so and names the command', async () => {
    const empty = packageRoutes({ dir: join(dir, 'missing'), version: '1.2.3' })
    for (const path of ['/packages/', '/packages/latch-react.tgz']) {
      const res = await empty.request(path)
      expect(res.status).toBe(404)
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(body.error.message).toMatch(/has not built its packages .*run npm run build/)
    }
  })
})

describe('the check before a package is served or published', () => {
  const good = {
    name: '@latch/example',
    version: '1.2.3',
    license: 'MIT',
    repository: { type: 'git', url: 'git+https://example.com/latch.git', directory: 'example' },
    publishConfig: { access: 'public' },
    exports: {
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './extra': { types: './dist/extra.d.ts', default: './dist/extra.js' },
    },
    types: './dist/index.d.ts',
    peerDependencies: { react: '^19.0.0' },
  }
  const files = [
    'README.md',
    'package.json',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/extra.js',
    'dist/extra.d.ts',
  ]
  const code: Record<string, string> = {
    'dist/index.js': `import { useState } from "react";\nimport { x } from "./extra.js";\nexport { x };`,
    'dist/extra.js': `import { jsx } from 'react/jsx-runtime'\nconst fs = await import("node:fs");\nexport const x = 1`,
  }
  const read = async (path: string) => code[path] ?? ''
  const problems = (manifest: Manifest, held = files, source = read) =>
    packageProblems(manifest, 'example', held, source, '1.2.3')

  test('behavior: a package whose every entry is built and shipped, with its metadata, passes', async () => {
    expect(await problems(good)).toEqual([])
  })

  test('error: an exports target the tarball lacks fails the check', async () => {
    expect(
      await problems(
        good,
        files.filter((f) => f !== 'dist/extra.js'),
      ),
    ).toEqual(['@latch/example names ./dist/extra.js, which its tarball does not hold'])
    expect(
      await problems(
        good,
        files.filter((f) => f !== 'dist/index.d.ts'),
      ),
    ).toEqual([
      '@latch/example names ./dist/index.d.ts, which its tarball does not hold',
      '@latch/example names ./dist/index.d.ts, which its tarball does not hold',
    ])
  })

  test('error: a TypeScript source as an entry, an undeclared import, or missing metadata fails the check', async () => {
    expect(await problems({ ...good, exports: { '.': './src/index.ts' } })).toEqual([
      '@latch/example names a TypeScript source as an entry: ./src/index.ts',
    ])
    expect(
      await problems(good, files, async (path) =>
        path === 'dist/index.js' ? `import { LatchError } from "@latch/shared"` : '',
      ),
    ).toEqual(["@latch/example's dist/index.js imports @latch/shared, which it does not declare"])
    const { license: _l, publishConfig: _p, ...bare } = good
    expect(await problems({ ...bare, private: true, version: '1.0.0' })).toEqual([
      '@latch/example is private',
      "@latch/example's license is not MIT",
      '@latch/example is version 1.0.0, the server 1.2.3',
      '@latch/example has no publishConfig.access "public" (a scoped package is restricted)',
    ])
  })

  test('behavior: the four public packages carry the metadata the check asks for, at the server version', async () => {
    expect(SERVER_VERSION).toBe(
      JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).version,
    )
    for (const { dir: folder } of PUBLIC_PACKAGES) {
      const manifest = JSON.parse(await readFile(join(ROOT, folder, 'package.json'), 'utf8'))
      // The targets themselves exist once built: `npm run check:packages` (.ci/run) packs them.
      const held = ['README.md', ...(JSON.stringify(manifest.exports).match(/\.\/[^"]+/g) ?? [])]
      const metadata = await packageProblems(
        manifest,
        folder,
        held.map((f) => f.replace(/^\.\//, '')),
        async () => '',
      )
      expect(metadata, folder).toEqual([])
    }
  })
})

test('behavior: every README installs the packages from the served tarballs of this version, none from the registry while they are not on it', async () => {
  const docs = ['README.md', 'docs/production.md']
  for (const dir of ['.', 'examples']) {
    for (const entry of await readdir(join(ROOT, dir), { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === 'node_modules' || entry.name.startsWith('.')) {
        continue
      }
      const readme = join(dir, entry.name, 'README.md')
      if (await readFile(join(ROOT, readme)).catch(() => null)) docs.push(readme)
    }
  }
  const served = PUBLIC_PACKAGES.map(({ name }) => tarballName(name, SERVER_VERSION))
  let urls = 0
  for (const doc of docs) {
    const text = await readFile(join(ROOT, doc), 'utf8')
    for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
      for (const line of (block[1] ?? '').split('\n')) {
        if (!/^npm (install|i) /.test(line)) continue
        expect(line, `${doc}: ${line}`).not.toMatch(/ @latch\//)
      }
    }
    for (const [, file] of text.matchAll(/\/packages\/(latch-[a-z-]+-\d[^\s`'"]*\.tgz)/g)) {
      expect(served, `${doc} installs ${file}`).toContain(file)
      urls++
    }
  }
  // The root README, four package READMEs, the React example and the production guide.
  expect(urls).toBeGreaterThanOrEqual(10)
})
