/**
 * Structured logs, request ids and metrics, as an operator relies on them: a log line never
 * holds what a visitor or the operator must keep secret, and the counts move with real requests.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  API_PREFIX,
  APP_ID_HEADER,
  type AuthResponse,
  CLIENT_HEADER,
  CLIENT_NAME,
  OAUTH_RETURN_PARAM_NAMES,
} from '@latch/shared'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadConfig } from '../config.ts'
import { createDelivery } from '../delivery.ts'
import { type RunningServer, startServer } from '../index.ts'
import { browserHashOf } from '../oauth/flow.ts'
import { parseTrustProxy } from '../ratelimit.ts'
import { frameDevice } from '../testing/frame-fetch.ts'
import { migratedMemory } from '../testing/global-setup.ts'
import {
  authorizeAtMock,
  type MockProviders,
  startMockProviders,
} from '../testing/mock-providers.ts'
import { runPostgres } from '../testing/postgres.ts'
import { type SmtpCatcher, startSmtpCatcher } from '../testing/smtp.ts'
import {
  freshIp,
  startTestServer,
  TEST_SECRET,
  type TestServer,
  type TestSignIn,
} from '../testing/test-server.ts'
import { REQUEST_ID_HEADER, requestIdFor } from './log.ts'
import { serveLatch } from './serve.ts'

const SMTP_PASSWORD = 'smtp-pass-Zq8!x/7@w'
const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789'
const HOST = 'http://localhost:5173'

describe('structured logs: no secret in any line', () => {
  let s: TestServer
  let close: () => Promise<void>
  let smtp: SmtpCatcher
  let mock: MockProviders
  /** Every value no log line may hold, with what it is (for the failure message). */
  const secrets = new Map<string, string>()
  const keep = (what: string, value: string | undefined | null) => {
    if (value) secrets.set(value, what)
  }

  beforeAll(async () => {
    smtp = await startSmtpCatcher({ password: SMTP_PASSWORD })
    mock = await startMockProviders()
    const started = await startTestServer('pglite', 'memory://', {
      LATCH_LOG_FORMAT: 'json',
      SMTP_URL: `smtp://latch:${encodeURIComponent(SMTP_PASSWORD)}@${new URL(smtp.url).host}`,
      LATCH_METRICS: '1',
      LATCH_METRICS_TOKEN: METRICS_TOKEN,
    })
    s = started.server
    close = started.close
    keep('the server secret', TEST_SECRET)
    keep('the SMTP password', SMTP_PASSWORD)
    keep('the SMTP password, encoded', encodeURIComponent(SMTP_PASSWORD))
    keep('the metrics token', METRICS_TOKEN)
  }, 120_000)
  afterAll(async () => {
    await close?.()
    await smtp?.close()
    await mock?.stop()
  }, 120_000)

  /** init, the code from the (authenticating) SMTP server, authenticate. */
  async function emailLogin(appId: string, email: string): Promise<TestSignIn> {
    const ip = freshIp()
    const init = await s.request('/passwordless/init', { appId, ip, body: { email } })
    expect(init.status).toBe(200)
    const code = await smtp.waitForCode(email, { timeoutMs: 10_000 })
    keep(`the e-mail code for ${email}`, code)
    // A wrong code first: the value tried must not be logged either.
    const wrongCode = code === '000000' ? '111111' : '000000'
    keep('a wrong e-mail code', wrongCode)
    const wrong = await s.request('/passwordless/authenticate', {
      appId,
      ip,
      body: { email, code: wrongCode },
    })
    expect(wrong.status).toBe(422)
    const auth = await s.request<AuthResponse>('/passwordless/authenticate', {
      appId,
      ip,
      body: { email, code },
      // A client's own request id and cookies: neither believed nor logged.
      headers: {
        [REQUEST_ID_HEADER]: 'client-chosen-id-1234',
        cookie: 'tracking=cookie-value-xyz',
      },
    })
    expect(auth.status).toBe(200)
    expect(auth.headers.get(REQUEST_ID_HEADER)).not.toBe('client-chosen-id-1234')
    keep('a cookie', 'cookie-value-xyz')
    keep('an access token', auth.body.token)
    keep('a refresh token', auth.body.refresh_token)
    for (const set of auth.headers.getSetCookie()) keep('a Set-Cookie value', set.split(';')[0])
    return auth.body
  }

  test('security: sign-in by code, refresh, wallets, OAuth and a 500 leave one JSON line each, holding none of their secrets', async () => {
    const app = await s.newApp({
      loginMethods: ['email', 'google', 'wallet'],
      allowedOrigins: [HOST],
      oauth: mock.settings(),
    })
    const settings = mock.settings() as Record<string, { clientSecret?: string }>
    for (const [provider, value] of Object.entries(settings)) {
      keep(`the ${provider} client secret`, value.clientSecret)
    }
    const before = s.logs.length

    // E-mail code sign-in, then a refresh, then its replay (refused).
    const auth = await emailLogin(app.id, `logs.${Date.now()}@example.com`)
    const refreshed = await s.request<AuthResponse>('/sessions', {
      appId: app.id,
      token: auth.token,
      body: { refresh_token: auth.refresh_token },
    })
    expect(refreshed.status).toBe(200)
    keep('a rotated access token', refreshed.body.token)
    keep('a rotated refresh token', refreshed.body.refresh_token)

    // An automatic-recovery wallet: created on one device, recovered on another.
    const phone = frameDevice(s, app.id)
    const { address } = await phone.create({ accessToken: refreshed.body.token })
    const laptop = frameDevice(s, app.id)
    await laptop.recover({ address, accessToken: refreshed.body.token })
    for (const share of [...phone.shares.values(), ...laptop.shares.values()]) {
      keep('a device share (hex)', Buffer.from(share).toString('hex'))
      keep('a device share (base64url)', Buffer.from(share).toString('base64url'))
      keep('a device share (base64)', Buffer.from(share).toString('base64'))
    }

    // A passcode wallet for a second user: a wrong passcode, then the right one.
    const other = await emailLogin(app.id, `logs.pin.${Date.now()}@example.com`)
    const passcode = 'Qw7r9Z'
    keep('a passcode', passcode)
    keep('a wrong passcode', 'Qw7r9Y')
    const pinned = await frameDevice(s, app.id).create({
      accessToken: other.token,
      recoveryPin: passcode,
    })
    const newDevice = frameDevice(s, app.id)
    await expect(
      newDevice.recover({
        address: pinned.address,
        accessToken: other.token,
        recoveryPin: 'Qw7r9Y',
      }),
    ).rejects.toMatchObject({ code: 'invalid_recovery_pin' })
    await newDevice.recover({
      address: pinned.address,
      accessToken: other.token,
      recoveryPin: passcode,
    })

    // OAuth: init, the provider, the callback (its code and state in the URL), authenticate.
    mock.signIn('google', { sub: 'logs-1', email: 'oauth.logs@example.com', name: 'Ada' })
    const browserSecret = randomBytes(32).toString('base64url')
    keep('the OAuth browser secret', browserSecret)
    const init = await s.request<{ url: string }>('/oauth/init', {
      appId: app.id,
      body: {
        provider: 'google',
        redirect_to: `${HOST}/app`,
        browser_hash: browserHashOf(browserSecret),
      },
    })
    expect(init.status).toBe(200)
    const callback = await authorizeAtMock(init.body.url)
    keep("the provider's authorization code", callback.searchParams.get('code'))
    const back = await s.api.request(`${callback.pathname}${callback.search}`)
    expect(back.status).toBe(302)
    const hostPage = new URL(back.headers.get('location') ?? '')
    const authorizationCode = hostPage.searchParams.get(OAUTH_RETURN_PARAM_NAMES.code) ?? ''
    const stateCode = hostPage.searchParams.get(OAUTH_RETURN_PARAM_NAMES.state) ?? ''
    keep("Latch's OAuth authorization code", authorizationCode)
    const oauth = await s.request<AuthResponse>('/oauth/authenticate', {
      appId: app.id,
      body: {
        authorization_code: authorizationCode,
        state_code: stateCode,
        browser_secret: browserSecret,
      },
    })
    expect(oauth.status).toBe(200)
    keep('an OAuth access token', oauth.body.token)
    keep('an OAuth refresh token', oauth.body.refresh_token)

    // A 500: its stack is logged, its request body is not.
    await sql`DROP TABLE analytics_events`.execute(s.deps.db)
    const marker = 'body-marker-7f3e9a'
    keep('a request body', marker)
    const failed = await s.request('/analytics_events', {
      appId: app.id,
      body: { event_name: 'sdk_initialize', client_id: marker, payload: { note: marker } },
    })
    expect(failed.status).toBe(500)
    const failedId = failed.headers.get(REQUEST_ID_HEADER)

    const lines = s.logs.slice(before)
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    for (const r of records) {
      expect(typeof r.time).toBe('string')
      expect(['info', 'warn', 'error']).toContain(r.level)
      expect(typeof r.msg).toBe('string')
    }
    const requests = records.filter((r) => r.msg === 'request')
    // One line per request, under its route's pattern, never its path.
    expect(requests.map((r) => `${r.method} ${r.route} ${r.status}`)).toContain(
      `POST ${API_PREFIX}/passwordless/authenticate 422`,
    )
    expect(requests.every((r) => typeof r.route === 'string' && !r.route.includes(app.id))).toBe(
      true,
    )
    expect(requests.some((r) => r.route === `${API_PREFIX}/oauth/callback/:provider`)).toBe(true)
    expect(requests.find((r) => r.status === 422)).toMatchObject({
      appId: app.id,
      error: 'invalid_verification_code',
      level: 'info',
    })
    for (const r of requests) {
      expect(r.requestId).toMatch(/^[A-Za-z0-9_-]{16}$/)
      expect(typeof r.durationMs).toBe('number')
    }
    const failure = records.find((r) => r.msg === 'request failed')
    expect(failure).toMatchObject({ level: 'error', requestId: failedId })
    expect(String(failure?.error)).toMatch(/analytics_events/)
    expect(String(failure?.error)).toMatch(/\n\s+at /) // the stack
    expect(requests.find((r) => r.requestId === failedId)).toMatchObject({ status: 500 })

    const text = lines.join('\n')
    const found = [...secrets].filter(([value]) => text.includes(value)).map(([, what]) => what)
    expect(found).toEqual([])
    expect(secrets.size).toBeGreaterThan(20)
  }, 120_000)
})

