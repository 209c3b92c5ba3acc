/**
 * Where the run's workers record the documents axe passed (axe.ts, `expectAccessible`): a
 * folder per run, a file per snapshot's hash. Kept apart from axe.ts so that the global setup,
 * which removes it when the run ends, does not load the harness.
 */
import { readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CACHE_DIR, runId } from './build.ts'

const AXE_PASSES_DIR = join(CACHE_DIR, 'axe-passes')
/** A run killed before its teardown leaves its folder; the next run removes it after this. */
const KEEP_ABANDONED_MS = 24 * 60 * 60_000

/** This run's folder (Vitest's workers share the run's id: build.ts, `runId`). */
export const runAxePassesDir = () => join(AXE_PASSES_DIR, runId().replace(/[^A-Za-z0-9-]/g, '_'))

/** Removes this run's record, and any other run's left for longer than KEEP_ABANDONED_MS. */
export function removeAxePasses(): void {
  rmSync(runAxePassesDir(), { recursive: true, force: true })
  let runs: string[] = []
  try {
    runs = readdirSync(AXE_PASSES_DIR)
  } catch {
    return
  }
  for (const name of runs) {
    const dir = join(AXE_PASSES_DIR, name)
    try {
      if (Date.now() - statSync(dir).mtimeMs > KEEP_ABANDONED_MS) {
        rmSync(dir, { recursive: true, force: true })
      }
    } catch {
      // Removed meanwhile by another run.
    }
  }
}
