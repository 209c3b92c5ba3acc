/**
 * The wallet frame in Chromium for tests and `npm run bench -- wallet`: the built frame served
 * by the real API (in process, listening on 127.0.0.1), inside a stand-in modal page on
 * 'localhost' (another site) that speaks the real protocol (penpal 7, serialized LatchErrors),
 * optionally inside a host page on a third origin. Not part of the frame's bundle.
 */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { type ServerType, serve } from '@hono/node-server'
import {
  buildFrontendOnce,
  closeAllContexts,
  SAME_SITE_CHROMIUM_ARGS,
  testCertificate,
  workerChromium,
} from '@latch/e2e'
import {
  API_PREFIX,
  APP_ID_HEADER,
  type AuthResponse,
  CLIENT_HEADER,
  isLatchError,
  LatchError,
  toApiErrorBody,
  walletFramePath,
} from '@latch/shared'
import { Hono } from 'hono'
import type { Browser, Frame, Page } from 'playwright-core'
import { statusOf } from '../../../server/src/api.ts'
import type { HonoEnv } from '../../../server/src/http.ts'
import {
  freshIp,
  startTestServer,
  type TestServer,
} from '../../../server/src/testing/test-server.ts'
import { walletFrameRoutes } from '../../../server/src/wallets/frame.ts'

const PENPAL = readFileSync(
  fileURLToPath(new URL('../../../node_modules/penpal/dist/penpal.min.js', import.meta.url)),
  'utf8',
)

/** What the stand-in modal's `call` answers: the frame's value, or its serialized error. */
export interface Answer {
  ok?: { address?: string; persistent?: boolean }
  error?: { message: string; code: string }
}

/** The stand-in modal: embeds the frame, records every message it receives, relays calls. */
function modalPage(
  frameUrl: string,
  frameOrigin: string,
  timeoutMs: number,
  exportUrl = '',
): string {
  // With an export page: it is framed too, and `exportCall` calls it as the modal's screen does.
  const exporter = exportUrl
    ? `<iframe id="export" title="Private key" src="${exportUrl}" allow="clipboard-write"></iframe>
<script>
window.revealed = []
window.exportEscapes = 0
window.exporter = Penpal.connect({
  messenger: new Penpal.WindowMessenger({
    remoteWindow: document.getElementById('export').contentWindow,
    allowedOrigins: ['${frameOrigin}'],
  }),
  // As the modal's screen: the page reports the visitor's reveal here (the address only).
  // Escape pressed on the page (it has the focus) is counted.
  methods: {
    'latch:export:revealed': (p) => { window.revealed.push(JSON.stringify(p)) },
    'latch:export:escape': () => { window.exportEscapes += 1 },
  },
  timeout: ${timeoutMs},
}).promise
window.exportCall = async (arg) => {
  try { const x = await window.exporter; return { ok: await x['latch:export:show'](arg) } }
  catch (e) { return { error: e && e.message !== undefined ? { message: e.message, code: e.code } : String(e) } }
}
</script>`
    : ''
  return `<!doctype html><html lang="en"><head><title>Modal</title></head><body>
<script src="/penpal.min.js"></script>
<iframe id="wallet" src="${frameUrl}" style="display:none" allow="publickey-credentials-get; publickey-credentials-create"></iframe>
${exporter}
<script>
window.received = []
window.batchSending = []
// What the modal answers when the frame asks whether the batch's request is still open:
// true, false (closed first), 'throw' (the modal cannot be asked), 'hang' (it never answers) or
// 'hold' (true once the test calls window.releaseSending()).
window.batchSendingAnswer = true
window.escapes = 0
addEventListener('message', (e) => window.received.push(JSON.stringify(e.data)))
window.wallet = Penpal.connect({
  messenger: new Penpal.WindowMessenger({
    remoteWindow: document.getElementById('wallet').contentWindow,
    allowedOrigins: ['${frameOrigin}'],
  }),
  // As the modal: the batch review asks, on the visitor's click, whether the request is open.
  methods: {
    'latch:wallet:batch-sending': (...args) => {
      window.batchSending.push(JSON.stringify(args))
      if (window.batchSendingAnswer === 'throw') throw new Error('no modal here')
      if (window.batchSendingAnswer === 'hang') return new Promise(() => {})
      if (window.batchSendingAnswer === 'hold') {
        return new Promise((resolve) => { window.releaseSending = () => resolve(true) })
      }
      return window.batchSendingAnswer
    },
    // Escape pressed on the frame's approval or review (it has the focus) is counted.
    'latch:wallet:escape': () => { window.escapes += 1 },
  },
  timeout: ${timeoutMs},
}).promise
window.call = async (name, arg) => {
  try { const w = await window.wallet; return { ok: await w[name](arg) } }
  catch (e) { return { error: e && e.message !== undefined ? { message: e.message, code: e.code } : String(e) } }
}
</script></body></html>`
}

