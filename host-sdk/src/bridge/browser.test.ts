// @vitest-environment node
/**
 * The wallet bridge in Chromium across three origins: a host page running the built SDK with a
 * test wallet injected (e2e/src/injected-wallet.ts, a real key), a stand-in modal page on the
 * modal origin that calls HostMethods over penpal as the modal does, and a third origin that
 * tries to call them too. The real modal's path is in e2e/src/wallet-bridge.spec.ts.
 */
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildFrontendOnce, type InjectedWallet, injectWallet, launchChromium } from '@latch/e2e'
import { WALLET_REQUEST_TIMEOUT_MS } from '@latch/shared'
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core'
import { verifyMessage } from 'viem'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'

const APP_ID = 'cl0000000000000000000000a'
const WALLET_UUID = '5b0c1f0e-7a55-4c8e-9d6e-2f1a3b4c5d6e'

vi.setConfig({ testTimeout: 30_000 })
const PENPAL = fileURLToPath(
  new URL('../../../node_modules/penpal/dist/penpal.min.js', import.meta.url),
)

let outDir: string
let browser: Browser
const servers: Server[] = []
let host = ''
let modal = ''
let evil = ''
/**
 * The files the SDK imports from the modal origin at run time: how often each was asked for,
 * and whether the next ask fails (a 404, as a deploy in progress can give).
 */
const lazyFiles = new Map(
  ['wallet-bridge.js', 'provider.js'].map((file) => [file, { loads: 0, down: false }]),
)
const bridgeFile = lazyFiles.get('wallet-bridge.js') as { loads: number; down: boolean }
const providerFile = lazyFiles.get('provider.js') as { loads: number; down: boolean }
let context: BrowserContext
let page: Page
let wallet: InjectedWallet

/** The stand-in modal: connects to the host page and records the wallet events it is sent. */
const modalPage = () => `<!doctype html><html><body><p>stand-in modal</p>
<script src="/penpal.min.js"></script>
<script>
window.walletEvents = []
Penpal.connect({
  messenger: new Penpal.WindowMessenger({ remoteWindow: window.parent, allowedOrigins: ['${host}'] }),
  methods: {
    async init() { return { app: { id: '${APP_ID}' }, warnings: [], user: null } },
    async walletEvent(id, event, payload) { window.walletEvents.push([id, event, payload]) },
  },
}).promise.then((remote) => { window.host = remote })
</script></body></html>`

const hostPage = () => `<!doctype html><html><head><meta charset="utf-8"></head><body>
<script type="module">
import { createLatch } from '/latch.js'
window.sentinels = 0
window.addEventListener('message', (e) => { if (e.data === 'sentinel') window.sentinels++ })
window.latch = createLatch({ appId: '${APP_ID}', modalUrl: '${modal}' })
</script></body></html>`

/** A penpal CALL as the modal's penpal sends one, posted to the host page from this window. */
const forgedCall = (id: string) =>
  JSON.stringify({
    namespace: 'penpal',
    type: 'CALL',
    id,
    methodPath: ['request'],
    args: [WALLET_UUID, 'eth_requestAccounts'],
  })

/** A page on a third origin that forges a call to the host page, then posts a sentinel. */
const evilPage = () => `<!doctype html><html><body><p>another origin</p><script>
window.parent.postMessage(${forgedCall('evil-1')}, '*')
window.parent.postMessage('sentinel', '*')
</script></body></html>`

type Route = [type: string, body: string]

function serve(routes: (path: string) => Route | undefined, headers = {}): Promise<string> {
  const server = createServer((req, res) => {
    const found = routes(new URL(req.url ?? '/', 'http://x').pathname)
    if (!found) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': found[0], 'cache-control': 'no-store', ...headers })
    res.end(found[1])
  })
  servers.push(server)
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    })
  })
}

const JS = 'text/javascript'
const HTML = 'text/html'

beforeAll(async () => {
  // The run's build of the SDK (e2e/src/build.ts: once per run, of the current sources).
  let built: { sdk: string }
  ;[built, browser] = await Promise.all([buildFrontendOnce(), launchChromium()])
  outDir = built.sdk
  host = await serve((path) => {
    if (path === '/latch.js') return [JS, readFileSync(join(outDir, 'latch.js'), 'utf8')]
    if (path === '/') return [HTML, hostPage()]
    return undefined
  })
  // As the modal server serves it: an ES module other origins may import (CORS).
  modal = await serve(
    (path) => {
      if (path === '/penpal.min.js') return [JS, readFileSync(PENPAL, 'utf8')]
      const lazy = lazyFiles.get(path.slice(1))
      if (lazy) {
        lazy.loads++
        if (lazy.down) {
          lazy.down = false
          return undefined
        }
        return [JS, readFileSync(join(outDir, path.slice(1)), 'utf8')]
      }
      if (path === '/') return [HTML, modalPage()]
      return undefined
    },
    { 'access-control-allow-origin': '*' },
  )
  evil = await serve((path) => (path === '/' ? [HTML, evilPage()] : undefined))
  // Three origins on one machine: 127.0.0.1 on three ports, and the host on localhost.
  host = host.replace('127.0.0.1', 'localhost')
}, 90_000)

