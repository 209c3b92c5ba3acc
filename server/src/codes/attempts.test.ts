import { expect, test } from 'vitest'
import { peek } from '../ratelimit.ts'
import { describeBackends, freshIp, type TestServer } from '../testing/test-server.ts'
import {
  FAILED_ATTEMPTS,
  IP_LIMIT,
  limitIp,
  MAX_CODE_ATTEMPTS,
  RESEND_INTERVAL_MS,
} from './service.ts'

const DAY = 24 * 60 * 60_000
/** Another 6-digit code than the given one. */
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0')

describeBackends('wrong codes per identifier per day', (get) => {
  const post = (s: TestServer, appId: string, path: string, body: unknown) =>
    s.request(`/passwordless${path}`, { appId, ip: freshIp(), body })

  /** Sends a fresh code to `email` and answers it, 60 s after the previous one. */
  async function newCode(s: TestServer, appId: string, email: string): Promise<string> {
    s.clock.advance(RESEND_INTERVAL_MS + 1)
    const r = await post(s, appId, '/init', { email })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return s.smtp.waitForCode(email, { timeoutMs: 10_000 })
  }

  async function guess(s: TestServer, appId: string, email: string, code: string) {
    return post(s, appId, '/authenticate', { email, code })
  }

  test('attack: new codes do not reset the budget: after 20 wrong codes in a day even the right one is refused', async () => {
    const s = get()
    const app = await s.newApp()
    const email = `guess.${app.id}@example.com`
    // Four wrong tries per code, so no code burns and each fresh code would once have meant
    // fresh tries: 5 codes, 20 wrong tries.
    let code = ''
    for (let round = 0; round < FAILED_ATTEMPTS.max / (MAX_CODE_ATTEMPTS - 1); round++) {
      code = await newCode(s, app.id, email)
      for (let i = 0; i < MAX_CODE_ATTEMPTS - 1; i++) {
        expect((await guess(s, app.id, email, wrongCode(code))).status).toBe(422)
      }
    }
    const refused = await guess(s, app.id, email, code)
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({
      error: {
        code: 'too_many_failed_attempts',
        message: 'Too many incorrect codes for this account today, please try again later',
      },
    })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(20 * 60 * 60)
    // No new code is sent while none could be tried.
    s.clock.advance(RESEND_INTERVAL_MS + 1)
    const init = await post(s, app.id, '/init', { email })
    expect(init.status).toBe(429)
    expect(init.body).toMatchObject({ error: { code: 'too_many_failed_attempts' } })
    expect(init.headers.get('retry-after')).not.toBeNull()
    // Another identifier is not affected.
    const other = `other.${app.id}@example.com`
    const otherCode = await newCode(s, app.id, other)
    expect((await guess(s, app.id, other, otherCode)).status).toBe(200)
    // A day later the budget is whole again.
    s.clock.advance(DAY)
    const fresh = await newCode(s, app.id, email)
    expect((await guess(s, app.id, email, fresh)).status).toBe(200)
  })

  test("attack: guesses refused for the IP's budget take nothing from the identifier's day", async () => {
    const s = get()
    const app = await s.newApp()
    const email = `ipcap.${app.id}@example.com`
    const code = await newCode(s, app.id, email)
    const ip = freshIp()
    for (let i = 0; i < IP_LIMIT.max; i++) await limitIp(s.deps, ip)
    // The IP's call and the identifier's try are counted in one statement: the try comes back.
    for (let i = 0; i < 3; i++) {
      const r = await s.request('/passwordless/authenticate', {
        appId: app.id,
        ip,
        body: { email, code: wrongCode(code) },
      })
      expect(r.status).toBe(429)
    }
    const failures = `fail:${app.id}:email:${email}`
    expect((await peek(s.deps.db, s.clock, failures, FAILED_ATTEMPTS)).count).toBe(0)
    // The code itself was not tried either: the right one still signs in from another address.
    expect((await guess(s, app.id, email, code)).status).toBe(200)
  })

  test('behavior: a right code gives back its try; the budget counts wrong codes only', async () => {
    const s = get()
    const app = await s.newApp()
    const email = `refund.${app.id}@example.com`
    let code = ''
    // 19 wrong tries over five codes, then a sign-in.
    for (let wrong = 0; wrong < FAILED_ATTEMPTS.max - 1; wrong++) {
      if (wrong % (MAX_CODE_ATTEMPTS - 1) === 0) code = await newCode(s, app.id, email)
      expect((await guess(s, app.id, email, wrongCode(code))).status).toBe(422)
    }
    expect((await guess(s, app.id, email, code)).status).toBe(200)
    // The twentieth wrong code is still an ordinary wrong code; the twenty-first try is not.
    s.clock.advance(60 * 60_000)
    code = await newCode(s, app.id, email)
    expect((await guess(s, app.id, email, wrongCode(code))).status).toBe(422)
    expect((await guess(s, app.id, email, code)).status).toBe(429)
  })

  test('attack: parallel guesses cannot overdraw the budget', async () => {
    const s = get()
    const app = await s.newApp()
    const email = `parallel.${app.id}@example.com`
    const code = await newCode(s, app.id, email)
    const answers = await Promise.all(
      Array.from({ length: FAILED_ATTEMPTS.max + 6 }, () =>
        guess(s, app.id, email, wrongCode(code)),
      ),
    )
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((st) => st === 429)).toHaveLength(6)
    expect(statuses.filter((st) => st === 422)).toHaveLength(FAILED_ATTEMPTS.max)
  })

  test('behavior: SMS codes have their own budget per number', async () => {
    const s = get()
    const app = await s.newApp()
    const number = '+12015550142'
    s.clock.advance(RESEND_INTERVAL_MS + 1)
    const r = await s.request('/passwordless_sms/init', {
      appId: app.id,
      ip: freshIp(),
      body: { phoneNumber: number },
    })
    expect(r.status).toBe(200)
    const code = await s.twilio.waitForCode(number)
    const answers: number[] = []
    for (let i = 0; i < FAILED_ATTEMPTS.max + 1; i++) {
      const a = await s.request('/passwordless_sms/authenticate', {
        appId: app.id,
        ip: freshIp(),
        body: { phoneNumber: number, code: wrongCode(code) },
      })
      answers.push(a.status)
    }
    expect(answers.slice(0, FAILED_ATTEMPTS.max)).toEqual(new Array(FAILED_ATTEMPTS.max).fill(422))
    expect(answers[FAILED_ATTEMPTS.max]).toBe(429)
  })
})
