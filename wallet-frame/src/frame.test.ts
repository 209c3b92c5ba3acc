// @vitest-environment node
/**
 * The built wallet frame in Chromium, served by the real API, inside a stand-in modal page on
 * another origin that speaks the real protocol (penpal 7, serialized LatchErrors): create with a
 * passcode, reload (a new frame), recover with the passcode, and the refusals on the way.
 */

import { API_PREFIX, APP_ID_HEADER, CLIENT_HEADER, type ForkResponse } from '@latch/shared'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { hashToken } from '../../server/src/crypto.ts'
import { openWalletRecord } from '../../server/src/wallets/service.ts'
import { type Answer, startWalletHarness, type WalletHarness } from '../test/harness.ts'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 })

let h: WalletHarness

beforeAll(async () => {
  h = await startWalletHarness()
})

afterAll(async () => {
  await h?.close()
})

const open = (page: Page, base?: string, timeoutMs?: number) => h.open(page, base, timeoutMs)
const call = (page: Page, name: string, arg?: unknown) => h.call(page, name, arg)

test('behavior: create with a passcode, reload, recover on the "new device" with the passcode; no key material reaches the modal', async () => {
  const page = await h.browser.newPage()
  await open(page)
  const auth = await h.signIn(page, `frame.${Date.now()}@example.com`)
  const ready = await call(page, 'latch:iframe:ready')
  expect(ready.ok).toEqual({ persistent: expect.any(Boolean) })
  const created = await call(page, 'latch:wallet:create', {
    accessToken: auth.token,
    recoveryPin: 'Abc1x3',
  })
  const address = created.ok?.address as string
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  expect(
    (await call(page, 'latch:wallet:connect', { address, accessToken: auth.token })).ok,
  ).toEqual({ address })

  // The shares the server holds never crossed to the modal's window.
  const row = await h.latch.deps.db
    .selectFrom('wallets')
    .selectAll()
    .where('address', '=', address.toLowerCase())
    .executeTakeFirstOrThrow()
  const { authShare, recovery } = openWalletRecord(h.latch.deps, row)
  const received = await page.evaluate(() => (window as unknown as { received: string[] }).received)
  expect(received.length).toBeGreaterThan(0)
  for (const secret of [authShare, recovery.ciphertext ?? '', recovery.verifier ?? '']) {
    expect(secret).toMatch(/^[0-9a-f]{64,}$/)
    expect(received.some((m) => m.toLowerCase().includes(secret))).toBe(false)
  }

  // The modal holds the token, and its credentialed fetch even carries the wallet credential,
  // yet the wallet API refuses it: the fetch is not the wallet origin's own.
  const stolen = await page.evaluate(
    async ([api, token, app, addr]) => {
      const res = await fetch(`${api}/api/v1/wallets/shares`, {
        method: 'POST',
        credentials: 'include',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          'latch-app-id': app as string,
          'latch-client': 'latch-modal',
        },
        body: JSON.stringify({ address: addr }),
      }).catch(() => null)
      return res ? { status: res.status, body: await res.text() } : null
    },
    [h.apiOrigin, auth.token, h.appId, address] as const,
  )
  expect(stolen?.status).toBe(403)
  expect(stolen?.body).not.toContain(authShare)

  // A reload is a new frame: where the browser refused storage it is a new device.
  await open(page)
  const again = await call(page, 'latch:iframe:ready')
  console.info(`wallet frame storage in this cross-site frame: persistent=${again.ok?.persistent}`)
  const connect = await call(page, 'latch:wallet:connect', { address, accessToken: auth.token })
  if (again.ok?.persistent) {
    expect(connect.ok).toEqual({ address })
  } else {
    expect(connect.error?.message).toBe('Wallet is not on this device')
  }
  const wrong = await call(page, 'latch:wallet:recover', {
    address,
    accessToken: auth.token,
    recoveryPin: 'Abc1x4',
  })
  expect(wrong.error).toEqual({
    code: 'invalid_recovery_pin',
    message: 'Invalid recovery passcode, please try again.',
  })
  const right = await call(page, 'latch:wallet:recover', {
    address,
    accessToken: auth.token,
    recoveryPin: 'Abc1x3',
  })
  expect(right.ok).toEqual({ address })
  expect(
    (await call(page, 'latch:wallet:connect', { address, accessToken: auth.token })).ok,
  ).toEqual({ address })
  // Bad arguments and an rpc method the wallet does not have answer clear errors.
  expect((await call(page, 'latch:wallet:create', { accessToken: '' })).error?.message).toBe(
    'Invalid request arguments',
  )
  expect(
    (await call(page, 'latch:wallet:create', { accessToken: auth.token, recoveryPin: 'ab c12' }))
      .error?.message,
  ).toBe('Passcode can only be letters and numbers')
  // A weak passcode is refused by the frame itself, before anything is drawn or sent, whatever
  // the modal's screen let through.
  expect(
    (await call(page, 'latch:wallet:create', { accessToken: auth.token, recoveryPin: 'Qwerty' }))
      .error?.message,
  ).toBe('This passcode is too easy to guess, please choose another')
  expect(
    (await call(page, 'latch:wallet:create', { accessToken: auth.token })).error?.message,
  ).toBe('Only one wallet per user is currently allowed')
  expect(
    (
      await call(page, 'latch:wallet:rpc', {
        address,
        accessToken: auth.token,
        request: { method: 'eth_accounts' },
      })
    ).error?.message,
  ).toBe('The in-app wallet does not support eth_accounts')
  await page.close()
})

