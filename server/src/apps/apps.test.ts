import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ServerAppConfig } from '@latch/shared'
import {
  API_PREFIX,
  APP_ID_HEADER,
  CLIENT_HEADER,
  MAX_BODY_BYTES,
  SERVER_DEFAULT_LOGIN_METHODS,
} from '@latch/shared'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { describeBackends, freshIp } from '../testing/test-server.ts'
import { updateAppRecord } from './service.ts'

describeBackends('apps, analytics, token price, errors', (get) => {
  test('behavior: GET /apps/{appId} answers the server app configuration with the verification key', async () => {
    const s = get()
    const created = await s.newApp({
      name: 'Demo',
      allowedOrigins: ['http://localhost:5173/', 'https://WWW.example.com'],
      loginMethods: undefined,
      appearance: {
        logoUrl: 'https://example.com/logo.png',
        accentColor: '#112233',
        theme: 'dark',
        showWalletLoginFirst: false,
      },
      legal: {
        termsAndConditionsUrl: 'https://example.com/terms',
        privacyPolicyUrl: 'https://example.com/privacy',
      },
      embeddedWalletConfig: {
        createOnLogin: 'users-without-wallets',
        requireUserPasswordOnCreate: true,
      },
      allowlist: { enabled: true, entries: [], config: { errorTitle: 'Invite only' } },
    })
    const r = await s.request<ServerAppConfig>(`/apps/${created.id}`, {
      appId: null,
      headers: { [CLIENT_HEADER]: '' },
    })
    expect(r.status).toBe(200)
    expect(r.body).toEqual(created)
    expect(r.body.id).toHaveLength(25)
    expect(r.body.verificationKey).toMatch(/^-----BEGIN PUBLIC KEY-----/)
    expect(r.body.allowedOrigins).toEqual(['http://localhost:5173', 'https://www.example.com'])
    // Server defaults: e-mail and wallet on, SMS and social off.
    for (const [flag, on] of Object.entries(SERVER_DEFAULT_LOGIN_METHODS)) {
      expect(r.body[flag as keyof ServerAppConfig]).toBe(on)
    }
    expect(r.body).toMatchObject({
      logoUrl: 'https://example.com/logo.png',
      accentColor: '#112233',
      theme: 'dark',
      showWalletLoginFirst: false,
      allowlistEnabled: true,
      allowlistConfig: {
        errorTitle: 'Invite only',
        errorDetail: null,
        errorCtaText: null,
        errorCtaLink: null,
      },
      termsAndConditionsUrl: 'https://example.com/terms',
      embeddedWalletConfig: {
        createOnLogin: 'users-without-wallets',
        requireUserPasswordOnCreate: true,
      },
      customApiUrl: null,
    })
  })

  test('behavior: updateApp merges a patch and keeps the rest', async () => {
    const s = get()
    const app = await s.newApp({ appearance: { accentColor: '#abcdef' } })
    const { updateAppRecord } = await import('./service.ts')
    const updated = await updateAppRecord(s.deps, app.id, {
      appearance: { theme: 'light' },
      allowlist: {
        enabled: true,
        entries: ['A@Example.com', '(415) 555-0100', '0xABCDEFabcdef0123456789012345678901234567'],
      },
      oauth: { google: { clientId: 'id', clientSecret: 'secret' } },
    })
    expect(updated.appearance).toMatchObject({ accentColor: '#abcdef', theme: 'light' })
    expect(updated.allowlist.entries).toEqual([
      'a@example.com',
      '+14155550100',
      '0xabcdefabcdef0123456789012345678901234567',
    ])
    expect(updated.oauth.google?.clientId).toBe('id')
    const row = await s.deps.db
      .selectFrom('apps')
      .select('oauth_sealed')
      .where('id', '=', app.id)
      .executeTakeFirstOrThrow()
    expect(row.oauth_sealed).not.toContain('secret')
    await expect(updateAppRecord(s.deps, app.id, { loginMethods: [] })).rejects.toThrow(
      'at least one login method',
    )
    await expect(
      updateAppRecord(s.deps, app.id, { allowlist: { enabled: true, entries: ['nobody'] } }),
    ).rejects.toThrow("Allowlist entry 'nobody'")
    await expect(updateAppRecord(s.deps, 'x'.repeat(25), { name: 'x' })).rejects.toThrow('No app')
  })

  test('behavior: apps are read from a short cache; a change made in this process applies to the next request', async () => {
    const s = get()
    const app = await s.newApp({ loginMethods: ['email', 'wallet'] })
    const { findApp, updateAppRecord } = await import('./service.ts')
    const init = () =>
      s.request('/passwordless/init', {
        body: { email: 'cached@example.com' },
        appId: app.id,
        ip: freshIp(),
      })
    expect((await init()).status).toBe(200)
    // Read once more without a statement: the same record as the request used.
    const first = await findApp(s.deps, app.id)
    expect(await findApp(s.deps, app.id)).toBe(first)
    // Switching e-mail off here is refused on the very next request, not APP_CACHE_MS later.
    await updateAppRecord(s.deps, app.id, { loginMethods: ['wallet'] })
    const refused = await init()
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ error: { code: 'method_not_available' } })
    // Another process (its own cache, the same database) reads the change from the table.
    const other = { ...s.deps, db: s.deps.db.withoutPlugins() }
    expect((await findApp(other, app.id))?.loginMethods).toEqual(['wallet'])
    // An unknown id is not remembered: an app created meanwhile is found at once.
    expect(await findApp(s.deps, 'z'.repeat(25))).toBeUndefined()
  })

  test('behavior: GET /apps/{appId}/jwks.json publishes the current and the next key', async () => {
    const s = get()
    const app = await s.newApp()
    const r = await s.request<{ keys: { kty: string; crv: string; alg: string; kid: string }[] }>(
      `/apps/${app.id}/jwks.json`,
    )
    expect(r.status).toBe(200)
    expect(r.body.keys).toHaveLength(2)
    expect(r.body.keys.every((k) => k.kty === 'EC' && k.crv === 'P-256' && k.alg === 'ES256')).toBe(
      true,
    )
  })

  test('error: an unknown or missing app id answers missing_or_invalid_latch_app_id', async () => {
    const s = get()
    const unknown = await s.request(`/apps/${'a'.repeat(25)}`)
    expect(unknown.status).toBe(400)
    expect(unknown.body).toEqual({
      requestId: expect.any(String),
      error: {
        type: 'api_error',
        code: 'missing_or_invalid_latch_app_id',
        message: 'Missing or invalid Latch app ID',
      },
    })
    const missing = await s.request('/passwordless/init', { body: { email: 'a@b.co' } })
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ error: { code: 'missing_or_invalid_latch_app_id' } })
    const wrong = await s.request('/passwordless/init', {
      appId: 'short',
      body: { email: 'a@b.co' },
    })
    expect(wrong.body).toMatchObject({ error: { code: 'missing_or_invalid_latch_app_id' } })
    const jwks = await s.request(`/apps/${'b'.repeat(25)}/jwks.json`)
    expect(jwks.status).toBe(400)
  })

  test('error: a request without the client header is refused with a clear message', async () => {
    const s = get()
    const app = await s.newApp()
    const r = await s.request('/analytics_events', {
      appId: app.id,
      headers: { [CLIENT_HEADER]: '' },
      body: { event_name: 'modal_open', client_id: 'c1' },
    })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({
      error: { code: 'invalid_data', message: 'Missing latch-client header' },
    })
  })

  test('error: malformed JSON, an empty body and a body over 64 KB answer 4xx', async () => {
    const s = get()
    const app = await s.newApp()
    const bad = await s.request('/passwordless/init', { appId: app.id, raw: '{"email": ' })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({
      error: { code: 'invalid_data', message: 'Request body is not valid JSON' },
    })
    // (fork/recover reads a body from anyone; refresh wants the modal's cookie before a body.)
    const empty = await s.request('/sessions/fork/recover', { appId: app.id, method: 'POST' })
    expect(empty.status).toBe(400)
    expect(empty.body).toMatchObject({ error: { message: 'Request body is missing' } })
    const array = await s.request('/sessions/fork/recover', { appId: app.id, body: [1, 2] })
    expect(array.status).toBe(400)
    const big = await s.request('/analytics_events', {
      appId: app.id,
      body: {
        event_name: 'modal_open',
        client_id: 'c',
        payload: { pad: 'x'.repeat(MAX_BODY_BYTES) },
      },
    })
    expect(big.status).toBe(413)
    expect(big.body).toMatchObject({ error: { code: 'payload_too_large' } })
  })

  test('behavior: the nine analytics events are stored; any other name is refused', async () => {
    const s = get()
    const app = await s.newApp()
    const ok = await s.request('/analytics_events', {
      appId: app.id,
      body: {
        event_name: 'sign_message_completed',
        client_id: 'client-1',
        payload: { clientTimestamp: '2026-01-01T00:00:00Z' },
      },
    })
    expect(ok.status).toBe(200)
    const rows = await s.deps.db
      .selectFrom('analytics_events')
      .selectAll()
      .where('app_id', '=', app.id)
      .execute()
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      event_name: 'sign_message_completed',
      client_id: 'client-1',
      payload: { clientTimestamp: '2026-01-01T00:00:00Z' },
    })
    const refused = await s.request('/analytics_events', {
      appId: app.id,
      body: { event_name: 'page_view', client_id: 'c' },
    })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({
      error: { code: 'invalid_data', message: expect.stringContaining('event_name') },
    })
  })

  test('error: unknown routes answer 404 in the error shape', async () => {
    const s = get()
    const r = await s.request('/nowhere', { appId: (await s.newApp()).id })
    expect(r.status).toBe(404)
    expect(r.body).toMatchObject({ error: { code: 'not_found' } })
  })

  test('refusal: an origin with a wildcard, a path, a user name, a query or a fragment is refused at create and update, saying why; the app keeps its origins', async () => {
    const s = get()
    const app = await s.newApp({ allowedOrigins: ['https://shop.example'] })
    for (const [bad, why] of [
      ['*', 'wildcards are refused'],
      ['https://*', 'wildcards are refused'],
      ['https://*.example.com', 'wildcards are refused'],
      ['https://%2A.example.com', 'is not a host name'],
      ['https://shop.example/checkout', 'a path is not allowed'],
      ['https://user:pw@shop.example', 'a user name or password is not allowed'],
      ['https://shop.example?x=1', 'a query is not allowed'],
      ['https://shop.example#x', 'a fragment is not allowed'],
    ] as const) {
      await expect(
        s.newApp({ allowedOrigins: ['https://ok.example', bad] }),
        bad,
      ).rejects.toMatchObject({
        code: 'invalid_data',
        message: expect.stringMatching(
          new RegExp(
            `^Invalid app settings: allowedOrigins\\.1 '.*' .*${why.replace(/[.*?]/g, '\\$&')}`,
          ),
        ),
      })
      await expect(
        updateAppRecord(s.deps, app.id, { allowedOrigins: [bad] }),
        bad,
      ).rejects.toMatchObject({ code: 'invalid_data' })
    }
    const r = await s.request<ServerAppConfig>(`/apps/${app.id}`, { appId: null })
    expect(r.body.allowedOrigins).toEqual(['https://shop.example'])
  })

  test('behavior: CORS admits the modal origin with credentials and no other origin', async () => {
    const s = get()
    const modal = 'http://127.0.0.1:5174'
    const pre = await s.api.request(`${API_PREFIX}/passwordless/init`, {
      method: 'OPTIONS',
      headers: {
        origin: modal,
        'access-control-request-method': 'POST',
        'access-control-request-headers': `content-type,${APP_ID_HEADER},${CLIENT_HEADER}`,
      },
    })
    expect(pre.status).toBeLessThan(300)
    expect(pre.headers.get('access-control-allow-origin')).toBe(modal)
    expect(pre.headers.get('access-control-allow-credentials')).toBe('true')
    expect(pre.headers.get('access-control-allow-headers')).toContain(APP_ID_HEADER)
    const evil = await s.api.request(`${API_PREFIX}/apps/${'a'.repeat(25)}`, {
      headers: { origin: 'https://evil.example' },
    })
    expect(evil.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('error: no LATCH_PRICE_URL answers 503, never a number', async () => {
    const s = get()
    const app = await s.newApp()
    const r = await s.request('/token_price?chainId=1', { appId: app.id })
    expect(r.status).toBe(503)
    expect(r.body).toMatchObject({
      error: {
        code: 'price_unavailable',
        message: 'Token price is unavailable: no price source is configured',
      },
    })
  })

  test('behavior: GET /token_price answers the USD price from the source of the native currency', async () => {
    const s = get()
    const app = await s.newApp()
    const { createPriceSource } = await import('../price/source.ts')
    const { createApi } = await import('../api.ts')
    const priced = createApi({
      ...s.deps,
      price: createPriceSource(`${priceBase}/price?symbol={symbol}&chain={chainId}`, s.clock),
    })
    const res = await priced.request(`${API_PREFIX}/token_price?chainId=10`, {
      headers: { [APP_ID_HEADER]: app.id, [CLIENT_HEADER]: 'test' },
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ usd: 3120.55 })
    expect(priceHits).toContain('/price?symbol=ETH&chain=10')
  })

  test('error: a missing or unsupported chain id answers 400', async () => {
    const s = get()
    const app = await s.newApp()
    expect((await s.request('/token_price', { appId: app.id })).status).toBe(400)
    expect((await s.request('/token_price?chainId=abc', { appId: app.id })).status).toBe(400)
    const unsupported = await s.request('/token_price?chainId=999', { appId: app.id })
    expect(unsupported.status).toBe(400)
    expect(unsupported.body).toMatchObject({
      error: { code: 'unsupported_chain', message: 'Unsupported chainId' },
    })
  })
})

// The price source against a real HTTP server.
let priceServer: ReturnType<typeof createServer>
let priceBase = ''
const priceHits: string[] = []
let priceMode: 'ok' | 'fail' | 'junk' = 'ok'
beforeAll(async () => {
  priceServer = createServer((req, res) => {
    priceHits.push(req.url ?? '')
    if (priceMode === 'fail') {
      res.writeHead(500).end('boom')
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(
      priceMode === 'junk' ? '{"usd":"lots"}' : JSON.stringify({ ethereum: { usd: 3120.55 } }),
    )
  })
  await new Promise<void>((r) => priceServer.listen(0, '127.0.0.1', r))
  priceBase = `http://127.0.0.1:${(priceServer.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise<void>((r) => priceServer.close(() => r()))
})

test('behavior: the price comes from LATCH_PRICE_URL, cached briefly; a failing source is 503', async () => {
  const { createPriceSource, PRICE_CACHE_MS } = await import('../price/source.ts')
  const { FakeClock } = await import('../testing/test-server.ts')
  const clock = new FakeClock()
  const source = createPriceSource(`${priceBase}/price?symbol={symbol}&chain={chainId}`, clock)
  const before = priceHits.length
  expect(await source.usd(1)).toBe(3120.55)
  expect(await source.usd(1)).toBe(3120.55)
  expect(priceHits.slice(before)).toEqual(['/price?symbol=ETH&chain=1'])
  priceMode = 'fail'
  clock.advance(PRICE_CACHE_MS + 1)
  await expect(source.usd(1)).rejects.toMatchObject({ code: 'price_unavailable', status: 503 })
  priceMode = 'junk'
  await expect(source.usd(137)).rejects.toMatchObject({ code: 'price_unavailable' })
  expect(priceHits.at(-1)).toBe('/price?symbol=POL&chain=137')
  priceMode = 'ok'
})
