/**
 * What every e2e spec file needs, made once in Vitest's main process before the workers start:
 * the frontend build (build.ts) and the run's migrated PGlite dump, which each harness loads
 * into an in-memory PGlite (database.ts) and which the server tests' setup shares. Left to the
 * workers, each would make both when its first spec file starts, the workers of a run side by
 * side, doing the same work on the cores the other one needs.
 */
import { ensurePgliteData } from '../../server/src/testing/global-setup.ts'
import { buildFrontendOnce } from './build.ts'

export default async function setup(): Promise<() => void> {
  // The run's id as the workers (children of this process) compute it: what is made here is
  // theirs.
  process.env.LATCH_E2E_RUN_ID ??= `ppid-${process.pid}`
  const [, removeData] = await Promise.all([buildFrontendOnce(), ensurePgliteData()])
  return removeData
}
