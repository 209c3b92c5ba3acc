/**
 * The run's migrated PGlite dump alone (global-setup.ts's ensurePgliteData), for the projects
 * outside the server's that start an API on `memory://` (the modal server's tests, @latch/node's):
 * with `migratedMemory()` their servers load it instead of creating a cluster and running every
 * migration, seconds of CPU each. The run's PostgreSQL and the CLI bundle are not theirs to make.
 */
import { ensurePgliteData } from './global-setup.ts'

export default async function setup(): Promise<() => void> {
  return ensurePgliteData()
}
