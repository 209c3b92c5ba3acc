/**
 * Reliability on PostgreSQL: two API processes, a stream of e-mail sign-ins and refreshes from
 * many clients, one process killed with SIGKILL mid-stream and restarted (see scenario.ts).
 * Heavier figures: `npm run bench -- restart`.
 */
import { afterAll, expect, test } from 'vitest'
import {
  POSTGRES_BIN,
  postgresAvailable,
  type RunningPostgres,
  runPostgres,
} from '../testing/index.ts'
import { describeFigures, runRestartScenario } from '../testing/restart-scenario.ts'

let pg: RunningPostgres | null = null
afterAll(async () => {
  await pg?.close()
})

if (!postgresAvailable()) {
  console.warn(`reliability: PostgreSQL binaries not found under ${POSTGRES_BIN}: skipping`)
}

test.skipIf(!postgresAvailable())(
  'reliability: a process killed with SIGKILL mid-stream loses no answered session, answers no 5xx, and no refresh token is accepted twice outside the grace rule',
  async () => {
    pg = await runPostgres()
    if (!pg) throw new Error('PostgreSQL did not start')
    const figures = await runRestartScenario({
      databaseUrl: await pg.createDatabase(),
      clients: 12,
      durationMs: 6_000,
      killAtMs: 1_500,
      // What the checks below need, however slow a loaded machine makes the stream.
      atLeast: { signIns: 5, refreshes: 10, twoTabRaces: 1 },
    })
    console.log(describeFigures(figures))
    // Real traffic on both sides of the kill.
    expect(figures.signIns).toBeGreaterThanOrEqual(5)
    expect(figures.refreshes).toBeGreaterThanOrEqual(10)
    expect(figures.twoTabRaces).toBeGreaterThan(0)
    // The kill happened mid-stream: connections to the dead process failed and were resent.
    expect((figures.byKind.refused ?? 0) + (figures.byKind.reset ?? 0)).toBeGreaterThan(0)
    expect(figures.restartedAnswers).toBeGreaterThan(0)
    // No 5xx from any process, no refresh refused during the stream, no lost session after it.
    expect(figures.fiveHundreds).toBe(0)
    expect(figures.refreshFailures).toEqual({})
    expect(figures.sessionsChecked).toBe(figures.signIns)
    expect(figures.sessionsLost).toBe(0)
    // Each accepted token has one child, in the answers and in the database.
    expect(figures.doubleAccepts).toBe(0)
    expect(figures.childMismatches).toBe(0)
    // Outside the grace rule a replayed token is refused and ends its session.
    expect(figures.replays).toBeGreaterThan(0)
    expect(figures.replaysAccepted).toBe(0)
    expect(figures.replaysNotRevoking).toBe(0)
  },
  120_000,
)