describe('e-mail codes in the log', () => {
  test('security: never printed under NODE_ENV=production, even if delivery were built without SMTP', async () => {
    expect(() =>
      loadConfig({ NODE_ENV: 'production', LATCH_SECRET: TEST_SECRET, DATABASE_URL: 'memory://' }),
    ).toThrow(/refuses to print e-mail codes to the log: set SMTP_URL/)
    const lines: string[] = []
    const delivery = createDelivery(
      { smtpUrl: null, mailFrom: 'x@example.com', twilio: null, production: true },
      (line) => lines.push(line),
    )
    await expect(delivery.sendEmailCode('a@example.com', '123456', 'Shop')).rejects.toMatchObject({
      code: 'method_not_available',
    })
    expect(lines.join('\n')).not.toContain('123456')
    // Development prints it, on purpose, with its marker.
    const dev = createDelivery(
      { smtpUrl: null, mailFrom: 'x@example.com', twilio: null, production: false },
      (line) => lines.push(line),
    )
    await dev.sendEmailCode('a@example.com', '654321', 'Shop')
    expect(lines).toEqual(['[latch] e-mail code for a@example.com: 654321'])
  }, 120_000)
})

describe('request ids', () => {
  const hops = parseTrustProxy('1')
  const proxies = parseTrustProxy('10.0.0.0/8')
  const none = parseTrustProxy('')
  const good = '0123456789abcdef0123456789abcdef'

  test('refusal: a client-sent id is kept only from a trusted proxy and only in the strict shape', () => {
    expect(requestIdFor(good, '10.1.2.3', hops)).toBe(good)
    expect(requestIdFor(good, '10.1.2.3', proxies)).toBe(good)
    expect(requestIdFor(good, '::ffff:10.1.2.3', proxies)).toBe(good)
    for (const [header, socket, trust] of [
      [good, '10.1.2.3', none],
      [good, '192.0.2.1', proxies],
      [good, undefined, hops],
      ['short', '10.1.2.3', hops],
      ['x'.repeat(65), '10.1.2.3', hops],
      ['has space in it', '10.1.2.3', hops],
      ['line\nbreak-1234', '10.1.2.3', hops],
      ['{"level":"error"}', '10.1.2.3', hops],
    ] as const) {
      const id = requestIdFor(header, socket, trust)
      expect(id).not.toBe(header)
      expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/)
    }
  }, 120_000)

  test('behavior: over HTTP, the id is answered in X-Request-Id and the proxy’s id is kept when LATCH_TRUST_PROXY trusts it', async () => {
    for (const [trust, kept] of [
      ['127.0.0.1', true],
      ['', false],
    ] as const) {
      const logs: string[] = []
      const api = await startServer({
        ...migratedMemory(),
        port: 0,
        env: {
          DATABASE_URL: 'memory://',
          LATCH_SECRET: TEST_SECRET,
          LATCH_TRUST_PROXY: trust,
          LATCH_LOG_FORMAT: 'json',
        },
        log: (line) => logs.push(line),
      })
      try {
        const res = await fetch(`${api.url}${API_PREFIX}/apps/nope`, {
          headers: { [REQUEST_ID_HEADER]: good },
        })
        await res.body?.cancel()
        expect(res.status).toBe(400)
        const id = res.headers.get(REQUEST_ID_HEADER)
        if (kept) expect(id).toBe(good)
        else expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/)
        const line = logs.map((l) => JSON.parse(l)).find((r) => r.msg === 'request')
        expect(line).toMatchObject({
          requestId: id,
          method: 'GET',
          route: `${API_PREFIX}/apps/:appId`,
          status: 400,
        })
      } finally {
        await api.close()
      }
    }
  }, 120_000)

  test('behavior: text, the default, keeps the human lines and adds no request lines', async () => {
    const logs: string[] = []
    const api = await startServer({
      ...migratedMemory(),
      port: 0,
      env: { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET, LATCH_LOG_FORMAT: '' },
      log: (line) => logs.push(line),
    })
    try {
      const res = await fetch(`${api.url}${API_PREFIX}/apps/nope`)
      await res.body?.cancel()
      expect(res.headers.get(REQUEST_ID_HEADER)).toMatch(/^[A-Za-z0-9_-]{16}$/)
      expect(logs).toEqual([])
    } finally {
      await api.close()
    }
    expect(() => loadConfig({ DATABASE_URL: 'memory://', LATCH_LOG_FORMAT: 'xml' })).toThrow(
      "LATCH_LOG_FORMAT must be text or json, got 'xml'",
    )
  }, 120_000)
})