afterAll(async () => {
  await browser?.close()
  for (const server of servers) await new Promise((resolve) => server.close(resolve))
})

afterEach(async () => {
  await context?.close()
})

async function start(options: { clock?: boolean } = {}): Promise<Frame> {
  for (const lazy of lazyFiles.values()) lazy.loads = 0
  context = await browser.newContext()
  wallet = await injectWallet(context, {
    uuid: WALLET_UUID,
    name: 'Test Wallet',
    legacy: true,
    flags: { isMetaMask: true },
    rdns: 'test.latch.wallet',
  })
  page = await context.newPage()
  page.setDefaultTimeout(10_000)
  if (options.clock) await page.clock.install()
  await page.goto(`${host}/`)
  await page.waitForFunction(() => (window as unknown as { latch?: unknown }).latch)
  await page.evaluate(() => (window as unknown as { latch: { ready: Promise<void> } }).latch.ready)
  const frame = page.frames().find((f) => f.url().startsWith(modal))
  if (!frame) throw new Error('no modal frame')
  await frame.waitForFunction(() => (window as unknown as { host?: unknown }).host)
  return frame
}

type HostRemote = {
  wallets(): Promise<unknown>
  request(id: string, method: string, params?: unknown): Promise<unknown>
}

/** Calls a host method from the modal frame; answers `{ value }` or the error it got. */
function hostCall(frame: Frame, method: 'wallets' | 'request', ...args: unknown[]) {
  return frame.evaluate(
    async ([name, list]) => {
      const remote = (window as unknown as { host: HostRemote }).host
      try {
        // biome-ignore lint/suspicious/noExplicitAny: the call's arguments as the test gives them
        return { value: await (remote[name] as (...a: any[]) => Promise<unknown>)(...list) }
      } catch (e) {
        return { error: e as Record<string, unknown> }
      }
    },
    [method, args] as const,
  )
}

const siwe = (address: string) =>
  `${new URL(host).host} wants you to sign in with your Ethereum account:\n${address}\n\nSign in to Latch. Signing costs no fees.\n\nURI: ${host}\nVersion: 1\nChain ID: 1\nNonce: 8fj2kd93ls\nIssued At: 2026-11-23T22:00:00.000Z`

