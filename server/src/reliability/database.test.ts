/**
 * Reliability when the database goes away under load, on PostgreSQL: two API processes and a
 * stream of e-mail sign-ins and refreshes (the restart scenario, testing/restart-scenario.ts),
 * and mid-stream a PostgreSQL restart, a failover (the server gone for seconds), a stall, or
 * every Latch backend terminated. No process exits, nothing answered 200 is lost, requests
 * meanwhile answer 503 with Retry-After (never another 5xx), and service returns by itself.
 * The four faults run one after another on one database and one pair of processes, each with its
 * own app and users: a fault leaves the processes as they are, and the next one is as much a
 * test of them. Heavier figures: `npm run bench -- restart`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  type ControlledPostgres,
  POSTGRES_BIN,
  postgresAvailable,
  startPostgres,
} from '../testing/postgres.ts'
import {
  type ApiPair,
  describeFigures,
  type Fault,
  type Figures,
  runRestartScenario,
  startApiPair,
} from '../testing/restart-scenario.ts'

// These tests stop and freeze their server: one of their own, not the run's.
let pg: ControlledPostgres | null = null
let databaseUrl = ''
let pair: ApiPair | undefined
beforeAll(async () => {
  if (!postgresAvailable()) return
  pg = await startPostgres()
  if (!pg) return
  databaseUrl = await pg.createDatabase()
  pair = await startApiPair({ databaseUrl })
}, 90_000)
afterAll(async () => {
  await pair?.close()
  await pg?.close()
})

if (!postgresAvailable()) {
  console.warn(`reliability: PostgreSQL binaries not found under ${POSTGRES_BIN}: skipping`)
}

/** When the fault starts: the processes have served sign-ins and refreshes by then. */
const FAULT_AT_MS = 1_000
/** How long the stream goes on after a fault of `faultMs` ends (clients caught in it finish too). */
const AFTER_FAULT_MS = 1_500

/**
 * One scenario: traffic, the fault at FAULT_AT_MS, and traffic after it for as long as the fault
 * is expected to last (`faultMs`) and AFTER_FAULT_MS more. A fault that lasts longer still ends
 * before the checks: the scenario waits for it, and each client for its requests' answers.
 */
async function run(fault: Fault, faultMs: number): Promise<Figures> {
  if (!pg || !pair) throw new Error('PostgreSQL or the API processes did not start')
  const figures = await runRestartScenario({
    databaseUrl,
    pair,
    postgres: pg,
    fault,
    clients: 8,
    durationMs: FAULT_AT_MS + faultMs + AFTER_FAULT_MS,
    killAtMs: FAULT_AT_MS,
    // What expectSurvived needs, however slow a loaded machine makes the stream.
    atLeast: { signIns: 3, refreshes: 10 },
  })
  console.log(describeFigures(figures))
  return figures
}

/** What every fault must leave true. */
function expectSurvived(figures: Figures): void {
  // Real traffic on both sides of the fault.
  expect(figures.signIns).toBeGreaterThanOrEqual(3)
  expect(figures.refreshes).toBeGreaterThanOrEqual(10)
  // No process exited; no 5xx but a 503 with Retry-After; service came back by itself.
  expect(figures.processExits).toBe(0)
  expect(figures.fiveHundreds).toBe(0)
  expect(figures.readyAfter).toBe(true)
  expect(figures.recoveredMs).toBeGreaterThanOrEqual(0)
  expect(figures.recoveredMs).toBeLessThan(5_000)
  // Nothing answered 200 was lost: every refresh went through, every session still refreshes.
  expect(figures.refreshFailures).toEqual({})
  expect(figures.sessionsChecked).toBe(figures.signIns)
  expect(figures.sessionsLost).toBe(0)
  expect(figures.doubleAccepts).toBe(0)
  expect(figures.childMismatches).toBe(0)
  // Reuse detection still holds for a token two rotations old.
  expect(figures.replays).toBeGreaterThan(0)
  expect(figures.replaysAccepted).toBe(0)
  expect(figures.replaysNotRevoking).toBe(0)
}

describe.skipIf(!postgresAvailable())('reliability: the database goes away under load', () => {
  test('reliability: a PostgreSQL restart (every session ended with 57P01) takes no process down and loses no session', async () => {
    const figures = await run({ kind: 'pg-restart' }, 1_000)
    expectSurvived(figures)
    expect(figures.unavailable).toBeGreaterThan(0)
  }, 120_000)

  test('reliability: pg_terminate_backend of every Latch backend, three times, takes no process down and loses no session', async () => {
    const figures = await run({ kind: 'pg-terminate', times: 3, everyMs: 300 }, 600)
    expectSurvived(figures)
  }, 120_000)

  test('reliability: a failover (the server gone for 3 s) answers 503 with Retry-After meanwhile, /readyz follows, and service returns without a restart of Latch', async () => {
    const figures = await run({ kind: 'pg-failover', downMs: 3_000 }, 3_500)
    expectSurvived(figures)
    expect(figures.unavailable).toBeGreaterThan(0)
    expect(figures.readyFollowedFault).toBe(true)
  }, 120_000)

  test('reliability: a 3 s stall of the whole server fails no request with a 500, /readyz follows, and service returns', async () => {
    const figures = await run({ kind: 'pg-stall', ms: 3_000 }, 3_000)
    expectSurvived(figures)
    expect(figures.readyFollowedFault).toBe(true)
  }, 120_000)
})