export interface WalletHarness {
  browser: Browser
  latch: TestServer
  apiOrigin: string
  /** The stand-in modal's origin (LATCH_MODAL_ORIGIN). */
  modalOrigin: string
  /** The host page's origin: the modal's server named 127.0.0.1; the app registers it. */
  hostOrigin: string
  appId: string
  /** The run's build of the frame (e2e/src/build.ts). */
  distDir: string
  modalUrl(base: string, timeoutMs: number, app?: string, exportQuery?: string): string
  /** Loads the stand-in modal (with the frame) as the top-level page. */
  open(page: Page, base?: string, timeoutMs?: number): Promise<void>
  call(target: Page | Frame, name: string, arg?: unknown): Promise<Answer>
  /**
   * Signs in by e-mail code as the modal does: the authenticate answer reaches `target` (a page
   * or frame of the modal's origin) through its credentialed fetch, so the session's wallet
   * credential lands in that browser's cookie jar, where the wallet frame's fetches find it.
   */
  signIn(target: Page | Frame, email: string): Promise<AuthResponse>
  close(): Promise<void>
}

/**
 * `sameSite`: the recommended deployment, host page, modal and API on subdomains of one site
 * (`www.`, `modal.` and `api.example.test`, which Chromium resolves to 127.0.0.1): the frame
 * is then same-site with the page and the browser lets it keep its device share.
 */