describe('serve in JSON', () => {
  test('behavior: serve’s own lines follow LATCH_LOG_FORMAT, on both origins’ processes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latch-logs-'))
    const assets: Record<string, string> = {}
    for (const [name, files] of [
      ['LATCH_MODAL_DIR', ['index.html']],
      ['LATCH_SDK_DIR', ['sdk.js', 'latch.js', 'wallet-bridge.js', 'provider.js']],
      ['LATCH_WALLET_FRAME_DIR', ['index.html', 'export.html']],
    ] as const) {
      const folder = join(dir, name)
      mkdirSync(folder)
      for (const f of files) writeFileSync(join(folder, f), '<!doctype html>')
      assets[name] = folder
    }
    const lines: string[] = []
    const env = {
      ...assets,
      DATABASE_URL: 'memory://',
      LATCH_SECRET: TEST_SECRET,
      LATCH_API_PORT: '0',
      LATCH_MODAL_PORT: '0',
      LATCH_LOG_FORMAT: 'json',
    }
    const latch = await serveLatch({
      env,
      migrate: true,
      log: (line) => lines.push(line),
      ...migratedMemory(),
    })
    try {
      latch.log(`Latch API listening on ${latch.api?.url}`)
      expect(JSON.parse(lines.at(-1) ?? '')).toMatchObject({
        level: 'info',
        msg: `Latch API listening on ${latch.api?.url}`,
      })
    } finally {
      await latch.close()
    }
    const modalOnly = await serveLatch({
      env: { ...env, LATCH_PUBLIC_URL: 'http://127.0.0.1:9' },
      mode: 'modal',
      log: (line) => lines.push(line),
    })
    try {
      modalOnly.log('Stopped')
      expect(JSON.parse(lines.at(-1) ?? '')).toMatchObject({ level: 'info', msg: 'Stopped' })
    } finally {
      await modalOnly.close()
    }
    await expect(
      serveLatch({ env: { ...env, LATCH_LOG_FORMAT: 'yaml' }, mode: 'modal' }),
    ).rejects.toThrow("LATCH_LOG_FORMAT must be text or json, got 'yaml'")
    rmSync(dir, { recursive: true, force: true })
  }, 120_000)
})

