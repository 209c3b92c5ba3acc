// @vitest-environment node
/**
 * The built wallet frame in Chromium, served by the real API, inside a stand-in modal page on
 * another origin that speaks the real protocol (penpal 7, serialized LatchErrors): create with a
 * passcode, reload (a new frame), recover with the passcode, and the refusals on the way.
 */

import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { type ServerType, serve } from '@hono/node-server'
import { launchChromium } from '@latch/e2e'
import type { AuthResponse } from '@latch/shared'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { startTestServer, type TestServer } from '../../server/src/test-support.ts'
import { buildWalletFrame } from '../build.ts'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 })
const PENPAL = readFileSync(
  fileURLToPath(new URL('../../node_modules/penpal/dist/penpal.min.js', import.meta.url)),
  'utf8',
)

let browser: Browser
let parent: Server
let api: ServerType
let latch: { server: TestServer; close(): Promise<void> }
let parentOrigin = ''
/** The host page's origin: the same server as the modal stand-in, named 127.0.0.1. */
let hostOrigin = ''
let apiOrigin = ''
let appId = ''
let auth: AuthResponse

/** The stand-in modal: embeds the frame, records every message it receives, relays calls. */
function parentPage(frameUrl: string, frameOrigin: string, timeoutMs: number): string {
  return `<!doctype html><html><body>
<script src="/penpal.min.js"></script>
<iframe id="wallet" src="${frameUrl}" style="display:none"></iframe>
<script>
window.received = []
addEventListener('message', (e) => window.received.push(JSON.stringify(e.data)))
window.wallet = Penpal.connect({
  messenger: new Penpal.WindowMessenger({
    remoteWindow: document.getElementById('wallet').contentWindow,
    allowedOrigins: ['${frameOrigin}'],
  }),
  timeout: ${timeoutMs},
}).promise
window.call = async (name, arg) => {
  try { const w = await window.wallet; return { ok: await w[name](arg) } }
  catch (e) { return { error: e && e.message !== undefined ? { message: e.message, code: e.code } : String(e) } }
}
</script></body></html>`
}

beforeAll(async () => {
  parent = createServer((req, res) => {
    if (req.url === '/penpal.min.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(PENPAL)
      return
    }
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname === '/host') {
      // The host page: it embeds the modal stand-in, which embeds the wallet frame.
      const modal = (url.searchParams.get('modal') ?? '').replace(/"/g, '')
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<iframe src="${modal}"></iframe>`)
      return
    }
    const frame = url.searchParams.get('frame') ?? ''
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        parentPage(
          frame,
          url.searchParams.get('origin') ?? '',
          Number(url.searchParams.get('timeout') ?? 15_000),
        ),
      )
  })
  await new Promise<void>((resolve) => parent.listen(0, '127.0.0.1', resolve))
  // The modal stand-in on 'localhost', the API on '127.0.0.1': two sites, as in production.
  parentOrigin = `http://localhost:${(parent.address() as AddressInfo).port}`
  hostOrigin = `http://127.0.0.1:${(parent.address() as AddressInfo).port}`
  const [, started, launched] = await Promise.all([
    buildWalletFrame(),
    startTestServer('pglite', 'memory://', { LATCH_MODAL_ORIGIN: parentOrigin }),
    launchChromium(),
  ])
  latch = started
  browser = launched
  api = serve({ fetch: latch.server.app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => api.once('listening', () => resolve()))
  apiOrigin = `http://127.0.0.1:${(api.address() as AddressInfo).port}`
  appId = (await latch.server.newApp({ allowedOrigins: [hostOrigin] })).id
  auth = await latch.server.emailLogin(appId, `frame.${Date.now()}@example.com`)
})

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => api?.close(resolve))
  await new Promise((resolve) => parent?.close(resolve))
  await latch?.close()
})

type Answer = {
  ok?: { address?: string; persistent?: boolean }
  error?: { message: string; code: string }
}

function modalUrl(base: string, timeoutMs: number, app = appId): string {
  const frame = `${apiOrigin}/apps/${app}/embedded-wallets`
  return `${base}/?frame=${encodeURIComponent(frame)}&origin=${encodeURIComponent(apiOrigin)}&timeout=${timeoutMs}`
}

async function open(page: Page, base = parentOrigin, timeoutMs = 15_000): Promise<void> {
  await page.goto(modalUrl(base, timeoutMs))
}
const call = (page: Page, name: string, arg?: unknown) =>
  page.evaluate(
    ([n, a]) =>
      (window as unknown as { call(n: string, a: unknown): Promise<Answer> }).call(n as string, a),
    [name, arg] as const,
  )

test('behavior: create with a passcode, reload, recover on the "new device" with the passcode; no key material reaches the modal', async () => {
  const page = await browser.newPage()
  await open(page)
  const ready = await call(page, 'latch:iframe:ready')
  expect(ready.ok).toEqual({ persistent: expect.any(Boolean) })
  const created = await call(page, 'latch:wallet:create', {
    accessToken: auth.token,
    recoveryPin: 'abc123',
  })
  const address = created.ok?.address as string
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  expect(
    (await call(page, 'latch:wallet:connect', { address, accessToken: auth.token })).ok,
  ).toEqual({ address })

  // The shares the server holds never crossed to the modal's window.
  const row = await latch.server.deps.db
    .selectFrom('wallets')
    .selectAll()
    .where('address', '=', address.toLowerCase())
    .executeTakeFirstOrThrow()
  const authShare = latch.server.deps.secrets.decrypt(row.auth_share_sealed)
  const recovery = JSON.parse(latch.server.deps.secrets.decrypt(row.recovery_sealed)) as Record<
    string,
    string
  >
  const received = await page.evaluate(() => (window as unknown as { received: string[] }).received)
  expect(received.length).toBeGreaterThan(0)
  for (const secret of [authShare, recovery.ciphertext ?? '', recovery.verifier ?? '']) {
    expect(secret).toMatch(/^[0-9a-f]{64,}$/)
    expect(received.some((m) => m.toLowerCase().includes(secret))).toBe(false)
  }

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
    recoveryPin: 'abc124',
  })
  expect(wrong.error).toEqual({
    code: 'invalid_recovery_pin',
    message: 'Invalid recovery passcode, please try again.',
  })
  const right = await call(page, 'latch:wallet:recover', {
    address,
    accessToken: auth.token,
    recoveryPin: 'abc123',
  })
  expect(right.ok).toEqual({ address })
  expect(
    (await call(page, 'latch:wallet:connect', { address, accessToken: auth.token })).ok,
  ).toEqual({ address })
  // Bad arguments and the rpc of the next issue answer clear errors.
  expect((await call(page, 'latch:wallet:create', { accessToken: '' })).error?.message).toBe(
    'Invalid request arguments',
  )
  expect(
    (await call(page, 'latch:wallet:create', { accessToken: auth.token, recoveryPin: 'ab c12' }))
      .error?.message,
  ).toBe('Passcode can only be letters and numbers')
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
  ).toMatch(/not yet available/)
  await page.close()
})

