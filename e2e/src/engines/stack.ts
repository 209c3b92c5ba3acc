/**
 * Latch's parts for the Firefox and WebKit lanes, on `example.com`-style names over HTTPS, as a
 * real deployment has them (WebKit refuses Secure cookies over plain http even on the loopback,
 * and treats `*.test` siblings as separate sites). Latch is on example.com; the demo host page
 * is served under two names, so one stack serves both layouts:
 *
 *   Latch:      modal https://auth.example.com:P, API https://api.example.com:P (the wallet
 *               frame's origin), connector https://connect.example.com:P
 *   cross-site: host https://www.example.org:P
 *   same-site:  host https://www.example.com:P (Latch on the host's own subdomains)
 *
 * The browsers cannot be told to resolve names (Chromium's --host-resolver-rules has no
 * equivalent, and /etc/hosts is the machine's, not a test's), so they are pointed at a small
 * forward proxy (`proxyPort`) that opens every CONNECT for one of these names to the one TLS
 * router on 127.0.0.1:P, which passes each name's requests to its plain-http server (Host header
 * unchanged). Any other name is refused, so a browser's own background traffic goes nowhere.
 * The certificate is the throwaway one of same-site.ts: the browsers run with TLS errors
 * ignored (Firefox: WebDriver's acceptInsecureCerts; MiniBrowser: --ignore-tls-errors), which
 * keeps the pages secure contexts.
 */
import { rm } from 'node:fs/promises'
import { createServer as createHttpServer, request as httpRequest } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { type AddressInfo, connect, type Server, type Socket } from 'node:net'
import { type AppInput, startServer } from '@latch/server'
import { startSmtpCatcher } from '@latch/server/testing'
import type { ServerAppConfig } from '@latch/shared'
import { startModalServer } from '../../../modal-app/server.ts'
import { buildFrontendOnce, FRONTEND_DIRS } from '../build.ts'
import { freshDatabase } from '../database.ts'
import { freePort, unique, WAIT_MS, withTimeout } from '../harness.ts'
import { startHostServer } from '../host-server.ts'
import { testCertificate } from '../same-site.ts'

export type Layout = 'cross-site' | 'same-site'

/** The names of the parts; the host page's depends on the layout. */
export const NAMES = {
  modal: 'auth.example.com',
  api: 'api.example.com',
  connect: 'connect.example.com',
  host: { 'cross-site': 'www.example.org', 'same-site': 'www.example.com' },
} as const

export interface EngineStack {
  /** The demo host page's origin in the layout. */
  hostUrl(layout: Layout): string
  modalUrl: string
  apiUrl: string
  /** The forward proxy the browser must use (http://127.0.0.1:port). */
  proxyPort: number
  api: Awaited<ReturnType<typeof startServer>>
  smtp: Awaited<ReturnType<typeof startSmtpCatcher>>
  /** Creates an app allowed on both host page origins, e-mail login unless overridden. */
  createApp(input?: Partial<AppInput>): Promise<ServerAppConfig>
  /** The six-digit code mailed to `email`. */
  emailCode(email: string): Promise<string>
  /** The last code to `email` a minute older: a returning sign-in gets a new one at once. */
  ageCodes(email: string): Promise<void>
  /**
   * Holds the modal's entry script (`/assets/index-*.js`) until the returned function runs: the
   * modal page without its JavaScript (the server-rendered landing before hydration).
   */
  holdModalScript(): () => void
  close(): Promise<void>
}

/**
 * Starts the parts; everything stops with `close()`. `proxyPort` (a free port, from `freePort`)
 * lets a browser be launched with the proxy's address while the stack starts.
 */
