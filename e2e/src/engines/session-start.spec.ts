/**
 * The WebKit lane's session start (driver.ts, `startSession`): a start that does not finish in
 * time stops its driver and another driver tries; after the last try the error says how many
 * did not start.
 */
import { expect, test } from 'vitest'
import { startSession } from './driver.ts'

interface FakeDriver {
  id: number
  stopped: boolean
}

/** Drivers numbered from 1, each stopped by `stop`; `starts[n]` is what driver n's start does. */
function fakeDrivers(starts: Record<number, 'hang' | 'ok'>) {
  const launched: FakeDriver[] = []
  return {
    launched,
    start: (driver: FakeDriver) =>
      starts[driver.id] === 'ok'
        ? Promise.resolve(`session on ${driver.id}`)
        : new Promise<string>(() => {}),
    reuse: () => undefined,
    launch: async () => {
      const driver = { id: launched.length + 1, stopped: false }
      launched.push(driver)
      return driver
    },
    stop: async (driver: FakeDriver) => {
      driver.stopped = true
    },
  }
}

test('behavior: a start that hangs stops its driver, and the next driver starts the session', async () => {
  const d = fakeDrivers({ 1: 'hang', 2: 'ok' })
  const { server, session } = await startSession(d.start, d.reuse, d.launch, d.stop, {
    ms: 50,
    tries: 3,
  })
  expect(session).toBe('session on 2')
  expect(server.id).toBe(2)
  expect(d.launched.map((x) => x.stopped)).toEqual([true, false])
})

test('error: after the last try the start rejects, saying how many did not start, with every driver stopped', async () => {
  const d = fakeDrivers({})
  const started = startSession(d.start, d.reuse, d.launch, d.stop, { ms: 50, tries: 2 })
  await expect(started).rejects.toThrow('2 MiniBrowser sessions did not start')
  expect(d.launched.map((x) => x.stopped)).toEqual([true, true])
})

test('behavior: an idle driver is tried first', async () => {
  const d = fakeDrivers({ 7: 'ok' })
  const idle = { id: 7, stopped: false }
  const { server } = await startSession(d.start, () => idle, d.launch, d.stop, { ms: 50 })
  expect(server).toBe(idle)
  expect(d.launched).toEqual([])
})
