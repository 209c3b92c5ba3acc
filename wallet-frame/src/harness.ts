/**
 * The wallet frame in Chromium for tests and `npm run bench -- wallet`: the built frame served
 * by the real API (in process, listening on 127.0.0.1), inside a stand-in modal page on
 * 'localhost' (another site) that speaks the real protocol (penpal 7, serialized LatchErrors),
 * optionally inside a host page on a third origin. Not part of the frame's bundle.
 */
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { type ServerType, serve } from '@hono/node-server'
import { launchChromium } from '@latch/e2e'
import type { Browser, Frame, Page } from 'playwright-core'
import { startTestServer, type TestServer } from '../../server/src/test-support.ts'
import { buildWalletFrame } from '../build.ts'

const PENPAL = readFileSync(
  fileURLToPath(new URL('../../node_modules/penpal/dist/penpal.min.js', import.meta.url)),
  'utf8',
)

/** What the stand-in modal's `call` answers: the frame's value, or its serialized error. */
export interface Answer {
  ok?: { address?: string; persistent?: boolean }
  error?: { message: string; code: string }
}

/** The stand-in modal: embeds the frame, records every message it receives, relays calls. */
function modalPage(frameUrl: string, frameOrigin: string, timeoutMs: number): string {
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

export interface WalletHarness {
  browser: Browser
  latch: TestServer
  apiOrigin: string
  /** The stand-in modal's origin (LATCH_MODAL_ORIGIN). */
  modalOrigin: string
  /** The host page's origin: the modal's server named 127.0.0.1; the app registers it. */
  hostOrigin: string
  appId: string
  modalUrl(base: string, timeoutMs: number, app?: string): string
  /** Loads the stand-in modal (with the frame) as the top-level page. */
  open(page: Page, base?: string, timeoutMs?: number): Promise<void>
  call(target: Page | Frame, name: string, arg?: unknown): Promise<Answer>
  close(): Promise<void>
}

export async function startWalletHarness(): Promise<WalletHarness> {
  const parent: Server = createServer((req, res) => {
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
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        modalPage(
          url.searchParams.get('frame') ?? '',
          url.searchParams.get('origin') ?? '',
          Number(url.searchParams.get('timeout') ?? 15_000),
        ),
      )
  })
  await new Promise<void>((resolve) => parent.listen(0, '127.0.0.1', resolve))
  const port = (parent.address() as AddressInfo).port
  // The modal stand-in on 'localhost', the API on '127.0.0.1': two sites, as in production.
  const modalOrigin = `http://localhost:${port}`
  const hostOrigin = `http://127.0.0.1:${port}`
  const [, started, browser] = await Promise.all([
    buildWalletFrame(),
    startTestServer('pglite', 'memory://', { LATCH_MODAL_ORIGIN: modalOrigin }),
    launchChromium(),
  ])
  const api: ServerType = serve({ fetch: started.server.app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => api.once('listening', () => resolve()))
  const apiOrigin = `http://127.0.0.1:${(api.address() as AddressInfo).port}`
  const appId = (await started.server.newApp({ allowedOrigins: [hostOrigin] })).id

  const modalUrl = (base: string, timeoutMs: number, app = appId) => {
    const frame = `${apiOrigin}/apps/${app}/embedded-wallets`
    return `${base}/?frame=${encodeURIComponent(frame)}&origin=${encodeURIComponent(apiOrigin)}&timeout=${timeoutMs}`
  }
  return {
    browser,
    latch: started.server,
    apiOrigin,
    modalOrigin,
    hostOrigin,
    appId,
    modalUrl,
    async open(page, base = modalOrigin, timeoutMs = 15_000) {
      await page.goto(modalUrl(base, timeoutMs))
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
      await browser.close()
      await new Promise((resolve) => api.close(resolve))
      await new Promise((resolve) => parent.close(resolve))
      await started.close()
    },
  }
}
