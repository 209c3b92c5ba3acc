import type { AuthResponse } from '@latch/shared'
import { expect, test } from 'vitest'
import { startTestServer } from './test-support.ts'

test('behavior: with no SMTP or Twilio, codes go to the log as one marked line each; a failing Twilio is a 502', async () => {
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
  const broken = await startTestServer('pglite', 'memory://', {
    TWILIO_AUTH_TOKEN: 'not-the-token',
  })
  try {
    const app = await broken.server.newApp()
    const r = await broken.server.request('/passwordless_sms/init', {
      appId: app.id,
      body: { phoneNumber: '+14155550124' },
    })
    expect(r.status).toBe(502)
    expect(r.body).toMatchObject({
      error: { code: 'internal_error', message: 'Could not send the SMS' },
    })
    expect(
      broken.server.logs.some((l) => l.includes('SMS delivery to +14155550124 failed: 401')),
    ).toBe(true)
  } finally {
    await broken.close()
  }
})
