import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import type { TestSpecification, Vitest } from 'vitest/node'
import { SpreadWaitingSequencer, spread, WAITING_FILES } from './test-order.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** Test files of two projects as Vitest's sequencer sees them on a clean clone (sizes only). */
function specs(files: { project: string; file: string; size: number }[]) {
  const projects = new Map(
    files.map(({ project }) => [
      project,
      { name: project, config: { isolate: false, sequence: { groupOrder: 0 } } },
    ]),
  )
  const sizes = new Map(files.map(({ project, file, size }) => [`${project}:${file}`, size]))
  const ctx = {
    config: { root: ROOT },
    cache: {
      getFileTestResults: () => undefined,
      getFileStats: (key: string) => ({ size: sizes.get(key) ?? 0 }),
    },
  } as unknown as Vitest
  const list = files.map(
    ({ project, file }) =>
      ({
        moduleId: `${ROOT}${file}`,
        project: projects.get(project),
      }) as unknown as TestSpecification,
  )
  return { ctx, list }
}

describe('the test files’ order', () => {
  test('behavior: waiting files are spread evenly among the others, the first at the start, none side by side', () => {
    const others = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']
    expect(spread(others, ['W', 'X'])).toEqual(['W', 'a', 'b', 'c', 'd', 'X', 'e', 'f', 'g', 'h'])
    expect(spread(others, ['W', 'X', 'Y', 'Z'])).toEqual([
      'W',
      'a',
      'b',
      'X',
      'c',
      'd',
      'Y',
      'e',
      'f',
      'Z',
      'g',
      'h',
    ])
    expect(spread(others, [])).toEqual(others)
    // More waiting files than others: every file is still there once, in its order.
    expect(spread(['a'], ['W', 'X', 'Y'])).toEqual(['W', 'X', 'a', 'Y'])
  })

  test('behavior: the sequencer keeps each project together, largest first, and puts its waiting files among the others in their listed order', async () => {
    const [webkit, firefox] = WAITING_FILES as [string, string]
    const { ctx, list } = specs([
      { project: 'server', file: 'server/src/a.test.ts', size: 900 },
      { project: 'e2e', file: firefox, size: 10 },
      { project: 'e2e', file: 'e2e/src/small.spec.ts', size: 100 },
      { project: 'e2e', file: webkit, size: 9 },
      { project: 'e2e', file: 'e2e/src/big.spec.ts', size: 500 },
      { project: 'e2e', file: 'e2e/src/middle.spec.ts', size: 300 },
      { project: 'e2e', file: 'e2e/src/least.spec.ts', size: 50 },
      { project: 'server', file: 'server/src/b.test.ts', size: 100 },
    ])
    const sorted = await new SpreadWaitingSequencer(ctx).sort(list)
    expect(sorted.map((spec) => spec.moduleId.slice(ROOT.length))).toEqual([
      webkit,
      'e2e/src/big.spec.ts',
      'e2e/src/middle.spec.ts',
      firefox,
      'e2e/src/small.spec.ts',
      'e2e/src/least.spec.ts',
      'server/src/a.test.ts',
      'server/src/b.test.ts',
    ])
  })

  test('config: every waiting file named exists (a renamed file would silently lose its place)', () => {
    expect(WAITING_FILES.filter((file) => !existsSync(`${ROOT}${file}`))).toEqual([])
  })
})
