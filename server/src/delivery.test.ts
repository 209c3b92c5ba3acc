import type { AuthResponse } from '@latch/shared'
import { expect, test } from 'vitest'
import { startTestServer } from './testing/test-server.ts'

test('behavior: with no SMTP or Twilio, codes go to the log as one marked line each', async () => {
  const { server: s, close } = await startTestServer('pglite', 'memory://', {
    SMTP_URL: '',
    TWILIO_ACCOUNT_SID: '',
    TWILIO_AUTH_TOKEN: '',
    TWILIO_FROM: '',
  })
  try {
    const app = await s.newApp()
    await s.request('/passwordless/init', { appId: app.id, body: { email: 'log@example.com' } })
    const line = s.logs.find((l) => l.startsWith('[latch] e-mail code for log@example.com: '))
    expect(line).toMatch(/^\[latch\] e-mail code for log@example\.com: \d{6}$/)
    const code = line?.slice(-6) ?? ''
    const auth = await s.request<AuthResponse>('/passwordless/authenticate', {
      appId: app.id,
      body: { email: 'log@example.com', code },
    })
    expect(auth.status).toBe(200)
    await s.request('/passwordless_sms/init', {
      appId: app.id,
      body: { phoneNumber: '+14155550123' },
    })
    expect(s.logs.some((l) => /^\[latch\] SMS code for \+14155550123: \d{6}$/.test(l))).toBe(true)
    expect(s.smtp.messages).toHaveLength(0)
  } finally {
    await close()
  }
})

test('error: a Twilio that refuses the credentials is a 502, logged, never a printed code', async () => {
  const { startTwilioDouble } = await import('./testing/index.ts')
  const { createDelivery } = await import('./delivery.ts')
  const twilio = await startTwilioDouble()
  const logs: string[] = []
  const delivery = createDelivery(
    {
      smtpUrl: null,
      mailFrom: 'x@example.com',
      production: false,
      twilio: {
        accountSid: twilio.accountSid,
        authToken: 'wrong',
        from: twilio.from,
        apiUrl: twilio.apiUrl,
      },
    },
    (line) => logs.push(line),
  )
  try {
    await expect(delivery.sendSmsCode('+14155550124', '123456', 'App')).rejects.toMatchObject({
      code: 'internal_error',
      status: 502,
      message: 'Could not send the SMS',
    })
    expect(logs.some((l) => l.includes('SMS delivery to +14155550124 failed: 401'))).toBe(true)
    expect(logs.some((l) => l.includes('123456'))).toBe(false)
    expect(twilio.messages).toHaveLength(0)
  } finally {
    delivery.close()
    await twilio.close()
  }
})

test('error: production without Twilio refuses SMS instead of printing the code', async () => {
  const { createDelivery } = await import('./delivery.ts')
  const logs: string[] = []
  const delivery = createDelivery(
    { smtpUrl: null, mailFrom: 'x@example.com', production: true, twilio: null },
    (line) => logs.push(line),
  )
  await expect(delivery.sendSmsCode('+14155550125', '654321', 'App')).rejects.toMatchObject({
    code: 'method_not_available',
    status: 503,
  })
  expect(logs).toEqual([])
})