test('behavior: three origins — host page, modal, wallet frame — the frame loads where the host page is registered, and not in a page of another origin', async () => {
  const page = await h.browser.newPage()
  const inHost = async (app: string, timeoutMs: number) => {
    const modal = h.modalUrl(h.modalOrigin, timeoutMs, app)
    await page.goto(`${h.hostOrigin}/host?modal=${encodeURIComponent(modal)}`)
    let frame = page.frames().find((f) => f.url().startsWith(h.modalOrigin))
    for (let i = 0; !frame && i < 50; i++) {
      await page.waitForTimeout(100)
      frame = page.frames().find((f) => f.url().startsWith(h.modalOrigin))
    }
    if (!frame) throw new Error('the modal stand-in did not load')
    await frame.waitForFunction(() => 'call' in window, undefined, { timeout: 10_000 })
    return {
      frame,
      ready: await frame.evaluate(() =>
        (window as unknown as { call(n: string): Promise<Answer> }).call('latch:iframe:ready'),
      ),
    }
  }
  // The registered host page: frame-ancestors checks every ancestor, and both are listed.
  const registered = await inHost(h.appId, 15_000)
  expect(registered.ready.ok).toEqual({ persistent: expect.any(Boolean) })
  // A wallet created and recovered here: neither the host page nor the modal receives a share.
  const user = await h.signIn(registered.frame, `three.${Date.now()}@example.com`)
  const created = await h.call(registered.frame, 'latch:wallet:create', {
    accessToken: user.token,
    recoveryPin: 'Three3',
  })
  const address = created.ok?.address as string
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  const recovered = await h.call(registered.frame, 'latch:wallet:recover', {
    address,
    accessToken: user.token,
    recoveryPin: 'Three3',
  })
  expect(recovered.ok).toEqual({ address })
  const row = await h.latch.deps.db
    .selectFrom('wallets')
    .selectAll()
    .where('address', '=', address.toLowerCase())
    .executeTakeFirstOrThrow()
  const { authShare, recovery } = openWalletRecord(h.latch.deps, row)
  const secrets = [authShare, recovery.ciphertext ?? '', recovery.verifier ?? '']
  const seen = [
    ...(await page.evaluate(() => (window as unknown as { received: string[] }).received)),
    ...(await registered.frame.evaluate(
      () => (window as unknown as { received: string[] }).received,
    )),
  ]
  expect(seen.length).toBeGreaterThan(0)
  for (const secret of secrets) {
    expect(secret).toMatch(/^[0-9a-f]{64,}$/)
    expect(seen.some((m) => m.toLowerCase().includes(secret))).toBe(false)
  }
  // An app that registered another host origin: the browser refuses to load the frame here.
  // A connection that has not come in 3 s will not come: the frame never loaded.
  const other = (await h.latch.newApp({ allowedOrigins: ['https://shop.example'] })).id
  expect((await inHost(other, 3000)).ready.error).toBeDefined()
  await page.close()
})

test('refusal: a top-level page of another origin than the modal gets no answer from the frame', async () => {
  const page = await h.browser.newPage()
  // The registered host origin at the top, without the modal: the frame may load there
  // (frame-ancestors lists it) but penpal answers the modal origin alone.
  // A connection that has not come in 3 s will not come.
  await open(page, h.hostOrigin, 3000)
  const answer = await call(page, 'latch:iframe:ready')
  expect(answer.error).toBeDefined()
  await page.close()
})

test("the page: strict CSP, frame-ancestors the modal and the app's host origins, no caching; hashed assets cached; unknown app refused", async () => {
  const res = await fetch(`${h.apiOrigin}/apps/${h.appId}/embedded-wallets`)
  expect(res.status).toBe(200)
  const csp = res.headers.get('content-security-policy') ?? ''
  expect(csp).toBe(
    `default-src 'none'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${h.modalOrigin} ${h.hostOrigin}`,
  )
  expect(csp).not.toContain('unsafe')
  expect(res.headers.get('cache-control')).toBe('no-store')
  const html = await res.text()
  expect(html).toContain(`content="${h.modalOrigin}"`)
  const asset = /src="(\/embedded-wallets\/assets\/[^"]+\.js)"/.exec(html)?.[1]
  expect(asset).toBeDefined()
  const js = await fetch(`${h.apiOrigin}${asset}`)
  expect(js.status).toBe(200)
  expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
  expect(js.headers.get('content-type')).toMatch(/^text\/javascript/)
  await js.arrayBuffer()
  for (const path of [
    '/embedded-wallets/assets/..%2Findex.html',
    '/embedded-wallets/assets/nope.js',
    '/embedded-wallets/assets/index.html',
  ]) {
    const r = await fetch(`${h.apiOrigin}${path}`)
    expect(r.status).toBe(404)
    await r.arrayBuffer()
  }
  const unknown = await fetch(`${h.apiOrigin}/apps/nope/embedded-wallets`)
  expect(unknown.status).toBe(400)
  expect(await unknown.json()).toMatchObject({ error: { code: 'missing_or_invalid_latch_app_id' } })
})

