/**
 * What every e2e spec file needs, made once in Vitest's main process before the workers start:
 * the frontend build (build.ts); the run's PostgreSQL with its migrated template, of which each
 * harness's API server gets a copy (database.ts); and the run's migrated PGlite dump, which a
 * harness loads into an in-memory PGlite where this machine has no PostgreSQL. The record of
 * the documents axe passed in the run (axe-passes.ts) is removed when the run ends. The server
 * tests' setup shares both databases (either setup may come first). Left to the workers, each
 * would make them when its first spec file starts, the workers of a run side by side, doing the
 * same work on the cores the other one needs.
 */
import { ensurePgliteData, ensureRunPostgres } from '../../server/src/testing/global-setup.ts'
import { removeAxePasses } from './axe-passes.ts'
import { buildFrontendOnce } from './build.ts'

export default async function setup(): Promise<() => Promise<void>> {
  // The run's id as the workers (children of this process) compute it: what is made here is
  // theirs.
  process.env.LATCH_E2E_RUN_ID ??= `ppid-${process.pid}`
  const made = await Promise.allSettled([
    buildFrontendOnce(),
    ensurePgliteData(),
    ensureRunPostgres(),
  ] as const)
  const [, data, postgres] = made
  const teardown = async () => {
    removeAxePasses()
    if (data.status === 'fulfilled') data.value()
    if (postgres.status === 'fulfilled') await postgres.value()
  }
  const failed = made.find((m) => m.status === 'rejected')
  if (failed) {
    await teardown()
    throw failed.reason
  }
  return teardown
}
