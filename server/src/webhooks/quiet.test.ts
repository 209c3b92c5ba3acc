/**
 * The delivery loop's log: a process whose apps have no webhook endpoint says nothing about
 * webhooks, even while the database fails under it; with an endpoint, a failing pass is
 * reported.
 */
import { expect, test } from 'vitest'
import { createAppRecord } from '../apps/service.ts'
import { openServices } from '../index.ts'
import { runPgliteData } from '../testing/global-setup.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { addEndpoint } from './endpoints.ts'
import { startWebhookWorker } from './worker.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A worker polling every 20 ms over a database that is then closed under it. */
async function logsWhenTheDatabaseFails(withEndpoint: boolean): Promise<string[]> {
  const logs: string[] = []
  const services = await openServices({
    env: { NODE_ENV: 'test', DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET },
    log: (line) => logs.push(line),
    pgliteData: runPgliteData(),
  })
  const stop = startWebhookWorker(services.deps, { pollMs: 20 })
  try {
    if (withEndpoint) {
      const app = await createAppRecord(services.deps, {
        name: 'Hooks',
        allowedOrigins: ['https://shop.example'],
      })
      await addEndpoint(services.deps, app.id, { url: 'https://hooks.example/latch' })
    }
    // A few quiet passes, then the database goes away under the loop.
    await sleep(200)
    await services.close()
    await sleep(300)
  } finally {
    await stop()
  }
  return logs.filter((l) => l.includes('webhook'))
}

test('behavior: with no webhook endpoint, a failing database brings no webhook line to the log', async () => {
  expect(await logsWhenTheDatabaseFails(false)).toEqual([])
}, 60_000)

test('behavior: with an endpoint, a pass that fails is reported', async () => {
  const lines = await logsWhenTheDatabaseFails(true)
  expect(lines.length).toBeGreaterThan(0)
  expect(lines[0]).toMatch(/^\[latch\] webhook delivery failed: /)
}, 60_000)