describe('metrics', () => {
  let api: RunningServer
  const logs: string[] = []

  beforeAll(async () => {
    api = await startServer({
      ...migratedMemory(),
      port: 0,
      env: {
        DATABASE_URL: 'memory://',
        LATCH_SECRET: TEST_SECRET,
        LATCH_METRICS: '1',
        LATCH_METRICS_TOKEN: METRICS_TOKEN,
      },
      log: (line) => logs.push(line),
    })
  }, 120_000)
  afterAll(async () => {
    await api?.close()
  }, 120_000)

  const scrape = async (token = METRICS_TOKEN) => {
    const res = await fetch(`${api.url}/metrics`, {
      headers: { authorization: `Bearer ${token}` },
    })
    return { status: res.status, text: await res.text(), headers: res.headers }
  }

  /** The value of one series, 0 when absent. */
  function value(text: string, series: string): number {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `))
    return line ? Number(line.slice(series.length + 1)) : 0
  }

  const post = (appId: string, path: string, body: unknown) =>
    fetch(`${api.url}${API_PREFIX}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [APP_ID_HEADER]: appId,
        [CLIENT_HEADER]: CLIENT_NAME,
      },
      body: JSON.stringify(body),
    })

  test('refusal: /metrics answers 401 without the token, with a wrong one, and on another scheme', async () => {
    for (const authorization of [
      undefined,
      `Bearer ${METRICS_TOKEN.slice(0, -1)}x`,
      `Bearer ${METRICS_TOKEN}x`,
      `Basic ${METRICS_TOKEN}`,
      METRICS_TOKEN,
    ]) {
      const res = await fetch(`${api.url}/metrics`, {
        headers: authorization ? { authorization } : {},
      })
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
      const body = (await res.json()) as { error: { code: string } }
      expect(body.error.code).toBe('not_authenticated')
    }
    const ok = await scrape()
    expect(ok.status).toBe(200)
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(ok.headers.get('cache-control')).toBe('no-store')
    expect(ok.text).toContain('process_cpu_user_seconds_total')
  }, 120_000)

  test('behavior: requests, codes sent, sign-ins by outcome and rate-limit refusals move with real requests; no id, address or path in a label', async () => {
    const app = await api.admin.createApp({
      name: 'Metrics',
      allowedOrigins: [HOST],
      loginMethods: ['email'],
    })
    const email = `metrics.${Date.now()}@example.com`
    const before = (await scrape()).text
    const init = await post(app.id, '/passwordless/init', { email })
    expect(init.status).toBe(200)
    // A second code within the resend interval: 429.
    const again = await post(app.id, '/passwordless/init', { email })
    expect(again.status).toBe(429)
    const code = logs
      .find((l) => l.startsWith(`[latch] e-mail code for ${email}: `))
      ?.slice(-6) as string
    const wrong = await post(app.id, '/passwordless/authenticate', {
      email,
      code: code === '000000' ? '111111' : '000000',
    })
    expect(wrong.status).toBe(422)
    const right = await post(app.id, '/passwordless/authenticate', { email, code })
    expect(right.status).toBe(200)
    const user = ((await right.json()) as AuthResponse).user
    await (await fetch(`${api.url}${API_PREFIX}/apps/${app.id}`)).body?.cancel()
    const after = (await scrape()).text

    const delta = (series: string) => value(after, series) - value(before, series)
    expect(delta('latch_codes_sent_total{channel="email"}')).toBe(1)
    expect(delta('latch_sign_ins_total{method="email",outcome="success"}')).toBe(1)
    expect(delta('latch_sign_ins_total{method="email",outcome="invalid_verification_code"}')).toBe(
      1,
    )
    expect(
      delta(
        `latch_rate_limit_refusals_total{route="${API_PREFIX}/passwordless/init",code="too_many_requests"}`,
      ),
    ).toBe(1)
    expect(
      delta(
        `latch_http_requests_total{method="POST",route="${API_PREFIX}/passwordless/authenticate",status_class="2xx"}`,
      ),
    ).toBe(1)
    expect(
      delta(
        `latch_http_requests_total{method="GET",route="${API_PREFIX}/apps/:appId",status_class="2xx"}`,
      ),
    ).toBe(1)
    expect(
      delta(
        `latch_http_request_duration_seconds_count{method="POST",route="${API_PREFIX}/passwordless/init",status_class="4xx"}`,
      ),
    ).toBe(1)
    // The scrapes themselves are not requests of the API.
    expect(after).not.toContain('route="/metrics"')
    for (const personal of [app.id, user.id, email, '127.0.0.1']) {
      expect(after).not.toContain(personal)
    }
  }, 120_000)

  test('behavior: wallet creations, recoveries and wrong passcodes are counted by outcome; SMS codes against the budget', async () => {
    const started = await startTestServer('pglite', 'memory://', {
      LATCH_METRICS: '1',
      LATCH_METRICS_TOKEN: METRICS_TOKEN,
    })
    try {
      const s = started.server
      const metrics = s.deps.metrics
      if (!metrics) throw new Error('metrics are off')
      const app = await s.newApp()
      const auth = await s.emailLogin(app.id, `metrics.wallet.${Date.now()}@example.com`)
      const { address } = await frameDevice(s, app.id).create({
        accessToken: auth.token,
        recoveryPin: 'Abc1x3',
      })
      const laptop = frameDevice(s, app.id)
      await expect(
        laptop.recover({ address, accessToken: auth.token, recoveryPin: 'Abc1x4' }),
      ).rejects.toMatchObject({ code: 'invalid_recovery_pin' })
      await laptop.recover({ address, accessToken: auth.token, recoveryPin: 'Abc1x3' })
      const other = await s.emailLogin(app.id, `metrics.auto.${Date.now()}@example.com`)
      const auto = await frameDevice(s, app.id).create({ accessToken: other.token })
      await frameDevice(s, app.id).recover({ address: auto.address, accessToken: other.token })
      // An SMS code: counted by channel and against the global budget's windows.
      const sms = await s.request('/passwordless_sms/init', {
        appId: app.id,
        ip: freshIp(),
        body: { phoneNumber: '+14155550199' },
      })
      expect(sms.status).toBe(200)
      const text = await metrics.registry.metrics()
      expect(value(text, 'latch_codes_sent_total{channel="sms"}')).toBe(1)
      expect(value(text, 'latch_sms_budget_used{window="hour"}')).toBe(1)
      expect(value(text, 'latch_sms_budget_used{window="day"}')).toBe(1)
      expect(value(text, 'latch_sms_budget_limit{window="hour"}')).toBe(500)
      const at = (series: string) => value(text, `latch_wallet_operations_total{${series}}`)
      expect(at('operation="create",outcome="success"')).toBe(2)
      expect(at('operation="passcode_verify",outcome="invalid_recovery_pin"')).toBe(1)
      expect(at('operation="passcode_verify",outcome="success"')).toBe(1)
      expect(at('operation="recover",outcome="success"')).toBe(1)
    } finally {
      await started.close()
    }
  }, 120_000)

  test('behavior: on PostgreSQL, the pool’s connections in use, idle and waiting', async () => {
    const postgres = await runPostgres()
    if (!postgres) {
      console.warn('metrics: PostgreSQL binaries not found: skipping the pool gauge')
      return
    }
    const pg = await startServer({
      port: 0,
      env: {
        DATABASE_URL: await postgres.createDatabase(),
        LATCH_SECRET: TEST_SECRET,
        LATCH_METRICS: '1',
        LATCH_METRICS_TOKEN: METRICS_TOKEN,
        LATCH_PG_POOL_MAX: '3',
      },
      log: () => {},
    })
    try {
      // Three statements at once hold every connection of the pool; a fourth waits.
      const held = Promise.all(
        [1, 2, 3, 4].map(() => sql`SELECT pg_sleep(0.6)`.execute(pg.deps.db)),
      )
      await new Promise((resolve) => setTimeout(resolve, 300))
      const busy = await pg.deps.metrics?.registry.metrics()
      await held
      const idle = await pg.deps.metrics?.registry.metrics()
      const at = (text = '', state: string) =>
        value(text, `latch_db_pool_connections{state="${state}"}`)
      expect(at(busy, 'in_use')).toBe(3)
      // The fourth, and whatever the server's own loops (sweeper, webhooks) asked meanwhile.
      expect(at(busy, 'waiting')).toBeGreaterThanOrEqual(1)
      expect(at(idle, 'in_use')).toBe(0)
      expect(at(idle, 'idle')).toBeGreaterThanOrEqual(1)
    } finally {
      await pg.close()
      await postgres.close()
    }
  }, 60_000)

  test('refusal: off unless LATCH_METRICS=1; on, it needs a long token', async () => {
    const off = await startServer({
      ...migratedMemory(),
      port: 0,
      env: { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET, LATCH_METRICS: '' },
      log: () => {},
    })
    try {
      const res = await fetch(`${off.url}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      })
      await res.body?.cancel()
      expect(res.status).toBe(404)
      expect(off.deps.metrics).toBeNull()
    } finally {
      await off.close()
    }
    const base = { DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET, LATCH_METRICS: '1' }
    expect(() => loadConfig(base)).toThrow(/LATCH_METRICS=1 needs LATCH_METRICS_TOKEN/)
    expect(() => loadConfig({ ...base, LATCH_METRICS_TOKEN: 'short-token' })).toThrow(
      /at least 32 characters/,
    )
    expect(() => loadConfig({ ...base, LATCH_METRICS: 'yes' })).toThrow(
      "LATCH_METRICS must be 1 or 0, got 'yes'",
    )
    // From a file (a mounted secret), never both, never an unreadable one.
    const dir = mkdtempSync(join(tmpdir(), 'latch-metrics-'))
    try {
      const file = join(dir, 'token')
      writeFileSync(file, `${METRICS_TOKEN}\n`)
      expect(loadConfig({ ...base, LATCH_METRICS_TOKEN_FILE: file }).metrics).toEqual({
        token: METRICS_TOKEN,
      })
      expect(() =>
        loadConfig({ ...base, LATCH_METRICS_TOKEN_FILE: file, LATCH_METRICS_TOKEN: METRICS_TOKEN }),
      ).toThrow('Set LATCH_METRICS_TOKEN or LATCH_METRICS_TOKEN_FILE, not both')
      expect(() => loadConfig({ ...base, LATCH_METRICS_TOKEN_FILE: join(dir, 'missing') })).toThrow(
        /LATCH_METRICS_TOKEN_FILE: cannot read .* \(ENOENT\)/,
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