describe('wallet bridge across origins', () => {
  test('behavior: loaded from the modal origin only when the modal first asks; the wallet is listed once', async () => {
    const frame = await start()
    expect(bridgeFile.loads).toBe(0)
    const first = await hostCall(frame, 'wallets')
    // Announced by EIP-6963 and also window.ethereum (the same provider): listed once.
    expect(first).toEqual({
      value: [
        {
          id: WALLET_UUID,
          name: 'Test Wallet',
          icon: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
          rdns: 'test.latch.wallet',
        },
      ],
    })
    await hostCall(frame, 'wallets')
    await hostCall(frame, 'request', WALLET_UUID, 'eth_chainId')
    expect(bridgeFile.loads).toBe(1)
  })

  test('error: a bridge that fails to load fails that call only; the next call loads it again', async () => {
    const frame = await start()
    bridgeFile.down = true
    const failed = await hostCall(frame, 'wallets')
    expect(failed).toEqual({ error: expect.objectContaining({ __latch_error__: true }) })
    expect(bridgeFile.loads).toBe(1)
    expect(await hostCall(frame, 'wallets')).toEqual({
      value: [expect.objectContaining({ id: WALLET_UUID })],
    })
    expect(bridgeFile.loads).toBe(2)
  })

  test('error: a provider.js that fails to load fails that getEthereumProvider() only; the next call loads it again, and every later call answers the same provider', async () => {
    await start()
    providerFile.down = true
    const provider = () =>
      page.evaluate(async () => {
        type Latch = { getEthereumProvider(): Promise<{ request: unknown }> }
        const w = window as unknown as { latch: Latch; providers?: unknown[] }
        try {
          const got = await w.latch.getEthereumProvider()
          w.providers = [...(w.providers ?? []), got]
          return typeof got.request === 'function' ? 'provider' : 'no request()'
        } catch (e) {
          return `failed: ${e instanceof Error ? e.message : String(e)}`
        }
      })
    expect(await provider()).toMatch(/^failed: /)
    expect(providerFile.loads).toBe(1)
    expect(await provider()).toBe('provider')
    expect(await provider()).toBe('provider')
    expect(providerFile.loads).toBe(2)
    const same = await page.evaluate(() => {
      const [a, b] = (window as unknown as { providers: unknown[] }).providers
      return a === b
    })
    expect(same).toBe(true)
  })

  test('behavior: connect and sign in: the wallet sees the host page as the requester, and the signature verifies', async () => {
    const frame = await start()
    expect(await hostCall(frame, 'request', WALLET_UUID, 'eth_requestAccounts')).toEqual({
      value: [wallet.address],
    })
    const message = siwe(wallet.address)
    const signed = await hostCall(frame, 'request', WALLET_UUID, 'personal_sign', [
      message,
      wallet.address,
    ])
    const signature = (signed as { value: `0x${string}` }).value
    expect(await verifyMessage({ address: wallet.address, message, signature })).toBe(true)
    expect(wallet.requests.map((r) => [r.method, r.origin])).toEqual([
      ['eth_requestAccounts', host],
      ['personal_sign', host],
    ])
  })

  test('error: rejected (4001) and already pending (-32002) arrive in the modal with their codes and messages', async () => {
    const frame = await start()
    wallet.behave('reject')
    expect(await hostCall(frame, 'request', WALLET_UUID, 'eth_requestAccounts')).toEqual({
      error: expect.objectContaining({
        __latch_error__: true,
        code: 'rpc_user_rejected',
        type: 'wallet_error',
        rpcCode: 4001,
        message: 'User rejected the request.',
        retryable: true,
      }),
    })
    wallet.behave('pending')
    expect(await hostCall(frame, 'request', WALLET_UUID, 'eth_requestAccounts')).toEqual({
      error: expect.objectContaining({
        code: 'rpc_resource_unavailable',
        rpcCode: -32002,
        message: `Request of type 'eth_requestAccounts' already pending for origin ${host}. Please wait.`,
        details: 'Don’t see your wallet modal? Check your other browser windows.',
      }),
    })
  })

  test('error: a method the sign-in does not need never reaches the wallet (4200)', async () => {
    const frame = await start()
    const sent = await hostCall(frame, 'request', WALLET_UUID, 'eth_sendTransaction', [
      { to: wallet.address, value: '0x1' },
    ])
    expect(sent).toEqual({
      error: expect.objectContaining({ code: 'rpc_unsupported_method', rpcCode: 4200 }),
    })
    const other = await hostCall(frame, 'request', WALLET_UUID, 'personal_sign', [
      siwe(wallet.address).replace(new URL(host).host, 'evil.example'),
      wallet.address,
    ])
    expect(other).toEqual({
      error: expect.objectContaining({ code: 'rpc_invalid_params', rpcCode: -32602 }),
    })
    expect(wallet.requests).toEqual([])
  })

  test("behavior: the wallet's events reach the modal once it has used the wallet", async () => {
    const frame = await start()
    expect(await hostCall(frame, 'request', WALLET_UUID, 'eth_requestAccounts')).toEqual({
      value: [wallet.address],
    })
    await wallet.emit('accountsChanged', [wallet.address])
    await wallet.emit('chainChanged', '0x2105')
    await wallet.emit('disconnect', { code: 4900, message: 'Disconnected' })
    // Polled, so that a failure shows what did arrive.
    await expect
      .poll(
        () => frame.evaluate(() => (window as unknown as { walletEvents: unknown[] }).walletEvents),
        { timeout: 10_000 },
      )
      .toEqual([
        [WALLET_UUID, 'accountsChanged', [wallet.address]],
        [WALLET_UUID, 'chainChanged', '0x2105'],
        [WALLET_UUID, 'disconnect', { code: 4900, message: 'Disconnected' }],
      ])
  })

  test('error: a wallet that never answers: "Wallet request timed out" after 120 s on the page clock', async () => {
    const frame = await start({ clock: true })
    wallet.behave('hang')
    const pending = hostCall(frame, 'request', WALLET_UUID, 'eth_requestAccounts')
    await expect.poll(() => wallet.requests.length, { timeout: 10_000 }).toBe(1)
    await page.clock.runFor(WALLET_REQUEST_TIMEOUT_MS)
    expect(await pending).toEqual({
      error: expect.objectContaining({
        code: 'wallet_request_timeout',
        message: 'Wallet request timed out',
        details: 'Please try connecting again.',
      }),
    })
  })
})

describe('origin pinning', () => {
  /** Waits until the host page has received `count` sentinels (each after a forged call). */
  const sentinels = (count: number) =>
    page.waitForFunction((n) => (window as unknown as { sentinels: number }).sentinels >= n, count)

  test('error: a call from another origin (a frame in the page, or the modal frame navigated away) gets no answer and reaches no wallet', async () => {
    const frame = await start()
    // The forged call is well formed: posted from the modal frame itself, it reaches the wallet.
    await frame.evaluate(
      (call) => window.parent.postMessage(JSON.parse(call), '*'),
      forgedCall('ok-1'),
    )
    await expect.poll(() => wallet.requests.length, { timeout: 10_000 }).toBe(1)
    // A frame of a third origin in the page posts the same call, then a sentinel.
    await page.evaluate((src) => {
      const iframe = document.createElement('iframe')
      iframe.src = src
      document.body.append(iframe)
    }, `${evil}/`)
    await sentinels(1)
    // The modal frame navigated to the third origin: same window, wrong origin.
    await frame.goto(`${evil}/`)
    await sentinels(2)
    // Each sentinel left after its forged call, from the same window: both calls were
    // delivered and dropped. (With allowedOrigins ['*'] the second one reaches the wallet.)
    expect(wallet.requests.map((r) => r.method)).toEqual(['eth_requestAccounts'])
  })
})
