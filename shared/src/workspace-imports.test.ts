// @vitest-environment node
/**
 * Workspaces meet by package name: no shipped file of one reaches into another by a relative
 * path. Such an import works in this repository only; it bypasses the other workspace's exports
 * (what it promises), hides the dependency from its package.json and breaks once either is
 * packaged. Tests, test helpers and the e2e workspace are not shipped and may drive another
 * workspace's sources (the e2e harness builds the frontends from them).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Imports of a relative path: static, re-exports, dynamic, and the module mocks of tests. */
const SPECIFIER =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\bvi\.(?:mock|doMock|importActual)\s*\(\s*)(['"])(\.{1,2}\/[^'"]*)\1/g

/**
 * Whether `file` is part of what a workspace ships or runs in production: not a test, and not
 * a workspace's `build.ts`, which runs in the repository and shares the repository's build
 * helpers in `scripts/`.
 */
function shipped(file: string): boolean {
  return !(
    /\.(test|spec)\.tsx?$/.test(file) ||
    /^[^/]+\/build\.ts$/.test(file) ||
    /(^|\/)(test|testing)\//.test(file) ||
    file.startsWith('e2e/')
  )
}

/**
 * Relative paths across workspaces found in `files` (repository-relative), as
 * `file → target`; `workspaces` are the folders of the root package.json's `workspaces`.
 */
function crossings(
  files: readonly string[],
  workspaces: readonly string[],
  read: (file: string) => string,
): string[] {
  const owner = (file: string) =>
    workspaces
      .filter((w) => file === w || file.startsWith(`${w}/`))
      .sort((a, b) => b.length - a.length)[0]
  const found: string[] = []
  for (const file of files) {
    const home = owner(file)
    if (!home || !shipped(file)) continue
    for (const [, , spec] of read(file).matchAll(SPECIFIER)) {
      if (!spec) continue
      const target = relative(ROOT, resolve(ROOT, dirname(file), spec))
        .split(sep)
        .join('/')
      if (owner(target) !== home) found.push(`${file} → ${target}`)
    }
  }
  return found
}

test('behavior: no shipped file of a workspace imports another workspace by a relative path', () => {
  const { workspaces } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    workspaces: string[]
  }
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '*.ts', '*.tsx'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean)
  const read = (file: string) => {
    try {
      return readFileSync(join(ROOT, file), 'utf8')
    } catch {
      return '' // listed but deleted in the working tree
    }
  }
  expect(crossings(files, workspaces, read)).toEqual([])
})

test('error: the check sees a relative path from shipped code into a sibling workspace, not one inside it or from a test', () => {
  const sources: Record<string, string> = {
    'server/src/a.ts': "import { x } from '../../host-sdk/src/frame.ts'\nimport './b.ts'",
    'server/src/b.ts': "export * from '../../server/src/a.ts'",
    'wagmi/src/c.ts': "const m = await import('../../shared/src/index.ts')",
    'wagmi/src/c.test.ts': "import { y } from '../../host-sdk/src/provider/provider.ts'",
  }
  const read = (file: string) => sources[file] ?? ''
  expect(crossings(Object.keys(sources), ['server', 'host-sdk', 'shared', 'wagmi'], read)).toEqual([
    'server/src/a.ts → host-sdk/src/frame.ts',
    'wagmi/src/c.ts → shared/src/index.ts',
  ])
})