export async function startEngineStack(options: { proxyPort?: number } = {}): Promise<EngineStack> {
  const stops: (() => Promise<unknown>)[] = []
  const close = async () => {
    for (const stop of stops.reverse()) {
      await withTimeout(stop(), 10_000, 'stopping an engine stack part').catch((e: unknown) =>
        console.error(e),
      )
    }
  }
  try {
    const routes = new Map<string, number>()
    let held: Promise<void> | null = null
    const router = createHttpsServer(testCertificate(), async (req, res) => {
      const name = (req.headers.host ?? '').replace(/:\d+$/, '')
      if (held && name === NAMES.modal && /^\/assets\/index-[^/]+\.js$/.test(req.url ?? '')) {
        await held
      }
      const target = routes.get(name)
      if (target === undefined) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end('no route')
        return
      }
      const upstream = httpRequest(
        {
          host: '127.0.0.1',
          port: target,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        },
      )
      upstream.on('error', (e) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' })
        res.end(String(e))
      })
      req.pipe(upstream)
    })
    const sockets = new Set<Socket>()
    const proxy = createHttpServer((_req, res) => {
      // Plain http is not part of these layouts: only CONNECT to the router.
      res.writeHead(403, { 'content-type': 'text/plain' }).end('https only')
    })
    const listen = (server: Server, at: number) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(at, '127.0.0.1', () => resolve())
      })
    await Promise.all([listen(router, 0), listen(proxy, options.proxyPort ?? 0)])
    stops.push(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy()
          proxy.close(() => resolve())
          proxy.closeAllConnections()
        }),
      () =>
        new Promise<void>((resolve) => {
          router.close(() => resolve())
          router.closeAllConnections()
        }),
    )
    const port = (router.address() as AddressInfo).port
    const known = new Set<string>([
      NAMES.modal,
      NAMES.api,
      NAMES.connect,
      ...Object.values(NAMES.host),
    ])
    proxy.on('connect', (req, client: Socket, head: Buffer) => {
      const [name, at] = (req.url ?? '').split(':')
      sockets.add(client)
      client.on('close', () => sockets.delete(client))
      client.on('error', () => client.destroy())
      if (!name || !known.has(name) || Number(at) !== port) {
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n')
        return
      }
      const upstream = connect(port, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
        if (head.length > 0) upstream.write(head)
        upstream.pipe(client)
        client.pipe(upstream)
      })
      sockets.add(upstream)
      upstream.on('close', () => sockets.delete(upstream))
      upstream.on('error', () => client.destroy())
    })
    const origin = (name: string) => `https://${name}:${port}`
    const hostUrl = (layout: Layout) => origin(NAMES.host[layout])
    const modalUrl = origin(NAMES.modal)
    const apiUrl = origin(NAMES.api)

    // The harness's database (database.ts): in a test run a copy of the run's migrated template,
    // on its PostgreSQL, or an in-memory PGlite loaded from its migrated dump (a folder of its
    // own would be made from scratch, migrations and all, per file).
    const [dirs, database, smtp] = await Promise.all([
      withTimeout(buildFrontendOnce(), 170_000, 'building the frontend'),
      freshDatabase(),
      withTimeout(startSmtpCatcher(), WAIT_MS, 'starting the SMTP catcher'),
    ])
    stops.push(
      async () => {
        if (database.dataDir) await rm(database.dataDir, { recursive: true, force: true })
      },
      () => smtp.close(),
    )
    const api = await withTimeout(
      startServer({
        host: '127.0.0.1',
        port: 0,
        log: () => {},
        ...(database.pgliteData ? { pgliteData: database.pgliteData } : {}),
        env: {
          NODE_ENV: 'test',
          LATCH_MODAL_ORIGIN: modalUrl,
          ...(database.dataDir ? { LATCH_DATA_DIR: database.dataDir } : {}),
          ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
          LATCH_WALLET_FRAME_DIR: FRONTEND_DIRS.walletFrame,
          SMTP_URL: smtp.url,
          LATCH_MAIL_FROM: 'Latch e2e <no-reply@latch.test>',
          LATCH_PUBLIC_URL: apiUrl,
        },
      }),
      60_000,
      'starting the API server',
    )
    stops.push(() => api.close())
    const apiDirectUrl = new URL(api.url).origin
    routes.set(NAMES.api, Number(new URL(apiDirectUrl).port))
    const modalPort = await freePort()
    const connectorPort = await freePort()
    const modal = await withTimeout(
      startModalServer({
        host: '127.0.0.1',
        port: modalPort,
        apiUrl,
        lookupApiUrl: apiDirectUrl,
        modalOrigin: modalUrl,
        connectorPort,
        connectorOrigin: origin(NAMES.connect),
        distDir: dirs.modal,
        sdkDir: dirs.sdk,
      }),
      WAIT_MS,
      'starting the modal server',
    )
    stops.push(() => modal.close())
    routes.set(NAMES.modal, modalPort)
    routes.set(NAMES.connect, connectorPort)
    let defaultAppId = ''
    const host = await startHostServer({
      modalUrl,
      get appId() {
        return defaultAppId
      },
    })
    stops.push(() => host.close())
    for (const name of Object.values(NAMES.host)) routes.set(name, host.port)
    const createApp = (input: Partial<AppInput> = {}) =>
      api.admin.createApp({
        name: unique('engine-app'),
        allowedOrigins: [hostUrl('cross-site'), hostUrl('same-site')],
        loginMethods: ['email'],
        ...input,
      })
    defaultAppId = (await createApp({ name: 'Latch engines' })).id
    return {
      hostUrl,
      modalUrl,
      apiUrl,
      proxyPort: (proxy.address() as AddressInfo).port,
      api,
      smtp,
      createApp,
      emailCode: (email) =>
        withTimeout(
          smtp.waitForCode(email, { timeoutMs: WAIT_MS }),
          WAIT_MS + 1000,
          `the code mail to ${email}`,
        ),
      holdModalScript() {
        let release = () => {}
        held = new Promise<void>((resolve) => {
          release = resolve
        })
        return () => {
          held = null
          release()
        }
      },
      async ageCodes(email) {
        await api.deps.db
          .updateTable('verification_codes')
          .set({ created_at: new Date(Date.now() - 61_000) })
          .where('identifier', '=', email)
          .execute()
      },
      close,
    }
  } catch (e) {
    await close()
    throw e
  }
}
