// @vitest-environment node
/**
 * The built SDK in Chromium, across two origins: a host page and a stand-in modal page that
 * speaks the real protocol (penpal 7, serialized LatchErrors). The real modal is tested with the
 * SDK end to end in e2e/.
 */
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildFrontendOnce, launchChromium } from '@latch/e2e'
import {
  API_TIMEOUT_MS,
  ERRORS,
  LatchError,
  MODAL_CONNECT_TIMEOUT_MS,
  serializeError,
} from '@latch/shared'
import type { Browser, Frame, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { PENDING_FLOW_KEY } from './oauth.ts'

const APP_ID = 'cl0000000000000000000000a'

vi.setConfig({ testTimeout: 20_000 })
const PENPAL = fileURLToPath(
  new URL('../../node_modules/penpal/dist/penpal.min.js', import.meta.url),
)

let outDir: string
let browser: Browser
let hostServer: Server
let modalServer: Server
let host = ''
let modal = ''
let page: Page

const serialized = (
  code:
    | 'login_exited'
    | 'link_exited'
    | 'create_exited'
    | 'recovery_exited'
    | 'last_account_unlink_forbidden'
    | 'no_login_method',
) => JSON.stringify(serializeError(LatchError.of(code)))

/**
 * The stand-in modal: records calls, opens itself for flows, settles them when told. Like the
 * real modal (init-gate.ts), it holds every call until init settled and fails it with init's
 * error; at /slow-init/ its init waits for `releaseInit()`.
 */
function modalPage(): string {
  return `<!doctype html><html><body><p>stand-in modal</p>
<script>
// At /painted/, first what a server-rendered landing posts (modal-app/src/ssr/before-hydration.ts).
if (location.pathname === '/painted/') parent.postMessage({ latchLanding: 300, title: 'Log in to Acme' }, '*')
</script>
<script src="/penpal.min.js"></script>
<script>
const exits = {
  login: ${serialized('login_exited')},
  link: ${serialized('link_exited')},
  createWallet: ${serialized('create_exited')},
  recoverWallet: ${serialized('recovery_exited')},
}
window.calls = []
let pending = null
const flow = (kind) => new Promise((resolve, reject) => {
  pending = { kind, resolve, reject }
  window.host.setOpen(true)
})
window.settle = (value) => { const p = pending; pending = null; p.resolve(value) }
window.exit = () => { const p = pending; pending = null; if (p) p.reject(exits[p.kind]) }
const record = (method, args) => window.calls.push({ method, args })
const methods = {
  async init(config, returnParams, flow) {
    record('init', flow ? [config, returnParams, flow] : [config, returnParams])
    if (config.loginMethods && config.loginMethods.length === 0) throw ${serialized('no_login_method')}
    return { app: { id: '${APP_ID}' }, warnings: [], user: null } },
  login() { record('login', []); return flow('login') },
  link(kind) { record('link', [kind]); return flow('link') },
  createWallet() { record('createWallet', []); return flow('createWallet') },
  recoverWallet() { record('recoverWallet', []); return flow('recoverWallet') },
  async unlink() { throw ${serialized('last_account_unlink_forbidden')} },
  async logout() { record('logout', []) },
  async getUser() { return { id: 'user-1' } },
  getAccessToken() { return window.hang ? new Promise(() => {}) : Promise.resolve('token-1') },
  async close() { record('close', []); window.exit() },
}
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') { window.exit(); window.host.setOpen(false) }
})
window.arrived = []
let initSettled = new Promise((resolve) => { window.firstInit = resolve })
const slowInit = location.pathname === '/slow-init/'
const released = new Promise((resolve) => { window.releaseInit = resolve })
const held = {}
for (const [name, fn] of Object.entries(methods)) {
  held[name] = (...args) => {
    window.arrived.push(name)
    if (name !== 'init') return initSettled.then(() => fn(...args))
    const result = (slowInit ? released : Promise.resolve()).then(() => fn(...args))
    window.firstInit(result)
    initSettled = result
    return result
  }
}
Penpal.connect({
  messenger: new Penpal.WindowMessenger({ remoteWindow: window.parent, allowedOrigins: ['${host}'] }),
  methods: held,
}).promise.then((remote) => { window.host = remote })
</script></body></html>`
}

const hostPage = `<!doctype html><html><head><meta charset="utf-8"></head><body>
<button id="opener">Open</button><div id="inline"></div>
<script type="module">
import { createLatch, LatchError } from '/latch.js'
window.createLatch = createLatch
window.LatchError = LatchError
window.successes = []
window.received = []
</script></body></html>`

function scriptPage(): string {
  return `<!doctype html><html><body>
<script src="${modal}/sdk.js" data-app-id="${APP_ID}"></script>
<a href="#" id="sign-in" data-latch-login>Sign in</a>
</body></html>`
}

function serve(routes: (path: string) => [string, string] | undefined): Promise<[Server, string]> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    const found = routes(path)
    if (!found) {
      res.writeHead(404).end()
      return
    }
    if (found[0] === REDIRECT) res.writeHead(302, { location: found[1] }).end()
    else res.writeHead(200, { 'content-type': found[0], 'cache-control': 'no-store' }).end(found[1])
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve([server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`])
    })
  })
}

const JS = 'text/javascript'
const REDIRECT = 'redirect'
const HTML = 'text/html'

beforeAll(async () => {
  // The run's build of the SDK (e2e/src/build.ts: once per run, of the current sources).
  const [built, launched] = await Promise.all([buildFrontendOnce(), launchChromium()])
  outDir = built.sdk
  browser = launched
  ;[hostServer, host] = await serve((path) => {
    if (path === '/latch.js') return [JS, readFileSync(join(outDir, 'latch.js'), 'utf8')]
    if (path === '/script.html') return [HTML, scriptPage()]
    // A page on the host's origin that speaks the modal's protocol perfectly.
    if (path === '/impostor/') return [HTML, modalPage()]
    if (path === '/penpal.min.js') return [JS, readFileSync(PENPAL, 'utf8')]
    if (path === '/' || path === '/next') return [HTML, hostPage]
    return undefined
  })
  ;[modalServer, modal] = await serve((path) => {
    if (path === '/penpal.min.js') return [JS, readFileSync(PENPAL, 'utf8')]
    if (path === '/sdk.js') return [JS, readFileSync(join(outDir, 'sdk.js'), 'utf8')]
    if (path === '/' || path === '/slow-init/' || path === '/painted/') return [HTML, modalPage()]
    if (path === '/moved/') return [REDIRECT, `${host}/impostor/`]
    return undefined
  })
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => hostServer?.close(resolve))
  await new Promise((resolve) => modalServer?.close(resolve))
})

afterEach(async () => {
  await page?.context().close()
})

interface StartOptions {
  query?: string
  modalUrl?: string
  config?: unknown
  viewport?: { width: number; height: number }
  /** An OAuth flow this tab saved as it left (what the host SDK keeps for the return). */
  savedFlow?: unknown
  /** The page's clock, paused before the SDK starts: timeouts are run through, not waited for. */
  clock?: boolean
}

/**
 * Opens the host page in a fresh context (`page`), until `createLatch` is there. With `clock`,
 * the page's clock is paused before the SDK starts (the handshake needs no timer), at a time
 * surely still ahead, so timeouts are run through with `page.clock.runFor`.
 */
async function openHostPage(options: Pick<StartOptions, 'query' | 'viewport' | 'clock'>) {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1000, height: 800 },
  })
  page = await context.newPage()
  page.setDefaultTimeout(10_000)
  const clockStart = Date.UTC(2026, 0, 1)
  if (options.clock) await page.clock.install({ time: clockStart })
  await page.goto(`${host}/${options.query ?? ''}`)
  await page.waitForFunction(() => typeof window.createLatch === 'function')
  if (options.clock) await page.clock.pauseAt(clockStart + 3_600_000)
}

/** Opens the host page, starts the SDK, waits for `ready`; answers the modal's frame. */
async function start(options: StartOptions = {}): Promise<Frame> {
  await openHostPage(options)
  if (options.savedFlow) {
    await page.evaluate(
      ([key, value]) => sessionStorage.setItem(key as string, value as string),
      [PENDING_FLOW_KEY, JSON.stringify(options.savedFlow)],
    )
  }
  await page.evaluate(
    ({ appId, modalUrl, config }) => {
      window.latch = window.createLatch({
        appId,
        modalUrl,
        ...(config ? { config } : {}),
        onSuccess: (user, isNewUser) => window.successes.push([user, isNewUser]),
      })
      return window.latch.ready
    },
    { appId: APP_ID, modalUrl: options.modalUrl ?? modal, config: options.config as never },
  )
  return modalFrame()
}

/** The outcome `begin` recorded, read without waiting (the page's clock may be paused). */
const outcomeNow = () => page.evaluate(() => (window as unknown as { outcome?: unknown }).outcome)

function modalFrame(): Frame {
  const frame = page.frames().find((f) => f.url().startsWith(modal))
  if (!frame) throw new Error('no modal frame')
  return frame
}

const calls = (frame: Frame) =>
  frame.evaluate(
    () => (window as unknown as { calls: { method: string; args: unknown[] }[] }).calls,
  )

/** Starts a host call in the page; `outcome()` later tells how it settled. */
async function begin(expression: string): Promise<() => Promise<unknown>> {
  await page.evaluate((expr) => {
    const w = window as unknown as { outcome?: unknown }
    w.outcome = undefined
    // biome-ignore lint/security/noGlobalEval: the test's own expression, run in the test page
    window.eval(expr).then(
      (value: unknown) => {
        w.outcome = { value }
      },
      (e: InstanceType<typeof LatchError>) => {
        w.outcome = {
          code: e.code,
          message: e.message,
          isLatchError: e instanceof window.LatchError,
        }
      },
    )
  }, expression)
  return async () => {
    await page.waitForFunction(
      () => (window as unknown as { outcome?: unknown }).outcome !== undefined,
      undefined,
      { timeout: API_TIMEOUT_MS + 5_000 },
    )
    return page.evaluate(() => (window as unknown as { outcome?: unknown }).outcome)
  }
}

const dialogOpen = () =>
  page.evaluate(
    () => document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open,
  )

declare global {
  interface Window {
    createLatch: typeof import('./create-latch.ts').createLatch
    LatchError: typeof LatchError
    successes: unknown[]
    received: unknown[]
  }
}

describe('link', () => {
  test('behavior: handshake with the exact modal origin, then init with config, OAuth return parameters and the flow this tab saved', async () => {
    const savedFlow = { state: 's1', provider: 'google', intent: 'login', secret: 'x'.repeat(43) }
    const frame = await start({
      query: '?keep=1&latch_oauth_code=c1&latch_oauth_state=s1&latch_oauth_provider=google',
      config: { appearance: { theme: 'dark' } },
      savedFlow,
    })
    expect(await calls(frame)).toEqual([
      {
        method: 'init',
        args: [
          { appearance: { theme: 'dark' } },
          { code: 'c1', state: 's1', provider: 'google' },
          savedFlow,
        ],
      },
    ])
    expect(new URL(page.url()).search).toBe('?keep=1')
    expect(await page.evaluate(() => window.latch?.getAccessToken())).toBe('token-1')
  })

  test('error: OAuth return parameters this tab saved no flow for are removed, not handed to the modal', async () => {
    const frame = await start({
      query: '?keep=1&latch_oauth_code=stolen&latch_oauth_state=theirs&latch_oauth_provider=google',
      savedFlow: { state: 'mine', provider: 'google', intent: 'login', secret: 'x'.repeat(43) },
    })
    const [init] = await calls(frame)
    expect(init?.method).toBe('init')
    expect(init?.args[1] ?? null).toBeNull()
    expect(init?.args).toHaveLength(2)
    expect(new URL(page.url()).search).toBe('?keep=1')
  })

  test('behavior: login opens when the modal asks, focus moves in and back, the result and onSuccess arrive', async () => {
    const frame = await start()
    await page.focus('#opener')
    const outcome = await begin('window.latch.login()')
    await page.waitForFunction(
      () =>
        document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === true,
    )
    expect(
      await page.evaluate(() => {
        const iframe = document.querySelector('[data-testid="latch-frame"]')
        return {
          focused: document.activeElement === iframe,
          hidden: iframe?.getAttribute('aria-hidden'),
          tabIndex: (iframe as HTMLIFrameElement).tabIndex,
        }
      }),
    ).toEqual({ focused: true, hidden: 'false', tabIndex: 0 })
    await frame.evaluate(() =>
      (window as unknown as { host: { resize(h: number): Promise<void> } }).host.resize(480),
    )
    const box = await page.locator('[data-testid="latch-frame"]').boundingBox()
    expect(box?.width).toBe(360)
    expect(box?.height).toBe(480)
    expect(Math.round((box?.x ?? 0) + (box?.width ?? 0) / 2)).toBe(500)

    const result = { user: { id: 'user-1' }, isNewUser: true }
    await frame.evaluate(async (r) => {
      const w = window as unknown as {
        host: { emit(e: string, p: unknown): Promise<void>; setOpen(o: boolean): Promise<void> }
        settle(v: unknown): void
      }
      await w.host.emit('login', r)
      w.settle(r)
      await w.host.setOpen(false)
    }, result)
    expect(await outcome()).toEqual({ value: result })
    expect(await page.evaluate(() => window.successes)).toEqual([[{ id: 'user-1' }, true]])
    expect(await dialogOpen()).toBe(false)
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('opener')
    expect(await page.locator('[data-testid="latch-frame"]').getAttribute('aria-hidden')).toBe(
      'true',
    )
  })

  /**
   * Opens the host page, counts the SDK's 'message' listeners (the frame's first message, then
   * the connection's) with their times, and starts `login()` on the stand-in at /painted/, whose
   * first message is a painted landing. Resolves at the first animation frame after the dialog
   * opened, with its name and the frame's height; `destroyOnShow` destroys the client as it opens.
   */
  async function loginOnPaintedLanding(destroyOnShow: boolean) {
    await openHostPage({})
    return page.evaluate(
      ({ appId, modalUrl, destroyOnShow }) =>
        new Promise<{ frameAt: number; label: string | null; height: string }>((resolve) => {
          const now = () => performance.now()
          const listening: number[] = []
          ;(window as unknown as { listening: number[] }).listening = listening
          const listen = window.addEventListener
          window.addEventListener = function (this: Window, ...args: Parameters<typeof listen>) {
            if (args[0] === 'message') listening.push(now())
            return listen.apply(this, args)
          } as typeof listen
          const seen = new MutationObserver(() => {
            const dialog = document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')
            if (!dialog?.open) return
            seen.disconnect()
            const iframe = dialog.querySelector('iframe')
            const shown = {
              label: dialog.getAttribute('aria-label'),
              height: iframe?.style.height ?? '',
            }
            if (destroyOnShow) window.latch?.destroy()
            requestAnimationFrame(() => resolve({ frameAt: now(), ...shown }))
          })
          seen.observe(document.body, { subtree: true, childList: true, attributes: true })
          window.latch = window.createLatch({ appId, modalUrl })
          void window.latch.login().catch(() => {})
        }),
      { appId: APP_ID, modalUrl: `${modal}/painted/`, destroyOnShow },
    )
  }

  const listening = () =>
    page.evaluate(() => (window as unknown as { listening: number[] }).listening)

  test('behavior: a painted landing is shown at once, named and at its height; the handshake waits for the browser’s next frame after the show', async () => {
    const shown = await loginOnPaintedLanding(false)
    expect(shown).toMatchObject({ label: 'Log in to Acme', height: '300px' })
    await page.evaluate(() => window.latch?.ready)
    const times = await listening()
    expect(times).toHaveLength(2)
    // The connection's setup (its first calls compile) would hold the shown landing's paint.
    expect(times[1]).toBeGreaterThan(shown.frameAt)
  })

  test('error: a client destroyed while its shown landing waits for the frame never connects', async () => {
    await loginOnPaintedLanding(true)
    const ready = await page.evaluate(() =>
      window.latch?.ready.then(
        () => 'resolved',
        (e: { code?: string }) => e.code,
      ),
    )
    expect(ready).toBe('modal_unreachable')
    // Past the SDK's wait for the frame (50 ms at most): only the wait for the frame's first
    // message ever listened.
    await page.waitForTimeout(200)
    expect(await listening()).toHaveLength(1)
  })

  test('behavior: Escape on the host page closes the dialog; the pending login rejects with login_exited', async () => {
    const frame = await start()
    const outcome = await begin('window.latch.login()')
    await page.waitForFunction(
      () =>
        document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === true,
    )
    // Focus leaves the frame, so the key reaches the host page (inside the frame the modal relays it).
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
    await page.keyboard.press('Escape')
    expect(await outcome()).toEqual({
      code: 'login_exited',
      message: ERRORS.login_exited.message,
      isLatchError: true,
    })
    expect(await dialogOpen()).toBe(false)
    expect((await calls(frame)).map((c) => c.method)).toEqual(['init', 'login', 'close'])
  })

  test('behavior: a backdrop click closes too; link rejects with link_exited', async () => {
    const frame = await start()
    const outcome = await begin("window.latch.link('email')")
    await page.waitForFunction(
      () =>
        document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === true,
    )
    await page.mouse.click(10, 10)
    expect(await outcome()).toMatchObject({
      code: 'link_exited',
      message: ERRORS.link_exited.message,
    })
    expect(await dialogOpen()).toBe(false)
    expect((await calls(frame)).find((c) => c.method === 'link')?.args).toEqual(['email'])
  })

  test('behavior: Escape inside the frame is relayed by the modal (setOpen(false))', async () => {
    await start()
    const outcome = await begin('window.latch.login()')
    await page.waitForFunction(
      () =>
        document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === true,
    )
    await page.keyboard.press('Escape')
    expect(await outcome()).toMatchObject({ code: 'login_exited' })
    expect(await dialogOpen()).toBe(false)
  })

  test('behavior: a reload of the frame ends its flows, shakes hands again and re-runs init', async () => {
    const frame = await start({
      query: '?latch_oauth_code=c&latch_oauth_state=s&latch_oauth_provider=apple',
    })
    const outcome = await begin('window.latch.login()')
    await page.waitForFunction(
      () =>
        document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === true,
    )
    await frame.evaluate(() => location.reload())
    expect(await outcome()).toMatchObject({ code: 'login_exited', isLatchError: true })
    expect(await dialogOpen()).toBe(false)
    await expect
      .poll(async () => calls(modalFrame()).catch(() => []), { timeout: 10_000 })
      .toEqual([{ method: 'init', args: [{}, null] }])
    expect(await page.evaluate(() => window.latch?.getUser())).toEqual({ id: 'user-1' })
  })

  test('error: a configuration the modal refuses rejects ready and every call with its error', async () => {
    const context = await browser.newContext()
    page = await context.newPage()
    await page.goto(`${host}/`)
    await page.waitForFunction(() => typeof window.createLatch === 'function')
    const outcome = await page.evaluate(
      async ({ appId, modalUrl }) => {
        window.latch = window.createLatch({ appId, modalUrl, config: { loginMethods: [] } })
        const code = (e: InstanceType<typeof LatchError>) => [e.code, e.message]
        return [await window.latch.ready.catch(code), await window.latch.login().catch(code)]
      },
      { appId: APP_ID, modalUrl: modal },
    )
    const expected = ['no_login_method', ERRORS.no_login_method.message]
    expect(outcome).toEqual([expected, expected])
  })

  test('behavior: login goes out right behind init, before its reply; ready waits for the reply', async () => {
    const context = await browser.newContext()
    page = await context.newPage()
    page.setDefaultTimeout(10_000)
    await page.goto(`${host}/`)
    await page.waitForFunction(() => typeof window.createLatch === 'function')
    await page.evaluate(
      ({ appId, modalUrl }) => {
        window.latch = window.createLatch({ appId, modalUrl })
        window.successes = []
        window.latch.ready.then(() => window.successes.push('ready'))
        window.latch.login().catch(() => {})
      },
      { appId: APP_ID, modalUrl: `${modal}/slow-init/` },
    )
    const arrived = () =>
      modalFrame()
        .evaluate(() => (window as unknown as { arrived: string[] }).arrived)
        .catch(() => [])
    // init has not even run yet: the login that arrived was sent without waiting for its reply,
    // and the stand-in holds it.
    await expect.poll(arrived, { timeout: 10_000 }).toEqual(['init', 'login'])
    expect(await calls(modalFrame())).toEqual([])
    expect(await page.evaluate(() => window.successes)).toEqual([])
    await modalFrame().evaluate(() => (window as unknown as { releaseInit(): void }).releaseInit())
    await page.waitForFunction(() => window.successes.includes('ready'))
    await expect
      .poll(async () => (await calls(modalFrame())).map((c) => c.method))
      .toEqual(['init', 'login'])
    await expect.poll(dialogOpen).toBe(true)
  })

  test('behavior: a quick call the modal never answers times out, not before', async () => {
    const frame = await start({ clock: true })
    await frame.evaluate(() => {
      ;(window as unknown as { hang: boolean }).hang = true
    })
    await begin('window.latch.getAccessToken()')
    await page.clock.runFor(API_TIMEOUT_MS - 100)
    expect(await outcomeNow()).toBeUndefined()
    await page.clock.runFor(200)
    await vi.waitFor(async () => expect(await outcomeNow()).toBeDefined(), { timeout: 10_000 })
    expect(await outcomeNow()).toEqual({
      code: 'client_request_timeout',
      message: ERRORS.client_request_timeout.message,
      isLatchError: true,
    })
  })

  test('behavior: errors from the modal arrive as LatchErrors with their code and message', async () => {
    await start()
    const outcome = await begin("window.latch.unlink({ type: 'email', address: 'a@example.com' })")
    expect(await outcome()).toEqual({
      code: 'last_account_unlink_forbidden',
      message: ERRORS.last_account_unlink_forbidden.message,
      isLatchError: true,
    })
  })

  test('behavior: events reach on() handlers until off(); warnings are printed', async () => {
    const frame = await start()
    const warnings: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'warning') warnings.push(message.text())
    })
    await page.evaluate(() => {
      const handler = (payload: unknown) => window.received.push(payload)
      window.latch?.on('user', handler)
      window.latch?.on('modal_open', handler)
      ;(window as unknown as { handler: typeof handler }).handler = handler
    })
    const emit = (event: string, payload: unknown) =>
      frame.evaluate(
        ([e, p]) =>
          (
            window as unknown as { host: { emit(e: unknown, p: unknown): Promise<void> } }
          ).host.emit(e, p),
        [event, payload] as const,
      )
    await emit('user', { id: 'user-1' })
    await emit('modal_open', { screen: 'LANDING' })
    await emit('warning', 'Email and SMS login cannot both be enabled')
    await page.evaluate(() => {
      window.latch?.off('user', (window as unknown as { handler: (p: unknown) => void }).handler)
    })
    await emit('user', null)
    expect(await page.evaluate(() => window.received)).toEqual([
      { id: 'user-1' },
      { screen: 'LANDING' },
    ])
    expect(warnings.some((w) => w.includes('Email and SMS login cannot both be enabled'))).toBe(
      true,
    )
  })

  test('behavior: navigate only while a flow is pending, and only to http(s)', async () => {
    const frame = await start()
    const navigate = (url: string) =>
      frame.evaluate(
        (u) =>
          (window as unknown as { host: { navigate(u: string): Promise<void> } }).host
            .navigate(u)
            .then(
              () => 'ok',
              (e: { code?: string }) => e.code,
            ),
        url,
      )
    expect(await navigate(`${host}/next`)).toBe('invalid_data')
    await begin('window.latch.login()')
    expect(await navigate('javascript:alert(1)')).toBe('invalid_data')
    expect(await navigate('http://example.com/authorize')).toBe('invalid_data')
    // The page leaves, so the frame's own answer may never arrive: only the URL is awaited.
    const left = page.waitForURL(`${host}/next?from=oauth`)
    navigate(`${host}/next?from=oauth`).catch(() => undefined)
    await left
  })

  test('behavior: the modal opened by itself (an OAuth return, no flow pending) may navigate; pageUrl answers the page URL', async () => {
    const frame = await start({ query: '?tab=2' })
    expect(
      await frame.evaluate(() =>
        (window as unknown as { host: { pageUrl(): Promise<string> } }).host.pageUrl(),
      ),
    ).toBe(`${host}/?tab=2`)
    await frame.evaluate(() =>
      (window as unknown as { host: { setOpen(o: boolean): Promise<void> } }).host.setOpen(true),
    )
    const left = page.waitForURL(`${host}/next?from=retry`)
    frame
      .evaluate(
        (u) =>
          (window as unknown as { host: { navigate(u: string): Promise<void> } }).host.navigate(u),
        `${host}/next?from=retry`,
      )
      .catch(() => undefined)
    await left
  })

  test('behavior: destroy rejects the pending login and removes the dialog', async () => {
    await start()
    const outcome = await begin('window.latch.login()')
    await page.evaluate(() => window.latch?.destroy())
    expect(await outcome()).toMatchObject({ code: 'modal_unreachable' })
    expect(await page.locator('[data-testid="latch-dialog"]').count()).toBe(0)
  })
})

describe('wallet', () => {
  const wallet = {
    type: 'wallet',
    address: '0x52908400098527886E0F7030069857D2E4169EE7',
    chainType: 'ethereum',
    chainId: 'eip155:1',
    walletClient: 'latch',
    walletClientType: 'latch',
    connectorType: 'embedded',
    recoveryMethod: 'user-passcode',
  }
  const openDialog = () =>
    page.waitForFunction(
      () =>
        document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === true,
    )

  test('behavior: createWallet resolves with the account the modal settles it with; the user event carries user.wallet', async () => {
    const frame = await start()
    await page.evaluate(() => window.latch?.on('user', (u) => window.received.push(u)))
    const outcome = await begin('window.latch.createWallet()')
    await openDialog()
    const user = { id: 'user-1', linkedAccounts: [wallet], wallet }
    await frame.evaluate(
      async ([u, w]) => {
        const m = window as unknown as {
          host: { emit(e: string, p: unknown): Promise<void>; setOpen(o: boolean): Promise<void> }
          settle(v: unknown): void
        }
        await m.host.emit('user', u)
        m.settle(w)
        await m.host.setOpen(false)
      },
      [user, wallet] as const,
    )
    expect(await outcome()).toEqual({ value: wallet })
    expect(await page.evaluate(() => window.received)).toEqual([user])
    expect((await calls(frame)).map((c) => c.method)).toEqual(['init', 'createWallet'])
    expect(await dialogOpen()).toBe(false)
  })

  test('behavior: Escape ends createWallet with create_exited, and closes the dialog', async () => {
    await start()
    const outcome = await begin('window.latch.createWallet()')
    await openDialog()
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
    await page.keyboard.press('Escape')
    expect(await outcome()).toEqual({
      code: 'create_exited',
      message: 'User exited before creating a wallet',
      isLatchError: true,
    })
    expect(await dialogOpen()).toBe(false)
  })

  test('behavior: recoverWallet outlives the quick-call timeout (a flow), then resolves with the account', async () => {
    const frame = await start({ clock: true })
    const outcome = await begin('window.latch.recoverWallet()')
    await openDialog()
    // Longer than any quick call may take: a flow waits for the person at the passcode boxes.
    await page.clock.runFor(API_TIMEOUT_MS + 500)
    expect(await outcomeNow()).toBeUndefined()
    await frame.evaluate(
      (w) => (window as unknown as { settle(v: unknown): void }).settle(w),
      wallet,
    )
    expect(await outcome()).toEqual({ value: wallet })
  })

  test('behavior: a reload of the frame ends a pending recoverWallet with recovery_exited; a backdrop click ends createWallet', async () => {
    const frame = await start()
    const recovering = await begin('window.latch.recoverWallet()')
    await openDialog()
    await frame.evaluate(() => location.reload())
    expect(await recovering()).toEqual({
      code: 'recovery_exited',
      message: 'User exited before their wallet could be recovered',
      isLatchError: true,
    })
    expect(await dialogOpen()).toBe(false)
    await expect
      .poll(async () => calls(modalFrame()).catch(() => []), { timeout: 10_000 })
      .toEqual([{ method: 'init', args: [{}, null] }])
    const creating = await begin('window.latch.createWallet()')
    await openDialog()
    await page.mouse.click(10, 10)
    expect(await creating()).toMatchObject({ code: 'create_exited' })
  })
})

describe('origin', () => {
  test('error: a frame that ends up on another origin never connects; ready rejects at the connect timeout, not before', async () => {
    // The page's clock, paused, so the 20 s timeout is run through rather than waited for.
    await openHostPage({ clock: true })
    await page.evaluate(
      ({ appId, modalUrl }) => {
        const w = window as unknown as { outcome?: string }
        window.latch = window.createLatch({ appId, modalUrl })
        window.latch.ready.then(
          () => {
            w.outcome = 'connected'
          },
          (e: InstanceType<typeof LatchError>) => {
            w.outcome = `${e.code}: ${e.details}`
          },
        )
      },
      { appId: APP_ID, modalUrl: `${modal}/moved/` },
    )
    // The impostor loads and shakes hands from its side: only the origin check stops it.
    const impostor = await vi.waitFor(
      () => {
        const found = page.frames().find((f) => f.url().startsWith(`${host}/impostor/`))
        if (!found) throw new Error('the impostor frame has not loaded yet')
        return found
      },
      { timeout: 10_000 },
    )
    await impostor.waitForFunction(() => document.readyState === 'complete')
    const outcome = () => page.evaluate(() => (window as unknown as { outcome?: string }).outcome)
    await page.clock.runFor(MODAL_CONNECT_TIMEOUT_MS - 100)
    expect(await outcome()).toBeUndefined()
    await page.clock.runFor(200)
    await vi.waitFor(async () => expect(await outcome()).toBeDefined())
    expect(await outcome()).toBe(
      `modal_unreachable: Connection timed out after ${MODAL_CONNECT_TIMEOUT_MS}ms`,
    )
    expect(await impostor.evaluate(() => 'host' in window)).toBe(false)
  })
})

describe('rendering', () => {
  test('behavior: inline in the parent element, its height following the modal', async () => {
    const frame = await start({ config: { render: { inParentNodeId: 'inline' } } })
    expect(await page.locator('#inline [data-testid="latch-frame"]').isVisible()).toBe(false)
    expect(await page.locator('[data-testid="latch-dialog"]').count()).toBe(0)
    await frame.evaluate(async () => {
      const host = (
        window as unknown as {
          host: { setOpen(o: boolean): Promise<void>; resize(h: number): Promise<void> }
        }
      ).host
      await host.setOpen(true)
      await host.resize(333)
    })
    const box = await page.locator('#inline [data-testid="latch-frame"]').boundingBox()
    expect(box?.height).toBe(333)
  })

  test('behavior: below 440px the dialog is full width at the bottom', async () => {
    const frame = await start({ viewport: { width: 400, height: 700 } })
    await frame.evaluate(async () => {
      const host = (
        window as unknown as {
          host: { setOpen(o: boolean): Promise<void>; resize(h: number): Promise<void> }
        }
      ).host
      await host.setOpen(true)
      await host.resize(500)
    })
    const box = await page.locator('[data-testid="latch-frame"]').boundingBox()
    expect(box).toEqual({ x: 0, y: 200, width: 400, height: 500 })
  })

  test('behavior: the one-line script creates window.latch at the script’s origin; [data-latch-login] opens sign-in', async () => {
    const context = await browser.newContext()
    page = await context.newPage()
    page.setDefaultTimeout(10_000)
    await page.goto(`${host}/script.html`)
    await page.waitForFunction(() => window.latch !== undefined)
    await page.evaluate(() => window.latch?.ready)
    expect(await page.locator('[data-testid="latch-frame"]').getAttribute('src')).toBe(
      `${modal}/?app=${APP_ID}&ssr=${encodeURIComponent('[null,null,null]')}#app=${APP_ID}`,
    )
    await page.click('#sign-in')
    await page.waitForFunction(
      () =>
        document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === true,
    )
    expect((await calls(modalFrame())).map((c) => c.method)).toEqual(['init', 'login'])
  })
})
