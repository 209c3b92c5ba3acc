// @vitest-environment node
/**
 * The built wallet frame in Chromium, served by the real API, inside a stand-in modal page on
 * another origin that speaks the real protocol (penpal 7, serialized LatchErrors): create with a
 * passcode, reload (a new frame), recover with the passcode, and the refusals on the way.
 */

import { API_PREFIX, APP_ID_HEADER, CLIENT_HEADER, type ForkResponse } from '@latch/shared'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { forkTokenKey } from '../../server/src/sessions/service.ts'
import { openWalletRecord } from '../../server/src/wallets/records.ts'
import { linkShown } from './approval.ts'
import { type Answer, startWalletHarness, type WalletHarness } from './test/harness.ts'

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

/** The modal forks its session with its credentialed fetch (the refresh cookie rides along). */
function forkSession(page: Page): Promise<ForkResponse> {
  return page.evaluate(
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
}

test('refusal: no message approves: latch:wallet:confirm-fork is refused; an approval the frame shows does nothing until the visitor’s own click on its armed button, which no script can make', async () => {
  const page = await h.browser.newPage()
  await open(page)
  const auth = await h.signIn(page, `fork.${Date.now()}@example.com`)
  const created = await call(page, 'latch:wallet:create', { accessToken: auth.token })
  expect(created.ok?.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  const forked = { body: await forkSession(page) }
  const pairings = async () =>
    (await h.latch.deps.db.selectFrom('wallet_pairings').select('id').execute()).length
  const before = await pairings()

  // A script of the modal's origin asks the frame to confirm the fork by message: refused,
  // whatever it sends, and nothing is recorded.
  for (const arg of [
    { accessToken: forked.body.token, forkToken: forked.body.new_session_refresh_token },
    {},
  ]) {
    expect((await call(page, 'latch:wallet:confirm-fork', arg)).error).toEqual({
      code: 'origin_not_allowed',
      message: 'Approvals are made by the visitor’s click in the wallet frame, never by message',
    })
  }
  const row = await h.latch.deps.db
    .selectFrom('fork_tokens')
    .select(['wallet_confirmed_at', 'paired_mac'])
    .where('hash', '=', forkTokenKey(h.latch.deps, forked.body.new_session_refresh_token))
    .executeTakeFirstOrThrow()
  expect(row).toEqual({ wallet_confirmed_at: null, paired_mac: null })
  // Bad arguments of an approval are refused before anything is drawn.
  expect((await call(page, 'latch:wallet:approval', { kind: 'nope' })).error?.code).toBe(
    'invalid_request_arguments',
  )

  // The modal asks the frame to SHOW the pairing button, and keeps the frame hidden.
  const approval = call(page, 'latch:wallet:approval', {
    accessToken: forked.body.token,
    kind: 'fork-show-code',
  })
  const frame = page.frameLocator('#wallet')
  const button = frame.getByTestId('wallet-approval-button')
  await button.waitFor({ state: 'attached' })
  expect(await button.textContent()).toBe('Show a pairing code')
  await new Promise((r) => setTimeout(r, 800))
  // Hidden, it never arms; and the modal's script cannot reach the frame's document at all.
  expect(await button.getAttribute('aria-disabled')).toBe('true')
  expect(
    await page.evaluate(
      () => (document.getElementById('wallet') as HTMLIFrameElement).contentDocument === null,
    ),
  ).toBe(true)
  // Shown: a synthetic click (what a script in the frame's document could make) is not trusted,
  // armed or not.
  await page.evaluate(() => {
    const iframe = document.getElementById('wallet') as HTMLIFrameElement
    iframe.style.cssText = 'display:block;width:320px;height:200px;border:0'
  })
  await button.dispatchEvent('click')
  await expect.poll(() => button.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
  await button.dispatchEvent('click')
  await new Promise((r) => setTimeout(r, 300))
  expect(await pairings()).toBe(before)
  // Escape on the approval, which has the focus, is the modal's to act on (it closes): the
  // frame tells it and leaves its approval as it is.
  await button.focus()
  await page.keyboard.press('Escape')
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { escapes: number }).escapes), {
      timeout: 5000,
    })
    .toBe(1)
  expect(await button.getAttribute('aria-disabled')).toBeNull()
  // The visitor's own click on the armed button: the frame's own fetch makes the code.
  await button.click()
  expect(await approval).toEqual({ ok: { done: true } })
  const shown = (await frame.getByTestId('wallet-approval-pairing-code').textContent()) ?? ''
  expect(shown.replace(/\s/g, '')).toMatch(/^\d{6}$/)
  expect(await pairings()).toBe(before + 1)
  await page.close()
})

