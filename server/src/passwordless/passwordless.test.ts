import type { AuthResponse, User } from '@latch/shared'
import { expect, test } from 'vitest'
import { MAX_CODE_ATTEMPTS, RESEND_INTERVAL_MS } from '../codes/service.ts'
import { describeBackends, freshIp } from '../testing/test-server.ts'

let n = 0
const email = (tag: string) => `${tag}.${++n}.${Date.now()}@example.com`

describeBackends('passwordless (e-mail)', (get) => {
  test('behavior: init mails a code that authenticates a new user, then the same user again', async () => {
    const s = get()
    const app = await s.newApp()
    const address = email('Alice').replace('alice', 'Alice')
    const first = await s.emailLogin(app.id, address)
    expect(first.is_new_user).toBe(true)
    expect(first.user.email?.address).toBe(address.toLowerCase())
    expect(first.user.linkedAccounts).toHaveLength(1)
    expect(first.user.id).toMatch(/^did:latch:[a-z0-9]{25}$/)
    expect(first.token.split('.')).toHaveLength(3)
    expect(first.refresh_token.length).toBeGreaterThanOrEqual(43)
    const mail = s.smtp.messages.find((m) => m.to === address.toLowerCase())
    expect(mail?.subject).toMatch(/^\d{6} is your Test app login code$/)

    s.clock.advance(RESEND_INTERVAL_MS)
    const again = await s.emailLogin(app.id, address.toUpperCase())
    expect(again.is_new_user).toBe(false)
    expect(again.user.id).toBe(first.user.id)
  })

  test("behavior: init with the visitor's locale mails the code in that language; an unshipped locale is invalid_data", async () => {
    const s = get()
    const app = await s.newApp()
    const address = email('ja')
    const init = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: address, locale: 'ja' },
    })
    expect(init.status).toBe(200)
    const code = await s.smtp.waitForCode(address)
    const mail = s.smtp.messages.find((m) => m.to === address)
    expect(mail?.subject).toBe(`Test app のログインコード: ${code}`)
    expect(mail?.body).toContain(`Test app のログインコードは ${code} です。`)
    expect(mail?.body).toContain('有効期限は10分です')

    const refused = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: email('xx'), locale: 'xx-YY' },
    })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ error: { code: 'invalid_data' } })
  })

  test('behavior: signing in again right after a sign-in is not a resend', async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const app = await s.newApp()
      const address = email('again')
      const first = await s.emailLogin(app.id, address)
      s.clock.advance(1_000)
      const again = await s.emailLogin(app.id, address)
      expect(again.user.id).toBe(first.user.id)
      expect(again.is_new_user).toBe(false)
    })
  })

  test('behavior: the code is stored only as an HMAC', async () => {
    const s = get()
    const app = await s.newApp()
    const address = email('hmac')
    await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: address },
    })
    const code = await s.smtp.waitForCode(address)
    const row = await s.deps.db
      .selectFrom('verification_codes')
      .selectAll()
      .where('identifier', '=', address)
      .executeTakeFirstOrThrow()
    expect(row.code_hmac).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(row)).not.toContain(code)
  })

  test('behavior: init answers the same for a known and an unknown address', async () => {
    const s = get()
    const app = await s.newApp()
    const known = email('known')
    await s.emailLogin(app.id, known)
    s.clock.advance(RESEND_INTERVAL_MS)
    const a = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: known },
    })
    const b = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: email('unknown') },
    })
    expect(a.status).toBe(200)
    expect(b.status).toBe(200)
    expect(a.body).toEqual(b.body)
  })

  test('error: a wrong code answers 422 with the spec message; a code is single-use', async () => {
    const s = get()
    const app = await s.newApp()
    const address = email('wrong')
    const ip = freshIp()
    await s.request('/passwordless/init', { appId: app.id, ip, body: { email: address } })
    const code = await s.smtp.waitForCode(address)
    const wrong = code === '000000' ? '111111' : '000000'
    const bad = await s.request('/passwordless/authenticate', {
      appId: app.id,
      ip,
      body: { email: address, code: wrong },
    })
    expect(bad.status).toBe(422)
    expect(bad.body).toEqual({
      requestId: expect.any(String),
      error: {
        type: 'api_error',
        code: 'invalid_verification_code',
        message: 'Invalid or expired verification code',
      },
    })
    const nonNumeric = await s.request('/passwordless/authenticate', {
      appId: app.id,
      ip,
      body: { email: address, code: 'abcdef' },
    })
    expect(nonNumeric.status).toBe(422)
    const ok = await s.request('/passwordless/authenticate', {
      appId: app.id,
      ip,
      body: { email: address, code: ` ${code} ` },
    })
    expect(ok.status).toBe(200)
    const replay = await s.request('/passwordless/authenticate', {
      appId: app.id,
      ip,
      body: { email: address, code },
    })
    expect(replay.status).toBe(422)
  })

  test('error: an expired code answers 422 (e-mail codes live 10 minutes)', async () => {
    const s = get()
    const app = await s.newApp()
    const address = email('expired')
    const ip = freshIp()
    await s.request('/passwordless/init', { appId: app.id, ip, body: { email: address } })
    const code = await s.smtp.waitForCode(address)
    s.clock.advance(10 * 60_000 + 1)
    const late = await s.request('/passwordless/authenticate', {
      appId: app.id,
      ip,
      body: { email: address, code },
    })
    expect(late.status).toBe(422)
  })

  test('behavior: a code still works just before 10 minutes', async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const app = await s.newApp()
      const address = email('intime')
      const ip = freshIp()
      await s.request('/passwordless/init', { appId: app.id, ip, body: { email: address } })
      const code = await s.smtp.waitForCode(address)
      s.clock.advance(10 * 60_000 - 1000)
      const ok = await s.request('/passwordless/authenticate', {
        appId: app.id,
        ip,
        body: { email: address, code },
      })
      expect(ok.status).toBe(200)
    })
  })

  test('race: parallel wrong codes never spend more than 5 tries; the right code is then burnt', async () => {
    const s = get()
    const app = await s.newApp()
    const address = email('race')
    await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: address },
    })
    const code = await s.smtp.waitForCode(address)
    const wrongs = Array.from({ length: 12 }, (_, i) =>
      String((Number(code) + i + 1) % 1_000_000).padStart(6, '0'),
    )
    const answers = await Promise.all(
      wrongs.map((c) =>
        s.request('/passwordless/authenticate', {
          appId: app.id,
          ip: freshIp(),
          body: { email: address, code: c },
        }),
      ),
    )
    expect(answers.every((a) => a.status === 422)).toBe(true)
    const row = await s.deps.db
      .selectFrom('verification_codes')
      .select('attempts')
      .where('app_id', '=', app.id)
      .where('identifier', '=', address)
      .executeTakeFirstOrThrow()
    expect(row.attempts).toBe(MAX_CODE_ATTEMPTS)
    const right = await s.request('/passwordless/authenticate', {
      appId: app.id,
      ip: freshIp(),
      body: { email: address, code },
    })
    expect(right.status).toBe(422)
  })

  test('error: a resend within 60 s answers 429 with Retry-After; after it, a new code replaces the old', async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const app = await s.newApp()
      const address = email('resend')
      const ip = freshIp()
      await s.request('/passwordless/init', { appId: app.id, ip, body: { email: address } })
      const first = await s.smtp.waitForCode(address)
      s.clock.advance(20_000)
      const early = await s.request('/passwordless/init', {
        appId: app.id,
        ip,
        body: { email: address },
      })
      expect(early.status).toBe(429)
      expect(early.body).toMatchObject({ error: { code: 'too_many_requests' } })
      const wait = Number(early.headers.get('retry-after'))
      expect(wait).toBe(40)
      s.clock.advance(40_000)
      const later = await s.request('/passwordless/init', {
        appId: app.id,
        ip,
        body: { email: address },
      })
      expect(later.status).toBe(200)
      const second = await s.smtp.waitForCode(address)
      if (second !== first) {
        const old = await s.request('/passwordless/authenticate', {
          appId: app.id,
          ip,
          body: { email: address, code: first },
        })
        expect(old.status).toBe(422)
      }
      const ok = await s.request('/passwordless/authenticate', {
        appId: app.id,
        ip,
        body: { email: address, code: second },
      })
      expect(ok.status).toBe(200)
    })
  })

  test('error: at most 5 codes per address per hour', async () => {
    const s = get()
    const app = await s.newApp()
    const address = email('hourly')
    for (let i = 0; i < 5; i++) {
      const ok = await s.request('/passwordless/init', {
        appId: app.id,
        ip: freshIp(),
        body: { email: address },
      })
      expect(ok.status).toBe(200)
      s.clock.advance(RESEND_INTERVAL_MS)
    }
    const sixth = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: address },
    })
    expect(sixth.status).toBe(429)
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0)
    s.clock.advance(60 * 60_000)
    const nextHour = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: address },
    })
    expect(nextHour.status).toBe(200)
  })

  test('error: more than 30 init or authenticate calls from one IP in 5 minutes answer 429', async () => {
    const s = get()
    const app = await s.newApp()
    const ip = freshIp()
    const statuses: number[] = []
    for (let i = 0; i < 31; i++) {
      const path = i % 2 === 0 ? '/passwordless/init' : '/passwordless/authenticate'
      const body = i % 2 === 0 ? { email: email('ip') } : { email: email('ip'), code: '123456' }
      statuses.push((await s.request(path, { appId: app.id, ip, body })).status)
    }
    expect(statuses.slice(0, 30).every((st) => st === 200 || st === 422)).toBe(true)
    expect(statuses[30]).toBe(429)
    s.clock.advance(5 * 60_000)
    const after = await s.request('/passwordless/init', {
      appId: app.id,
      ip,
      body: { email: email('ip') },
    })
    expect(after.status).toBe(200)
  })

  test('behavior: the allowlist rejects an address not on it before any code is sent', async () => {
    const s = get()
    const invited = email('invited')
    const app = await s.newApp({ allowlist: { enabled: true, entries: [invited.toUpperCase()] } })
    const stranger = email('stranger')
    const before = s.smtp.messages.length
    const rejected = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: stranger },
    })
    expect(rejected.status).toBe(403)
    expect(rejected.body).toMatchObject({ error: { code: 'allowlist_rejected' } })
    expect(s.smtp.messages.length).toBe(before)
    const welcome = await s.emailLogin(app.id, invited)
    expect(welcome.is_new_user).toBe(true)
  })

  test('error: e-mail login switched off for the app', async () => {
    const s = get()
    const app = await s.newApp({ loginMethods: ['sms'] })
    const off = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: email('off') },
    })
    expect(off.status).toBe(403)
    expect(off.body).toMatchObject({ error: { code: 'method_not_available' } })
  })

  test('error: a malformed address, a missing field and a wrong type answer 400 with a clear message', async () => {
    const s = get()
    const app = await s.newApp()
    const bad = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: { email: 'not-an-email' },
    })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({
      error: { code: 'invalid_data', message: 'Please enter a valid email address' },
    })
    const missing = await s.request('/passwordless/init', {
      appId: app.id,
      ip: freshIp(),
      body: {},
    })
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({
      error: { code: 'invalid_data', message: expect.stringContaining('email') },
    })
    const wrongType = await s.request('/passwordless/authenticate', {
      appId: app.id,
      ip: freshIp(),
      body: { email: 'a@b.co', code: 123456 },
    })
    expect(wrongType.status).toBe(400)
    expect(wrongType.body).toMatchObject({ error: { message: expect.stringContaining('code') } })
  })

  test('behavior: link adds an e-mail to a signed-in user; unlink removes it', async () => {
    const s = get()
    const app = await s.newApp()
    const owner = await s.emailLogin(app.id, email('owner'))
    // Give the user a phone first, so the e-mail is not the last method.
    const phone = `+1415555${String(1000 + (n % 9000)).padStart(4, '0')}`
    const ip = freshIp()
    await s.request('/passwordless_sms/init', { appId: app.id, ip, body: { phoneNumber: phone } })
    const smsCode = await s.twilio.waitForCode(phone)
    const linked = await s.request<User>('/passwordless_sms/link', {
      appId: app.id,
      ip,
      token: owner.token,
      body: { phoneNumber: phone, code: smsCode },
    })
    expect(linked.status).toBe(200)
    expect(linked.body.phone?.number).toBe(phone)
    expect(linked.body.linkedAccounts).toHaveLength(2)

    const unlinked = await s.request<User>('/passwordless/unlink', {
      appId: app.id,
      token: owner.token,
      body: { address: owner.user.email?.address },
    })
    expect(unlinked.status).toBe(200)
    expect(unlinked.body.email).toBeUndefined()
    expect(unlinked.body.linkedAccounts.map((a) => a.type)).toEqual(['phone'])

    const last = await s.request('/passwordless_sms/unlink', {
      appId: app.id,
      token: owner.token,
      body: { phoneNumber: phone },
    })
    expect(last.status).toBe(400)
    expect(last.body).toMatchObject({ error: { code: 'last_account_unlink_forbidden' } })
  })

  test('error: linking an address another user holds answers linked_to_another_user', async () => {
    const s = get()
    const app = await s.newApp()
    const taken = email('taken')
    await s.emailLogin(app.id, taken)
    s.clock.advance(RESEND_INTERVAL_MS)
    const other = await s.request<AuthResponse>('/passwordless_sms/init', {
      appId: app.id,
      ip: freshIp(),
      body: { phoneNumber: '+14155550199' },
    })
    expect(other.status).toBe(200)
    const smsCode = await s.twilio.waitForCode('+14155550199')
    const phoneUser = await s.request<AuthResponse>('/passwordless_sms/authenticate', {
      appId: app.id,
      ip: freshIp(),
      body: { phoneNumber: '+14155550199', code: smsCode },
    })
    const ip = freshIp()
    await s.request('/passwordless/init', { appId: app.id, ip, body: { email: taken } })
    const code = await s.smtp.waitForCode(taken)
    const clash = await s.request('/passwordless/link', {
      appId: app.id,
      ip,
      token: phoneUser.body.token,
      body: { email: taken, code },
    })
    expect(clash.status).toBe(400)
    expect(clash.body).toEqual({
      requestId: expect.any(String),
      error: {
        type: 'api_error',
        code: 'linked_to_another_user',
        message: 'Another user has already linked this account.',
      },
    })
  })

  test('error: link and unlink need a valid access token', async () => {
    const s = get()
    const app = await s.newApp()
    const none = await s.request('/passwordless/unlink', {
      appId: app.id,
      body: { address: 'a@b.co' },
    })
    expect(none.status).toBe(401)
    expect(none.body).toMatchObject({
      error: { code: 'not_authenticated', message: 'User is not authenticated.' },
    })
    const forged = await s.request('/passwordless/link', {
      appId: app.id,
      token: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln',
      body: { email: 'a@b.co', code: '123456' },
    })
    expect(forged.status).toBe(401)
    const otherApp = await s.newApp()
    const user = await s.emailLogin(otherApp.id, email('crossapp'))
    const crossApp = await s.request('/passwordless/unlink', {
      appId: app.id,
      token: user.token,
      body: { address: user.user.email?.address },
    })
    expect(crossApp.status).toBe(401)
  })
})