export async function startWalletHarness(
  options: { sameSite?: boolean } = {},
): Promise<WalletHarness> {
  // Subdomains need HTTPS: the frame's WebCrypto exists only in a secure context, and only
  // localhost and 127.0.0.1 are one over plain http. A throwaway certificate for the site.
  const tls = options.sameSite ? testCertificate() : undefined
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/penpal.min.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(PENPAL)
      return
    }
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname === '/host') {
      // The host page: it embeds the modal stand-in, which embeds the wallet frame, and records
      // every message it receives.
      const modal = (url.searchParams.get('modal') ?? '').replace(/"/g, '')
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<script>window.received = []; addEventListener("message", (e) => window.received.push(JSON.stringify(e.data)))</script>' +
            `<iframe src="${modal}" allow="clipboard-write" title="Modal"></iframe>`,
        )
      return
    }
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        modalPage(
          url.searchParams.get('frame') ?? '',
          url.searchParams.get('origin') ?? '',
          Number(url.searchParams.get('timeout') ?? 15_000),
          url.searchParams.get('export') ?? '',
        ),
      )
  }
  const parent: Server = tls ? createHttpsServer(tls, handler) : createServer(handler)
  await new Promise<void>((resolve) => parent.listen(0, '127.0.0.1', resolve))
  const port = (parent.address() as AddressInfo).port
  // By default the modal stand-in on 'localhost' and the API on '127.0.0.1': two sites, so the
  // browser refuses the frame storage. sameSite: three subdomains of example.test over HTTPS.
  const modalOrigin = tls ? `https://modal.example.test:${port}` : `http://localhost:${port}`
  const hostOrigin = tls ? `https://www.example.test:${port}` : `http://127.0.0.1:${port}`
  // The run's frontend build (made once, never swapped under a running server: build.ts), and
  // the worker's Chromium for these flags (each harness closes the contexts it leaves).
  const [{ walletFrame: distDir }, started, browser] = await Promise.all([
    buildFrontendOnce(),
    startTestServer('pglite', 'memory://', { LATCH_MODAL_ORIGIN: modalOrigin }),
    workerChromium(options.sameSite ? SAME_SITE_CHROMIUM_ARGS : []),
  ])
  // The API as createApi builds it, with the frame's routes over this harness's build.
  const frameRoutes = new Hono<HonoEnv>()
  frameRoutes.onError((e, c) => {
    const err = isLatchError(e) ? e : LatchError.of('internal_error')
    return c.json(toApiErrorBody(err), statusOf(err))
  })
  frameRoutes.route('/', walletFrameRoutes(started.server.deps, { distDir }))
  const isFramePath = (path: string) =>
    /^\/apps\/[^/]+\/embedded-wallets(\/export)?$/.test(path) ||
    path.startsWith('/embedded-wallets/')
  // The harness stands where a proxy would: each sign-in it makes in the browser comes from a
  // client address of its own, so many sign-ins (the bench's) stay within the per-address limit.
  const signInPath = `${API_PREFIX}/passwordless/authenticate`
  const api: ServerType = serve({
    fetch: (req) => {
      const path = new URL(req.url).pathname
      if (isFramePath(path)) return frameRoutes.fetch(req)
      if (path !== signInPath) return started.server.api.fetch(req)
      const headers = new Headers(req.headers)
      headers.set('x-forwarded-for', freshIp())
      return started.server.api.fetch(new Request(req, { headers }))
    },
    port: 0,
    hostname: '127.0.0.1',
    ...(tls ? { createServer: createHttpsServer, serverOptions: tls } : {}),
  })
  await new Promise<void>((resolve) => api.once('listening', () => resolve()))
  const apiPort = (api.address() as AddressInfo).port
  const apiOrigin = tls ? `https://api.example.test:${apiPort}` : `http://127.0.0.1:${apiPort}`
  const appId = (await started.server.newApp({ allowedOrigins: [hostOrigin] })).id

  const modalUrl = (base: string, timeoutMs: number, app = appId, exportQuery?: string) => {
    const frame = `${apiOrigin}${walletFramePath(app)}`
    const exporter =
      exportQuery === undefined
        ? ''
        : `&export=${encodeURIComponent(`${frame}/export?${exportQuery}`)}`
    return `${base}/?frame=${encodeURIComponent(frame)}&origin=${encodeURIComponent(apiOrigin)}&timeout=${timeoutMs}${exporter}`
  }
  return {
    browser,
    latch: started.server,
    apiOrigin,
    modalOrigin,
    hostOrigin,
    appId,
    distDir,
    modalUrl,
    async open(page, base = modalOrigin, timeoutMs = 15_000) {
      await page.goto(modalUrl(base, timeoutMs))
    },
    async signIn(target, email) {
      const init = await started.server.request('/passwordless/init', {
        appId,
        ip: freshIp(),
        body: { email },
      })
      if (init.status !== 200) throw new Error(`init answered ${init.status}`)
      const code = await started.server.smtp.waitForCode(email, { timeoutMs: 10_000 })
      return target.evaluate(
        async ([url, headers, body]) => {
          const res = await fetch(url, {
            method: 'POST',
            credentials: 'include',
            headers: { 'content-type': 'application/json', ...headers },
            body,
            signal: AbortSignal.timeout(10_000),
          })
          if (!res.ok) throw new Error(`authenticate answered ${res.status}: ${await res.text()}`)
          return (await res.json()) as AuthResponse
        },
        [
          `${apiOrigin}${API_PREFIX}/passwordless/authenticate`,
          { [APP_ID_HEADER]: appId, [CLIENT_HEADER]: 'latch-test-modal' },
          JSON.stringify({ email, code }),
        ] as const,
      )
    },
    call: (target, name, arg) =>
      target.evaluate(
        ([n, a]) =>
          (window as unknown as { call(n: string, a: unknown): Promise<Answer> }).call(
            n as string,
            a,
          ),
        [name, arg] as const,
      ),
    async close() {
      await closeAllContexts(browser)
      await new Promise((resolve) => api.close(resolve))
      await new Promise((resolve) => parent.close(resolve))
      await started.close()
    },
  }
}
