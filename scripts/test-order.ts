/**
 * The order in which the run's workers take the test files (vite.config.ts, `sequence`).
 *
 * Vitest runs the projects one after the other and, within a project, the files longest first
 * (by the last run's times, or by size on a clean clone). A few files spend most of their time
 * waiting rather than computing: the engine lanes drive browsers over WebDriver and wait out
 * the modal's pauses (they have no page clock), others wait for popups, fixed delays and the
 * pauses a spec checks. Side by side they leave the cores idle; beside files that compute,
 * those get the cores they leave. So each project's waiting files (WAITING_FILES) are spread
 * evenly through that project's order, the first at its start.
 *
 * Projects are kept together: a worker that takes a file of another project is started anew,
 * and the worker's shared modules and browser (isolate: false) are lost with it.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The files, relative to the repository, whose time is mostly spent waiting: a file's CPU
 * seconds (its worker and every process it starts) about half its wall time or less
 * (`LATCH_FILE_CPU`, scripts/file-cpu.ts; docs/performance.md, "The test files that wait").
 * Longest first: they take their places in this order, so the longest starts first and the
 * next one a stretch of other files later (a clean clone has no times to sort them by).
 */
export const WAITING_FILES: readonly string[] = [
  'e2e/src/engines/webkit.spec.ts',
  'e2e/src/engines/firefox.spec.ts',
  'e2e/src/wallet-connectors.spec.ts',
  'e2e/src/wallet-review.spec.ts',
  'e2e/src/origins.spec.ts',
  'e2e/src/approval-attacks.spec.ts',
]

const ROOT = new URL('../', import.meta.url).pathname

/** The file's path relative to the repository. */
const relative = (spec: TestSpecification) =>
  spec.moduleId.startsWith(ROOT) ? spec.moduleId.slice(ROOT.length) : spec.moduleId

/**
 * `others` in their order with `waiting` placed among them at even intervals, the first at the
 * start: n waiting files among m others start at positions 0, (n+m)/n, 2(n+m)/n, ...
 */
export function spread<T>(others: readonly T[], waiting: readonly T[]): T[] {
  if (waiting.length === 0) return [...others]
  const total = others.length + waiting.length
  const out: T[] = []
  let o = 0
  let w = 0
  for (let i = 0; i < total; i++) {
    const due = w < waiting.length && i >= Math.round((w * total) / waiting.length)
    if (due || o >= others.length) out.push(waiting[w++] as T)
    else out.push(others[o++] as T)
  }
  return out
}

/** Vitest's order, with each project's waiting files spread through it (see the file). */
export class SpreadWaitingSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const out: TestSpecification[] = []
    for (let start = 0; start < sorted.length; ) {
      const project = sorted[start]?.project
      let end = start
      while (end < sorted.length && sorted[end]?.project === project) end++
      const group = sorted.slice(start, end)
      const rank = (spec: TestSpecification) => WAITING_FILES.indexOf(relative(spec))
      out.push(
        ...spread(
          group.filter((spec) => rank(spec) < 0),
          group.filter((spec) => rank(spec) >= 0).sort((a, b) => rank(a) - rank(b)),
        ),
      )
      start = end
    }
    return out
  }
}