test('behavior: latch:wallet:confirm-fork records the handover of the wallet for this session’s own fork link, through the frame’s own fetch only', async () => {
  const page = await h.browser.newPage()
  await open(page)
  const auth = await h.signIn(page, `fork.${Date.now()}@example.com`)
  // An automatic-recovery wallet: what a fork link could otherwise hand over with the session.
  const created = await call(page, 'latch:wallet:create', { accessToken: auth.token })
  expect(created.ok?.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  // The modal forks its session with its credentialed fetch (the refresh cookie rides along;
  // the session keeps its id and the cookie rotates).
  const fork = (target: Page) =>
    target.evaluate(
      async ([url, headers]) => {
        const res = await fetch(url, {
          method: 'POST',
          credentials: 'include',
          headers: { 'content-type': 'application/json', ...headers },
          body: '{}',
          signal: AbortSignal.timeout(10_000),
        })
        if (!res.ok) throw new Error(`fork answered ${res.status}: ${await res.text()}`)
        return (await res.json()) as ForkResponse
      },
      [
        `${h.apiOrigin}${API_PREFIX}/sessions/fork`,
        { [APP_ID_HEADER]: h.appId, [CLIENT_HEADER]: 'latch-test-modal' },
      ] as const,
    )
  const forked = await fork(page)
  const confirmedAt = async (token: string) =>
    (
      await h.latch.deps.db
        .selectFrom('fork_tokens')
        .select('wallet_confirmed_at')
        .where('hash', '=', hashToken(token))
        .executeTakeFirstOrThrow()
    ).wallet_confirmed_at

  // Arguments are checked before anything leaves the frame.
  for (const bad of [
    { accessToken: forked.token },
    { accessToken: forked.token, forkToken: '' },
    { accessToken: forked.token, forkToken: 'x'.repeat(513) },
  ]) {
    expect((await call(page, 'latch:wallet:confirm-fork', bad)).error?.code).toBe(
      'invalid_request_arguments',
    )
  }

  // The host page holds the access token and the link (forkSession() answers it), and a script
  // on the modal's origin holds both too. Their fetches reach the route, from the browser (with
  // the cookie) or from anywhere else, and are refused: not the wallet origin's own.
  const direct = await page.evaluate(
    async ([api, token, app, forkToken]) => {
      const res = await fetch(`${api}/api/v1/wallets/fork/confirm`, {
        method: 'POST',
        credentials: 'include',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          'latch-app-id': app as string,
          'latch-client': 'latch-modal',
        },
        body: JSON.stringify({ fork_token: forkToken }),
      }).catch(() => null)
      return res?.status ?? 0
    },
    [h.apiOrigin, forked.token, h.appId, forked.new_session_refresh_token] as const,
  )
  expect(direct).toBe(403)
  const outside = await h.latch.request('/wallets/fork/confirm', {
    appId: h.appId,
    token: forked.token,
    body: { fork_token: forked.new_session_refresh_token },
  })
  expect(outside.status).toBe(403)
  expect(await confirmedAt(forked.new_session_refresh_token)).toBeNull()

  // Through the frame: recorded.
  const confirmed = await call(page, 'latch:wallet:confirm-fork', {
    accessToken: forked.token,
    forkToken: forked.new_session_refresh_token,
  })
  expect(confirmed).toEqual({ ok: { confirmed: true } })
  expect(await confirmedAt(forked.new_session_refresh_token)).toBeInstanceOf(Date)

  // A link of another session (another visitor's, or one made up) is not this session's to hand
  // over: the route's refusal crosses as a LatchError and nothing is recorded.
  const other = await h.browser.newPage()
  await open(other)
  const eve = await h.signIn(other, `fork.eve.${Date.now()}@example.com`)
  await call(other, 'latch:wallet:create', { accessToken: eve.token })
  const evesLink = await fork(other)
  const refused = await call(page, 'latch:wallet:confirm-fork', {
    accessToken: forked.token,
    forkToken: evesLink.new_session_refresh_token,
  })
  expect(refused.error).toEqual({
    code: 'invalid_data',
    message: 'No such session link of this session',
  })
  expect(await confirmedAt(evesLink.new_session_refresh_token)).toBeNull()
  await other.close()
  await page.close()
})
