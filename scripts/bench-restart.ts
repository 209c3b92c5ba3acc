/**
 * `npm run bench -- restart [seconds] [clients] [faults]`: the reliability scenario at a heavier
 * load than its tests (server/src/testing/restart-scenario.ts): two API processes on one
 * PostgreSQL, e-mail sign-ins and refreshes from many clients, and a fault a third of the way
 * in, once per fault named (comma-separated; default all):
 *   kill-process  one API process killed with SIGKILL and started again on its port
 *   pg-restart    PostgreSQL's fast shutdown (57P01 to every session) and a start at once
 *   pg-terminate  pg_terminate_backend of every Latch backend, 5 times 500 ms apart
 *   pg-failover   PostgreSQL gone for 15 s, then back
 *   pg-stall      every PostgreSQL process stopped for 5 s
 * Prints the figures of each and a table row for docs/performance.md; fails when a figure breaks
 * a reliability promise (a process exit, a 5xx other than a 503 with Retry-After, a refresh
 * refused, a lost session, a token accepted into two children).
 */

import { startPostgres } from '../server/src/testing/index.ts'
import {
  describeFigures,
  type Fault,
  percentile,
  runRestartScenario,
} from '../server/src/testing/restart-scenario.ts'

const FAULTS: Record<string, Fault> = {
  'kill-process': { kind: 'kill-process' },
  'pg-restart': { kind: 'pg-restart' },
  'pg-terminate': { kind: 'pg-terminate', times: 5, everyMs: 500 },
  'pg-failover': { kind: 'pg-failover', downMs: 15_000 },
  'pg-stall': { kind: 'pg-stall', ms: 5_000 },
}

export default async function run(args: string[]): Promise<void> {
  const seconds = Number(args[0] ?? 30)
  const clients = Number(args[1] ?? 32)
  const names = (args[2] ?? Object.keys(FAULTS).join(',')).split(',')
  const unknown = names.filter((n) => !(n in FAULTS))
  if (unknown.length > 0) {
    console.error(
      `restart: unknown fault ${unknown.join(', ')} (${Object.keys(FAULTS).join(', ')})`,
    )
    process.exitCode = 2
    return
  }
  const pg = await startPostgres()
  if (!pg) {
    console.log('restart: PostgreSQL binaries not found under /usr/lib/postgresql/15/bin: skipped')
    return
  }
  const rows: string[] = []
  try {
    for (const name of names) {
      const fault = FAULTS[name] as Fault
      const started = performance.now()
      const figures = await runRestartScenario({
        databaseUrl: await pg.createDatabase(),
        postgres: pg,
        fault,
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
      rows.push(
        `| ${name} | ${figures.faultMs} | ${figures.requests} | ${figures.signIns} | ${figures.refreshes} | ${figures.unavailable} | ${figures.fiveHundreds} | ${figures.processExits} | ${figures.sessionsLost} | ${figures.readyFollowedFault ? 'yes' : 'no'} | ${figures.recoveredMs} | ${percentile(figures, 50)} / ${percentile(figures, 99)} |`,
      )
      const broken =
        figures.processExits +
        figures.fiveHundreds +
        figures.sessionsLost +
        figures.doubleAccepts +
        figures.childMismatches +
        figures.replaysAccepted +
        figures.replaysNotRevoking +
        Object.keys(figures.refreshFailures).length +
        (figures.readyAfter ? 0 : 1)
      if (broken > 0) {
        console.error(`[restart] ${name}: a reliability promise was broken (see the figures above)`)
        process.exitCode = 1
      }
    }
  } finally {
    await pg.close()
  }
  console.log(
    '\n| fault | fault ms | requests | sign-ins | refreshes | 503 + Retry-After | other 5xx | process exits | sessions lost | /readyz followed | first 200 after (ms) | p50 / p99 ms |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const row of rows) console.log(row)
}