test('refusal: a frame the host page crops to its approval’s button, hiding the prompt, never arms and takes no click; uncropped, the same button arms and works', async () => {
  const page = await h.browser.newPage()
  await open(page)
  const auth = await h.signIn(page, `crop.${Date.now()}@example.com`)
  expect((await call(page, 'latch:wallet:create', { accessToken: auth.token })).ok).toBeDefined()
  const forked = await forkSession(page)
  const pairings = async () =>
    (await h.latch.deps.db.selectFrom('wallet_pairings').select('id').execute()).length
  const before = await pairings()
  const approval = call(page, 'latch:wallet:approval', {
    accessToken: forked.token,
    kind: 'fork-show-code',
  })
  const frame = page.frameLocator('#wallet')
  const button = frame.getByTestId('wallet-approval-button')
  await button.waitFor({ state: 'attached' })
  const place = (top: number) =>
    page.evaluate((y) => {
      const iframe = document.getElementById('wallet') as HTMLIFrameElement
      iframe.style.cssText = `display:block;position:fixed;left:0;top:${y}px;width:320px;height:200px;border:0`
    }, top)
  // Where the button starts inside the frame: the host moves the frame up so the button starts
  // at the viewport's top, whole, and the prompt above it is off screen.
  await place(100)
  const offset = await frame
    .locator('#approval-prompt')
    .evaluate(
      (prompt) =>
        (
          document.querySelector('[data-testid="wallet-approval-button"]') as HTMLElement
        ).getBoundingClientRect().top - prompt.getBoundingClientRect().top,
    )
  expect(offset).toBeGreaterThan(10)
  const top = await frame
    .getByTestId('wallet-approval-button')
    .evaluate((b) => b.getBoundingClientRect().top)
  await place(2 - top)
  await new Promise((r) => setTimeout(r, 1500))
  expect(await button.getAttribute('aria-disabled')).toBe('true')
  await button.click({ force: true })
  await new Promise((r) => setTimeout(r, 300))
  expect(await pairings()).toBe(before)
  // The whole approval in view: the button arms, and the visitor's click makes the code.
  await place(0)
  await expect.poll(() => button.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
  await button.click()
  expect(await approval).toEqual({ ok: { done: true } })
  expect(await pairings()).toBe(before + 1)
  await page.close()
})

test('param: a link approval names its method from the request’s own method, spelled as the server binds it: an e-mail address, an E.164 number, an address in full, a provider from the frame’s table, a passkey; anything else is refused', () => {
  const named = (type: string, identifier: string) =>
    linkShown({ type, identifier } as Parameters<typeof linkShown>[0], 'a passkey')
  const address = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359'
  expect(named('email', ' Attacker@Evil.Example ')).toEqual({
    type: 'email',
    identifier: 'attacker@evil.example',
    shown: 'attacker@evil.example',
  })
  expect(named('phone', '+1 (415) 555-0123')).toEqual({
    type: 'phone',
    identifier: '+14155550123',
    shown: '+14155550123',
  })
  // In full, as the server binds it, whatever case the request spelled it in.
  expect(named('siwe', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359')).toEqual({
    type: 'siwe',
    identifier: address,
    shown: address,
  })
  for (const [provider, name] of [
    ['google', 'Google'],
    ['twitter', 'Twitter'],
    ['discord', 'Discord'],
    ['github', 'GitHub'],
    ['apple', 'Apple'],
  ]) {
    expect(named('oauth', provider as string)).toEqual({
      type: 'oauth',
      identifier: provider,
      shown: name,
    })
  }
  expect(named('passkey', 'passkey')).toEqual({
    type: 'passkey',
    identifier: 'passkey',
    shown: 'a passkey',
  })
  for (const [type, identifier] of [
    // Types and providers the frame has no name for, own properties only.
    ['sms', '+14155550123'],
    ['wallet', address],
    ['oauth', 'myspace'],
    ['oauth', 'constructor'],
    ['oauth', 'Google Inc'],
    ['passkey', 'me@mine.example'],
    // Identifiers no link route verifies, or whose text does not show what it is.
    ['email', 'me@mine.example attacker@evil.example'],
    ['email', 'attacker@evil.example\u202e'],
    ['email', 'me\u200b@mine.example'],
    // A look-alike letter (Cyrillic е), and a right-to-left one.
    ['email', 'm\u0435@mine.example'],
    ['email', '\u05d0@evil.example'],
    ['email', 'not an address'],
    ['phone', '(415) 555-0123'],
    ['phone', '+1 415 555 0123 ext 7'],
    ['siwe', '0xfb69…d359'],
    ['siwe', address.slice(0, 40)],
  ]) {
    expect(named(type as string, identifier as string), `${type} ${identifier}`).toBeNull()
  }
  expect(linkShown(undefined, 'a passkey')).toBeNull()
})

test('refusal: a link approval shows the identifier it approves, never the label the modal sends; a method the frame cannot name is refused before anything is drawn or sent, and the click approves what was shown', async () => {
  const page = await h.browser.newPage()
  await open(page)
  const auth = await h.signIn(page, `link.${Date.now()}@example.com`)
  const sent: string[] = []
  page.on('request', (req) => {
    if (req.url().includes('/wallets/approvals')) sent.push(req.postData() ?? '')
  })
  const approvals = async () =>
    (await h.latch.deps.db.selectFrom('link_approvals').select('id').execute()).length
  const before = await approvals()
  const frame = page.frameLocator('#wallet')
  const prompt = frame.locator('#approval-prompt')
  const ask = (method: unknown, label?: string) =>
    call(page, 'latch:wallet:approval', {
      accessToken: auth.token,
      kind: 'link',
      ...(label === undefined ? {} : { label }),
      ...(method === undefined ? {} : { method }),
    })
  const dismiss = () => call(page, 'latch:wallet:dismiss-approval')
  // A script of the modal's origin names the visitor's own address and asks for its own: the
  // frame says whose it is. Each type in its words, whatever label rides along.
  const address = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359'
  for (const [method, shown] of [
    [{ type: 'email', identifier: 'Attacker@Evil.Example' }, 'attacker@evil.example'],
    [{ type: 'phone', identifier: '+1 415 555 0123' }, '+14155550123'],
    [{ type: 'siwe', identifier: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359' }, address],
    [{ type: 'oauth', identifier: 'github' }, 'GitHub'],
    [{ type: 'passkey', identifier: 'passkey' }, 'a passkey'],
  ] as const) {
    const asked = ask(method, 'me@mine.example')
    await prompt.waitFor({ state: 'attached' })
    expect(await prompt.textContent(), method.type).toBe(
      `Let ${shown} sign in to your account and open your wallet?`,
    )
    await dismiss()
    expect((await asked).error?.code).toBe('embedded_wallet_error')
  }
  // One the frame cannot name: refused, nothing drawn, nothing asked of the server.
  for (const [method, label] of [
    [{ type: 'oauth', identifier: 'myspace' }, 'Google'],
    [{ type: 'oauth', identifier: 'toString' }, 'Google'],
    [{ type: 'sms', identifier: '+14155550123' }, '+14155550123'],
    [{ type: 'passkey', identifier: 'attacker@evil.example' }, 'a passkey'],
    [{ type: 'email', identifier: 'attacker@evil.example\u202e' }, 'me@mine.example'],
    [{ type: 'email', identifier: 'm\u0435@mine.example' }, 'me@mine.example'],
    [undefined, 'me@mine.example'],
  ] as const) {
    expect((await ask(method, label)).error?.code, JSON.stringify(method)).toBe(
      'invalid_request_arguments',
    )
    expect(await frame.getByTestId('wallet-approval').count()).toBe(0)
  }
  expect(sent).toEqual([])
  expect(await approvals()).toBe(before)

  // The visitor's click on what the frame named approves that very identifier.
  const approving = ask({ type: 'email', identifier: 'Attacker@Evil.Example' }, 'me@mine.example')
  const button = frame.getByTestId('wallet-approval-button')
  await button.waitFor({ state: 'attached' })
  await page.evaluate(() => {
    const iframe = document.getElementById('wallet') as HTMLIFrameElement
    iframe.style.cssText = 'display:block;width:320px;height:200px;border:0'
  })
  await expect.poll(() => button.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
  await button.click()
  expect(await approving).toEqual({ ok: { done: true } })
  expect(sent.map((body) => JSON.parse(body))).toEqual([
    { type: 'email', identifier: 'attacker@evil.example' },
  ])
  expect(await approvals()).toBe(before + 1)
  const rows = await h.latch.deps.db
    .selectFrom('link_approvals')
    .select(['kind', 'identifier'])
    .where('identifier', 'like', '%evil.example')
    .execute()
  expect(rows).toEqual([{ kind: 'email', identifier: 'attacker@evil.example' }])
  await page.close()
})