test('behavior: three origins — host page, modal, wallet frame — the frame loads where the host page is registered, and not in a page of another origin', async () => {
  const page = await browser.newPage()
  const inHost = async (app: string, timeoutMs: number) => {
    const modal = modalUrl(parentOrigin, timeoutMs, app)
    await page.goto(`${hostOrigin}/host?modal=${encodeURIComponent(modal)}`)
    let frame = page.frames().find((f) => f.url().startsWith(parentOrigin))
    for (let i = 0; !frame && i < 50; i++) {
      await page.waitForTimeout(100)
      frame = page.frames().find((f) => f.url().startsWith(parentOrigin))
    }
    if (!frame) throw new Error('the modal stand-in did not load')
    await frame.waitForFunction(() => 'call' in window, undefined, { timeout: 10_000 })
    return frame.evaluate(() =>
      (window as unknown as { call(n: string): Promise<Answer> }).call('latch:iframe:ready'),
    )
  }
  // The registered host page: frame-ancestors checks every ancestor, and both are listed.
  expect((await inHost(appId, 15_000)).ok).toEqual({ persistent: expect.any(Boolean) })
  // An app that registered another host origin: the browser refuses to load the frame here.
  // A connection that has not come in 3 s will not come: the frame never loaded.
  const other = (await latch.server.newApp({ allowedOrigins: ['https://shop.example'] })).id
  expect((await inHost(other, 3000)).error).toBeDefined()
  await page.close()
})

test('refusal: a top-level page of another origin than the modal gets no answer from the frame', async () => {
  const page = await browser.newPage()
  // The registered host origin at the top, without the modal: the frame may load there
  // (frame-ancestors lists it) but penpal answers the modal origin alone.
  // A connection that has not come in 3 s will not come.
  await open(page, hostOrigin, 3000)
  const answer = await call(page, 'latch:iframe:ready')
  expect(answer.error).toBeDefined()
  await page.close()
})

test("the page: strict CSP, frame-ancestors the modal and the app's host origins, no caching; hashed assets cached; unknown app refused", async () => {
  const res = await fetch(`${apiOrigin}/apps/${appId}/embedded-wallets`)
  expect(res.status).toBe(200)
  const csp = res.headers.get('content-security-policy') ?? ''
  expect(csp).toBe(
    `default-src 'none'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${parentOrigin} ${hostOrigin}`,
  )
  expect(csp).not.toContain('unsafe')
  expect(res.headers.get('cache-control')).toBe('no-store')
  const html = await res.text()
  expect(html).toContain(`content="${parentOrigin}"`)
  const asset = /src="(\/embedded-wallets\/assets\/[^"]+\.js)"/.exec(html)?.[1]
  expect(asset).toBeDefined()
  const js = await fetch(`${apiOrigin}${asset}`)
  expect(js.status).toBe(200)
  expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
  expect(js.headers.get('content-type')).toMatch(/^text\/javascript/)
  await js.arrayBuffer()
  for (const path of [
    '/embedded-wallets/assets/..%2Findex.html',
    '/embedded-wallets/assets/nope.js',
    '/embedded-wallets/assets/index.html',
  ]) {
    const r = await fetch(`${apiOrigin}${path}`)
    expect(r.status).toBe(404)
    await r.arrayBuffer()
  }
  const unknown = await fetch(`${apiOrigin}/apps/nope/embedded-wallets`)
  expect(unknown.status).toBe(400)
  expect(await unknown.json()).toMatchObject({ error: { code: 'missing_or_invalid_latch_app_id' } })
})
