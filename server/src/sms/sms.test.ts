import type { AuthResponse } from '@latch/shared'
import { expect, test } from 'vitest'
import { describeBackends, freshIp } from '../testing/test-server.ts'

let n = 0
/** A valid US number per test (area code 415, 555-01xx is reserved for fiction). */
const phone = () => `+1415555${String(100 + (++n % 100)).padStart(4, '0')}`

describeBackends('passwordless_sms', (get) => {
  test('behavior: init sends the code through the Twilio Messages API; authenticate signs in', async () => {
    const s = get()
    const app = await s.newApp({ name: 'SMS app' })
    const number = phone()
    const ip = freshIp()
    // A US number as a person types it.
    const local = `(${number.slice(2, 5)}) ${number.slice(5, 8)}-${number.slice(8)}`
    const init = await s.request('/passwordless_sms/init', {
      appId: app.id,
      ip,
      body: { phoneNumber: local },
    })
    expect(init.status).toBe(200)
    const code = await s.twilio.waitForCode(number)
    const sms = s.twilio.messages.find((m) => m.to === number)
    expect(sms?.from).toBe(s.twilio.from)
    expect(sms?.body).toBe(`${code} is your SMS app login code. It expires in 5 minutes.`)
    const auth = await s.request<AuthResponse>('/passwordless_sms/authenticate', {
      appId: app.id,
      ip,
      body: { phoneNumber: number, code },
    })
    expect(auth.status).toBe(200)
    expect(auth.body.is_new_user).toBe(true)
    expect(auth.body.user.phone).toMatchObject({ type: 'phone', number })
  })

  test('error: SMS codes live 5 minutes', async () => {
    const s = get()
    const app = await s.newApp()
    const number = phone()
    const ip = freshIp()
    await s.request('/passwordless_sms/init', { appId: app.id, ip, body: { phoneNumber: number } })
    const code = await s.twilio.waitForCode(number)
    s.clock.advance(5 * 60_000 + 1)
    const late = await s.request('/passwordless_sms/authenticate', {
      appId: app.id,
      ip,
      body: { phoneNumber: number, code },
    })
    expect(late.status).toBe(422)
    expect(late.body).toMatchObject({ error: { message: 'Invalid or expired verification code' } })
  })

  test("behavior: init with the visitor's locale texts the code in that language", async () => {
    const s = get()
    const app = await s.newApp()
    const number = phone()
    await s.request('/passwordless_sms/init', {
      appId: app.id,
      ip: freshIp(),
      body: { phoneNumber: number, locale: 'ar' },
    })
    const code = await s.twilio.waitForCode(number)
    const sms = s.twilio.messages.find((m) => m.to === number)
    expect(sms?.body).toBe(`${code} هو رمز تسجيل الدخول إلى Test app. تنتهي صلاحيته خلال 5 دقائق.`)
  })

  test('error: an invalid number answers 400 with the validation message', async () => {
    const s = get()
    const app = await s.newApp()
    const r = await s.request('/passwordless_sms/init', {
      appId: app.id,
      ip: freshIp(),
      body: { phoneNumber: '12' },
    })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({
      error: { code: 'invalid_data', message: 'Please enter a valid US phone number' },
    })
  })

  test('behavior: the allowlist holds phone numbers too', async () => {
    const s = get()
    const allowed = phone()
    const app = await s.newApp({ allowlist: { enabled: true, entries: [allowed] } })
    const no = await s.request('/passwordless_sms/init', {
      appId: app.id,
      ip: freshIp(),
      body: { phoneNumber: phone() },
    })
    expect(no.status).toBe(403)
    expect(no.body).toMatchObject({ error: { code: 'allowlist_rejected' } })
    const yes = await s.request('/passwordless_sms/init', {
      appId: app.id,
      ip: freshIp(),
      body: { phoneNumber: allowed },
    })
    expect(yes.status).toBe(200)
  })

  test('error: SMS off for the app answers method_not_available', async () => {
    const s = get()
    const app = await s.newApp({ loginMethods: ['email'] })
    const r = await s.request('/passwordless_sms/init', {
      appId: app.id,
      ip: freshIp(),
      body: { phoneNumber: phone() },
    })
    expect(r.status).toBe(403)
  })
})

test('behavior: the Twilio double refuses bad credentials and missing fields like Twilio', async () => {
  const { startTwilioDouble } = await import('../testing/index.ts')
  const t = await startTwilioDouble()
  try {
    const url = `${t.apiUrl}/2010-04-01/Accounts/${t.accountSid}/Messages.json`
    const good = `Basic ${Buffer.from(`${t.accountSid}:${t.authToken}`).toString('base64')}`
    const bad = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${t.accountSid}:wrong`).toString('base64')}`,
      },
      body: new URLSearchParams({ To: '+14155550100', From: t.from, Body: 'x' }),
    })
    expect(bad.status).toBe(401)
    const missing = await fetch(url, {
      method: 'POST',
      headers: { authorization: good },
      body: new URLSearchParams({ From: t.from, Body: 'x' }),
    })
    expect(missing.status).toBe(400)
    expect(await missing.json()).toMatchObject({ code: 21604 })
    const ok = await fetch(url, {
      method: 'POST',
      headers: { authorization: good },
      body: new URLSearchParams({ To: '+14155550100', From: t.from, Body: 'code 123456' }),
    })
    expect(ok.status).toBe(201)
    expect(await ok.json()).toMatchObject({
      sid: expect.stringMatching(/^SM/),
      status: 'queued',
      to: '+14155550100',
    })
    expect(await t.waitForCode('+14155550100', { timeoutMs: 1000 })).toBe('123456')
    await expect(t.waitForCode('+14155550100', { timeoutMs: 50 })).rejects.toThrow('No code')
  } finally {
    await t.close()
  }
})
