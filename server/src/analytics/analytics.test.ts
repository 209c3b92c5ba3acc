import { expect, test } from 'vitest'
import { ConfigError, loadConfig } from '../config.ts'
import { sweep } from '../sweep.ts'
import { describeBackends, freshIp, TEST_SECRET, type TestServer } from '../testing/test-server.ts'
import { ANALYTICS_IP_LIMIT, MAX_PAYLOAD_BYTES } from './routes.ts'

const DAY = 24 * 60 * 60_000

function track(s: TestServer, appId: string, ip: string, payload: Record<string, unknown> = {}) {
  return s.request('/analytics_events', {
    appId,
    ip,
    body: { event_name: 'modal_open', client_id: 'client-1', payload },
  })
}

async function stored(s: TestServer, appId: string): Promise<number> {
  const rows = await s.deps.db
    .selectFrom('analytics_events')
    .select('id')
    .where('app_id', '=', appId)
    .execute()
  return rows.length
}

describeBackends('analytics events', (get) => {
  test('attack: a payload over 2 KB answers 413 and is not stored; one just under is', async () => {
    const s = get()
    const app = await s.newApp()
    // {"note":"..."} is 11 bytes around the text.
    const fits = { note: 'x'.repeat(MAX_PAYLOAD_BYTES - 11) }
    expect((await track(s, app.id, freshIp(), fits)).status).toBe(200)
    const big = await track(s, app.id, freshIp(), { note: 'x'.repeat(MAX_PAYLOAD_BYTES - 10) })
    expect(big.status).toBe(413)
    expect(big.body).toMatchObject({
      error: { code: 'payload_too_large', message: 'Analytics payload is over 2 KB' },
    })
    // Bytes, not characters: 700 three-byte characters are 2100 bytes.
    expect((await track(s, app.id, freshIp(), { note: '€'.repeat(700) })).status).toBe(413)
    expect(await stored(s, app.id)).toBe(1)
  })

  test('attack: one IP past its budget answers 429 with Retry-After; another IP still records', async () => {
    const s = get()
    const app = await s.newApp()
    const ip = freshIp()
    await s.clock.frozen(async () => {
      for (let i = 0; i < ANALYTICS_IP_LIMIT.max; i++) {
        expect((await track(s, app.id, ip)).status).toBe(200)
      }
      const over = await track(s, app.id, ip)
      expect(over.status).toBe(429)
      expect(over.body).toMatchObject({ error: { code: 'too_many_requests' } })
      expect(over.headers.get('retry-after')).toBe(String(ANALYTICS_IP_LIMIT.windowMs / 1000))
      expect((await track(s, app.id, freshIp())).status).toBe(200)
    })
    expect(await stored(s, app.id)).toBe(ANALYTICS_IP_LIMIT.max + 1)
  })

  test('attack: many IPs together stop at the app’s hourly budget; other apps are unaffected', async () => {
    const s = get()
    const app = await s.newApp()
    const before = s.deps.config.analyticsAppHourly
    s.deps.config.analyticsAppHourly = 5
    try {
      for (let i = 0; i < 5; i++) expect((await track(s, app.id, freshIp())).status).toBe(200)
      expect((await track(s, app.id, freshIp())).status).toBe(429)
      const other = await s.newApp()
      expect((await track(s, other.id, freshIp())).status).toBe(200)
    } finally {
      s.deps.config.analyticsAppHourly = before
    }
  })

  test('behavior: the sweep deletes events past the retention and keeps younger ones', async () => {
    const s = get()
    const app = await s.newApp()
    expect((await track(s, app.id, freshIp(), { n: 'old' })).status).toBe(200)
    s.clock.advance(31 * DAY)
    expect((await track(s, app.id, freshIp(), { n: 'young' })).status).toBe(200)
    await sweep(s.deps.db, s.clock, { analyticsRetentionDays: 30 })
    const left = await s.deps.db
      .selectFrom('analytics_events')
      .select('payload')
      .where('app_id', '=', app.id)
      .execute()
    expect(left.map((r) => r.payload)).toEqual([{ n: 'young' }])
    // The default keeps 90 days.
    s.clock.advance(89 * DAY)
    await sweep(s.deps.db, s.clock)
    expect(await stored(s, app.id)).toBe(1)
    s.clock.advance(2 * DAY)
    await sweep(s.deps.db, s.clock)
    expect(await stored(s, app.id)).toBe(0)
  })
})

test('behavior: retention and the per-app cap come from the environment; bad values stop the server', () => {
  const base = { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET }
  expect(loadConfig(base)).toMatchObject({ analyticsRetentionDays: 90, analyticsAppHourly: 20_000 })
  expect(
    loadConfig({ ...base, LATCH_ANALYTICS_RETENTION_DAYS: '30', LATCH_ANALYTICS_APP_HOURLY: '50' }),
  ).toMatchObject({ analyticsRetentionDays: 30, analyticsAppHourly: 50 })
  expect(loadConfig(base)).toMatchObject({ auditRetentionDays: 365 })
  expect(loadConfig({ ...base, LATCH_AUDIT_RETENTION_DAYS: '30' })).toMatchObject({
    auditRetentionDays: 30,
  })
  expect(() => loadConfig({ ...base, LATCH_AUDIT_RETENTION_DAYS: '0' })).toThrow(ConfigError)
  expect(() => loadConfig({ ...base, LATCH_ANALYTICS_RETENTION_DAYS: '0' })).toThrow(ConfigError)
  expect(() => loadConfig({ ...base, LATCH_ANALYTICS_APP_HOURLY: 'many' })).toThrow(
    'LATCH_ANALYTICS_APP_HOURLY',
  )
})
