import { expect, test } from 'vitest'
import { updateAppRecord } from '../apps/service.ts'
import { ConfigError, DEFAULT_SMS_BUDGET, loadConfig, type SmsBudget } from '../config.ts'
import { sweep } from '../sweep.ts'
import { describeBackends, freshIp, TEST_SECRET, type TestServer } from '../testing/test-server.ts'

const HOUR = 60 * 60_000
const DAY = 24 * HOUR

let n = 0
/** A fresh US number (New Jersey's 201, an ordinary exchange): FIXED_LINE_OR_MOBILE. */
const usNumber = () => `+1201555${String(1000 + (++n % 9000)).padStart(4, '0')}`

function init(s: TestServer, appId: string, phoneNumber: string) {
  return s.request('/passwordless_sms/init', { appId, ip: freshIp(), body: { phoneNumber } })
}

/** Runs `fn` with other SMS budgets; the budgets are read per request. */
async function withBudget<T>(
  s: TestServer,
  budget: Partial<SmsBudget>,
  fn: () => Promise<T>,
): Promise<T> {
  const before = s.deps.config.smsBudget
  s.deps.config.smsBudget = { ...before, ...budget }
  try {
    return await fn()
  } finally {
    s.deps.config.smsBudget = before
  }
}

describeBackends('SMS toll-fraud guards', (get) => {
  test('attack: numbers outside the app’s countries answer 422 and no SMS is sent', async () => {
    const s = get()
    const app = await s.newApp()
    // Premium destinations of SMS pumping, all valid numbers: Moldova, Nigeria, Guernsey,
    // Jamaica (a +1 number, not a US one) and Canada (also +1).
    for (const number of [
      '+37360123456',
      '+2348031234567',
      '+447911123456',
      '+18765551234',
      '+14165550123',
    ]) {
      const r = await init(s, app.id, number)
      expect(r.status, number).toBe(422)
      expect(r.body).toMatchObject({
        error: {
          code: 'sms_country_not_allowed',
          message: 'This app does not send SMS codes to that country',
        },
      })
      expect(s.twilio.messages.some((m) => m.to === number)).toBe(false)
    }
    expect((await init(s, app.id, usNumber())).status).toBe(200)
  })

  test('behavior: an app sends to the countries it lists, and only those', async () => {
    const s = get()
    const app = await s.newApp()
    await updateAppRecord(s.deps, app.id, { smsCountries: ['us', 'GB', 'CA'] })
    for (const number of ['+447400123456', '+14165550123', usNumber()]) {
      expect((await init(s, app.id, number)).status, number).toBe(200)
      await s.twilio.waitForCode(number)
    }
    expect((await init(s, app.id, '+37360123456')).status).toBe(422)
  })

  test('attack: premium-rate, shared-cost, toll-free and landline numbers answer 422 in an allowed country', async () => {
    const s = get()
    const app = await s.newApp()
    await updateAppRecord(s.deps, app.id, { smsCountries: ['US', 'GB'] })
    for (const number of [
      '+19005550100', // US premium rate
      '+18005550100', // US toll free
      '+449091234567', // GB premium rate
      '+448431234567', // GB shared cost
      '+442071234567', // a London landline
    ]) {
      const r = await init(s, app.id, number)
      expect(r.status, number).toBe(422)
      expect(r.body).toMatchObject({
        error: {
          code: 'sms_number_not_mobile',
          message: 'SMS codes can only be sent to mobile numbers',
        },
      })
      expect(s.twilio.messages.some((m) => m.to === number)).toBe(false)
    }
  })

  test('error: an unknown country code is refused as an app setting', async () => {
    const s = get()
    const app = await s.newApp()
    await expect(updateAppRecord(s.deps, app.id, { smsCountries: ['XX'] })).rejects.toThrow(
      'Invalid app settings: smsCountries.0 must list two-letter country codes',
    )
    await expect(updateAppRecord(s.deps, app.id, { smsCountries: [] })).rejects.toThrow(
      'must list at least one country',
    )
  })

  test('attack: past the app’s hourly SMS budget, 429 with Retry-After until the hour ends', async () => {
    const s = get()
    const app = await s.newApp()
    await s.clock.frozen(() =>
      withBudget(s, { appHourly: 2 }, async () => {
        expect((await init(s, app.id, usNumber())).status).toBe(200)
        expect((await init(s, app.id, usNumber())).status).toBe(200)
        s.clock.advance(10 * 60_000)
        const number = usNumber()
        const over = await init(s, app.id, number)
        expect(over.status).toBe(429)
        expect(over.body).toMatchObject({
          error: {
            code: 'sms_budget_exhausted',
            message: 'Too many SMS codes have been sent, please try again later',
          },
        })
        expect(over.headers.get('retry-after')).toBe(String(50 * 60))
        // A refused send stores no code: the same number may try again at once later.
        expect(s.twilio.messages.some((m) => m.to === number)).toBe(false)
        // Another app has its own budget.
        const other = await s.newApp()
        expect((await init(s, other.id, usNumber())).status).toBe(200)
        s.clock.advance(50 * 60_000)
        expect((await init(s, app.id, number)).status).toBe(200)
      }),
    )
  })

  test('attack: past the app’s daily SMS budget, 429 for the rest of the day', async () => {
    const s = get()
    const app = await s.newApp()
    await s.clock.frozen(() =>
      withBudget(s, { appDaily: 3 }, async () => {
        for (let i = 0; i < 3; i++) {
          expect((await init(s, app.id, usNumber())).status).toBe(200)
          s.clock.advance(2 * HOUR)
        }
        const over = await init(s, app.id, usNumber())
        expect(over.status).toBe(429)
        expect(over.body).toMatchObject({ error: { code: 'sms_budget_exhausted' } })
        expect(over.headers.get('retry-after')).toBe(String((DAY - 6 * HOUR) / 1000))
        s.clock.advance(DAY - 6 * HOUR)
        expect((await init(s, app.id, usNumber())).status).toBe(200)
      }),
    )
  })

  test('attack: many apps together stop at the global SMS budget', async () => {
    const s = get()
    // Past every window earlier tests opened.
    s.clock.advance(2 * DAY)
    const [a, b] = [await s.newApp(), await s.newApp()]
    await withBudget(s, { globalHourly: 3 }, async () => {
      expect((await init(s, a.id, usNumber())).status).toBe(200)
      expect((await init(s, a.id, usNumber())).status).toBe(200)
      expect((await init(s, b.id, usNumber())).status).toBe(200)
      const over = await init(s, b.id, usNumber())
      expect(over.status).toBe(429)
      expect(over.body).toMatchObject({ error: { code: 'sms_budget_exhausted' } })
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    })
    s.clock.advance(2 * DAY)
    await withBudget(s, { globalDaily: 1 }, async () => {
      expect((await init(s, a.id, usNumber())).status).toBe(200)
      expect((await init(s, b.id, usNumber())).status).toBe(429)
    })
  })

  test('attack: the hourly sweep does not hand back a spent daily budget', async () => {
    const s = get()
    const app = await s.newApp()
    await withBudget(s, { appDaily: 1 }, async () => {
      expect((await init(s, app.id, usNumber())).status).toBe(200)
      s.clock.advance(2 * HOUR)
      await sweep(s.deps.db, s.clock)
      expect((await init(s, app.id, usNumber())).status).toBe(429)
      s.clock.advance(DAY)
      await sweep(s.deps.db, s.clock)
      const left = await s.deps.db
        .selectFrom('rate_limits')
        .select('key')
        .where('key', 'like', `sms:app:${app.id}:%`)
        .execute()
      expect(left).toEqual([])
    })
  })

  test('behavior: e-mail codes spend no SMS budget', async () => {
    const s = get()
    const app = await s.newApp()
    await withBudget(s, { appHourly: 0, globalHourly: 0 }, async () => {
      expect((await init(s, app.id, usNumber())).status).toBe(429)
      const email = await s.request('/passwordless/init', {
        appId: app.id,
        ip: freshIp(),
        body: { email: `budget.${app.id}@example.com` },
      })
      expect(email.status).toBe(200)
    })
  })
})

test('behavior: the SMS budgets come from the environment; a bad one stops the server with its name', () => {
  const base = { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET }
  expect(loadConfig(base).smsBudget).toEqual(DEFAULT_SMS_BUDGET)
  expect(
    loadConfig({
      ...base,
      LATCH_SMS_APP_HOURLY: '7',
      LATCH_SMS_APP_DAILY: '70',
      LATCH_SMS_GLOBAL_HOURLY: '0',
      LATCH_SMS_GLOBAL_DAILY: '700',
    }).smsBudget,
  ).toEqual({ appHourly: 7, appDaily: 70, globalHourly: 0, globalDaily: 700 })
  for (const [name, value] of [
    ['LATCH_SMS_APP_HOURLY', 'lots'],
    ['LATCH_SMS_APP_DAILY', '-1'],
    ['LATCH_SMS_GLOBAL_DAILY', '1.5'],
  ] as const) {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(name)
  }
})
