/**
 * `npm run bench -- restart [seconds] [clients]`: the reliability scenario at a heavier load
 * than its test (server/src/testing/restart-scenario.ts): two API processes on one PostgreSQL, e-mail
 * sign-ins and refreshes from many clients, one process killed with SIGKILL a third of the way
 * in and restarted. Prints the figures and the request rate; fails when a figure breaks the
 * reliability promises (a 5xx, a lost session, a token accepted into two children).
 */

import { startPostgres } from '../server/src/testing/index.ts'
import { describeFigures, runRestartScenario } from '../server/src/testing/restart-scenario.ts'

export default async function run(args: string[]): Promise<void> {
  const seconds = Number(args[0] ?? 30)
  const clients = Number(args[1] ?? 32)
  const pg = await startPostgres()
  if (!pg) {
    console.log('restart: PostgreSQL binaries not found under /usr/lib/postgresql/15/bin: skipped')
    return
  }
  try {
    const started = performance.now()
    const figures = await runRestartScenario({
      databaseUrl: await pg.createDatabase(),
      clients,
      durationMs: seconds * 1000,
      killAtMs: (seconds * 1000) / 3,
      refreshesPerSession: 8,
    })
    const elapsed = (performance.now() - started) / 1000
    console.log(describeFigures(figures))
    console.log(
      `[restart] ${clients} clients for ${seconds} s: ${Math.round(figures.requests / elapsed)} requests/s over the whole run (start-up and checks included)`,
    )
    const broken =
      figures.fiveHundreds +
      figures.sessionsLost +
      figures.doubleAccepts +
      figures.childMismatches +
      figures.replaysAccepted +
      figures.replaysNotRevoking +
      Object.keys(figures.refreshFailures).length
    if (broken > 0) {
      console.error('[restart] a reliability promise was broken (see the figures above)')
      process.exitCode = 1
    }
  } finally {
    await pg.close()
  }
}
