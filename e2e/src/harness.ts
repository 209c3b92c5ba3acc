/**
 * The end-to-end harness: the API server on a fresh database (database.ts) with a real
 * SMTP server and a Twilio double, the modal server, the demo host page, and headless Chromium,
 * on three origins so the frames are cross-site as in production:
 *   API   http://127.0.0.1:A
 *   modal http://127.0.0.1:M
 *   host  http://localhost:H
 * or, with `sameSite`, the recommended deployment: the same three on subdomains of one site
 * over HTTPS behind one TLS proxy (same-site.ts):
 *   API   https://api.example.test:P
 *   modal https://auth.example.test:P
 *   host  https://www.example.test:P
 * The modal server's connector origin (Coinbase Wallet's frame, its second listener) is
 * http://connect.localhost:C (Chromium resolves every *.localhost name to the loopback), or
 * https://connect.example.test:P same-site.
 * One harness per spec file, on the worker's Chromium (one per launch flags, launched by the
 * first harness that needs it and kept for the worker's later spec files); one browser
 * context per test.
 */
import { rm } from 'node:fs/promises'
import { createServer as createNetServer } from 'node:net'
import { type AppInput, startServer } from '@latch/server'
import { startSmtpCatcher, startTwilioDouble } from '@latch/server/testing'
import type { ServerAppConfig } from '@latch/shared'
import { HOST_ELEMENT_IDS } from '@latch/shared'
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type ConsoleMessage,
  chromium,
  type FrameLocator,
  type Page,
} from 'playwright-core'
import type { ModalRenderer } from '../../modal-app/renderer.ts'
import { startModalServer } from '../../modal-app/server.ts'
import { buildFrontendOnce, buildModalOnce, FRONTEND_DIRS } from './build.ts'
import { freshDatabase } from './database.ts'
import { type HostServer, startHostServer } from './host-server.ts'
import { SAME_SITE_CHROMIUM_ARGS, type SameSiteProxy, startSameSiteProxy } from './same-site.ts'

export const CHROMIUM_PATH = '/usr/bin/chromium'

/** The flags this machine needs (see the repository's README). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  // Chromium's own background work, none of which a spec looks at: the phishing classifier
  // that reads every page a renderer loads, and network error reports to Google.
  '--disable-client-side-phishing-detection',
  '--disable-domain-reliability',
]

/**
 * Parts of Chromium's own interface switched off. Headless Chromium still builds the address
 * bar's suggestion popup (a WebUI app, `chrome://omnibox-popup.top-chrome`) for every new window,
 * that is for every browser context a test opens: a renderer of its own that spends about half a
 * second of CPU loading it, on the 2 cores the pages under test need. Nothing here has an
 * address bar.
 */
export const CHROMIUM_UI_FEATURES_OFF = [
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
]

/**
 * Work Chromium does for a person's browser that a test browser would only pay for. The spare
 * renderer is a process started ahead of the next navigation for the profile last used: every
 * test's page opens in a fresh browser context, which cannot take the spare of another, so
 * each one was started and thrown away. Site isolation is untouched: each site of a page still gets a renderer of its own when
 * it is needed. The others are services that fetch or run models for a signed-in Chrome
 * (translation, optimization hints, autofill's server, certificate transparency's updater).
 */
export const CHROMIUM_BACKGROUND_FEATURES_OFF = [
  'SpareRendererForSitePerProcess',
  'Translate',
  'OptimizationGuideModelDownloading',
  'OptimizationHintsFetching',
  'OptimizationTargetPrediction',
  'AutofillServerCommunication',
  'CertificateTransparencyComponentUpdater',
]

/**
 * The features Playwright launches Chromium without, as the installed playwright-core lists them
 * (chromium-args.spec.ts reads them from a browser it launched and fails when they differ).
 * Chromium reads only the last `--disable-features`, so a launch that switches off more must
 * repeat these: among them third-party storage partitioning, which the wallet frame's storage
 * specs rely on being off (a cross-site frame then gets no storage, as by Chromium's policy).
 */
export const PLAYWRIGHT_FEATURES_OFF = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
]

/** The one `--disable-features` of a Playwright launch: Playwright's list and ours. */
export const PLAYWRIGHT_DISABLE_FEATURES_ARG = `--disable-features=${[
  ...PLAYWRIGHT_FEATURES_OFF,
  ...CHROMIUM_UI_FEATURES_OFF,
  ...CHROMIUM_BACKGROUND_FEATURES_OFF,
].join(',')}`

/** How long any single wait in a spec may take. */
export const WAIT_MS = 15_000

type Started<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>
export type ApiServer = Started<typeof startServer>
export type SmtpCatcher = Started<typeof startSmtpCatcher>
export type TwilioDouble = Started<typeof startTwilioDouble>
export type ModalServer = Started<typeof startModalServer>

export interface HarnessOptions {
  /** Extra server environment, e.g. LATCH_ACCESS_TOKEN_TTL. */
  serverEnv?: Record<string, string>
  /**
   * Host page, modal and API on subdomains of example.test over HTTPS (the recommended
   * deployment, where the wallet frame may keep its device share) instead of three sites.
   */
  sameSite?: boolean
  /** The WalletConnect relay the modal uses (the local relay of wc-relay.ts); read at start. */
  walletConnectRelayUrl?: string
  /** Coinbase Wallet's keys page the modal uses (the stand-in of coinbase-keys.ts); read at start. */
  coinbaseKeysUrl?: string
  /**
   * Serve the modal built with this renderer (modal-app/renderer.ts) instead of the run's
   * (React DOM unless LATCH_MODAL_RENDERER says otherwise); the other parts are the run's.
   */
  modalRenderer?: ModalRenderer
  /** The modal server renders the landing (modal-app/ssr.ts); its own default otherwise. */
  modalSsr?: boolean
}

export interface OpenOptions {
  /** The app the page uses; the harness's default app otherwise. */
  appId?: string
  /** '/' (dialog, one-line script), '/inline' (ESM entry, inline rendering), '/foreign'. */
  path?: string
  /** Open the page on another origin than the registered one (e.g. http://127.0.0.1:H). */
  origin?: string
  /** Reuse a context (a second tab of the same visitor); a fresh one otherwise. */
  context?: BrowserContext
  /** Wait for `latch.ready` before returning (default true). */
  waitReady?: boolean
  /** What the page's navigation waits for (default 'load', which waits for the frame's too). */
  waitUntil?: 'load' | 'domcontentloaded'
  /** Runs on a fresh context before its page opens, e.g. to add init scripts or bindings. */
  prepare?: (context: BrowserContext) => Promise<void>
  /** Options of a fresh context, e.g. `{ locale: 'ja-JP' }` (the browser's languages). */
  contextOptions?: BrowserContextOptions
  /**
   * A fresh context that outlives the test: `closeContexts()` (after each test) leaves it, and
   * it closes with the spec file's harness. For a visitor several tests of a file share.
   */
  kept?: boolean
}

export interface HostPage {
  context: BrowserContext
  page: Page
  /** The modal frame inside the host page. */
  modal: FrameLocator
  /** Console errors and page errors of the page and its frames, for diagnostics. */
  errors: string[]
  /** Every console message of the page and its frames. */
  console: string[]
}

export interface Harness {
  api: ApiServer
  /** The API as the browser reaches it. */
  apiUrl: string
  /** The API as this process reaches it (plain http on 127.0.0.1; apiUrl unless sameSite). */
  apiDirectUrl: string
  sameSite: boolean
  modal: ModalServer
  modalUrl: string
  /** The connector origin as the browser reaches it (Coinbase Wallet's frame). */
  connectorUrl: string
  host: HostServer
  hostUrl: string
  smtp: SmtpCatcher
  twilio: TwilioDouble
  browser: Browser
  /** The app every page uses unless told otherwise: e-mail login, the host page registered. */
  app: ServerAppConfig
  /** Creates an app allowed on the host page's origin, with e-mail login unless overridden. */
  createApp(input?: Partial<AppInput>): Promise<ServerAppConfig>
  /** Opens the demo host page in a fresh browser context. */
  open(options?: OpenOptions): Promise<HostPage>
  /**
   * Moves the expiry of every pending code for this e-mail or E.164 number into the past, in the
   * real database, as if its lifetime had run out.
   */
  expireCodes(identifier: string): Promise<void>
  /**
   * Ages the last code sent to this identifier by a minute, in the real database, as if the
   * visitor came back later: the server sends no new code within 60 s of the last one.
   */
  ageCodes(identifier: string): Promise<void>
  /** Closes every context opened since the last call (each test's afterEach). */
  closeContexts(): Promise<void>
  close(): Promise<void>
}

/** Anything that may hang gets this: a rejection after `ms` naming what was awaited. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * Below Linux's ephemeral range (32768-60999): a port picked here and bound a moment later
 * cannot meanwhile be handed to a server that listens on port 0 (the API is started on port 0
 * between the modal's port being picked and bound).
 */
const PICKED_PORTS = { from: 20_000, count: 10_000 }

/** A port nobody listens on right now, on 127.0.0.1, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PICKED_PORTS.from + Math.floor(Math.random() * PICKED_PORTS.count)
    const free = await new Promise<boolean>((resolve) => {
      const probe = createNetServer()
      probe.once('error', () => resolve(false))
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
    })
    if (free) return port
  }
  throw new Error(`no free port among ${PICKED_PORTS.count} from ${PICKED_PORTS.from} in 50 tries`)
}

/**
 * Launches headless Chromium through Playwright with the flags this machine needs, its
 * interface's address bar popup and background work off, and `extraArgs` (never another
 * `--disable-features`).
 */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return withTimeout(
    chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [...CHROMIUM_ARGS, PLAYWRIGHT_DISABLE_FEATURES_ARG, ...extraArgs],
      timeout: 30_000,
    }),
    40_000,
    'launching Chromium',
  )
}

/** The worker's Chromium for each set of extra flags (see workerChromium). */
const workerBrowsers = new Map<string, Promise<Browser>>()

/**
 * The Chromium this worker's harnesses share, launched with `extraArgs` on first use. A launch
 * costs a second or more of the two cores per spec file; what a spec file may see of another is
 * in its browser contexts, and the harness closes every context of the browser when its spec
 * file ends (`close`), as closing the browser did. A browser that went away (a crash) is
 * launched again for the next harness. Once a spec file's contexts are closed, the browsers
 * linger for `WORKER_BROWSER_LINGER_MS` for the worker's next file and then close: a browser's
 * pipe keeps the worker's event loop alive, so a worker whose last file has ended could not
 * exit when Vitest ends it, and would be killed after Vitest's teardown timeout instead.
 */
export function workerChromium(extraArgs: string[] = []): Promise<Browser> {
  clearTimeout(lingering)
  const key = extraArgs.join('\n')
  const known = workerBrowsers.get(key)
  if (known) return known
  const launched = launchChromium(extraArgs)
  workerBrowsers.set(key, launched)
  const forget = () => {
    if (workerBrowsers.get(key) === launched) workerBrowsers.delete(key)
  }
  launched.then((browser) => browser.on('disconnected', forget), forget)
  return launched
}

/** Closes the worker's browsers, for a process that ends without Vitest (a bench script). */
export async function closeWorkerBrowsers(): Promise<void> {
  const launched = [...workerBrowsers.values()]
  workerBrowsers.clear()
  await Promise.allSettled(launched.map(async (up) => (await up).close()))
}

/** How long the worker's browsers wait for its next spec file after one ended (see workerChromium). */
export const WORKER_BROWSER_LINGER_MS = 2_000
let lingering: NodeJS.Timeout | undefined

/**
 * Closes every context of a shared browser: what a spec file opened goes with it. The worker's
 * browsers then close unless another harness takes one within `WORKER_BROWSER_LINGER_MS`.
 */
export async function closeAllContexts(browser: Browser): Promise<void> {
  await Promise.all(
    browser.contexts().map((c) => withTimeout(c.close(), 10_000, 'closing a browser context')),
  )
  clearTimeout(lingering)
  lingering = setTimeout(() => void closeWorkerBrowsers(), WORKER_BROWSER_LINGER_MS)
}

let sequence = 0
/** A unique name for this run, e.g. for e-mail addresses and app names. */
export function unique(tag: string): string {
  sequence += 1
  return `${tag}-${process.pid}-${Date.now().toString(36)}-${sequence}`
}

/**
 * Starts everything on fresh state. Prefer `useHarness()` in a spec file.
 * @example const h = await startHarness(); try { ... } finally { await h.close() }
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const stops: (() => Promise<unknown>)[] = []
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      await withTimeout(stop(), 10_000, 'stopping a harness part').catch((error: unknown) => {
        console.error(error)
      })
    }
  }
  // Parts still starting when another fails: waited for, so their stops are registered.
  const starting: Promise<unknown>[] = []
  try {
    // Independent parts start side by side; each registers its stop as soon as it is up.
    const started = <T>(promise: Promise<T>, stop: (value: T) => Promise<unknown>) => {
      const up = promise.then((value) => {
        stops.push(() => stop(value))
        return value
      })
      starting.push(up)
      return up
    }
    const buildDone = withTimeout(
      buildFrontendOnce().then(async (dirs) => ({
        ...dirs,
        modal: options.modalRenderer ? await buildModalOnce(options.modalRenderer) : dirs.modal,
      })),
      170_000,
      'building the frontend',
    )
    const browserUp = started(
      workerChromium(options.sameSite ? SAME_SITE_CHROMIUM_ARGS : []),
      closeAllContexts,
    )
    // Awaited below; these only keep an early failure from going unhandled.
    buildDone.catch(() => {})
    browserUp.catch(() => {})
    const [database, smtp, twilio] = await Promise.all([
      started(freshDatabase(), async (d) => {
        if (d.dataDir) await rm(d.dataDir, { recursive: true, force: true })
      }),
      started(withTimeout(startSmtpCatcher(), WAIT_MS, 'starting the SMTP catcher'), (x) =>
        x.close(),
      ),
      started(withTimeout(startTwilioDouble(), WAIT_MS, 'starting the Twilio double'), (x) =>
        x.close(),
      ),
    ])

    // The server needs the modal origin (CORS) and the modal server the API URL: the modal's
    // port is picked first, then the API starts, then the modal server on that port. Same-site,
    // the proxy's port names all three origins and each server is routed once it listens.
    let proxy: SameSiteProxy | undefined
    if (options.sameSite) {
      const up = await withTimeout(startSameSiteProxy(), WAIT_MS, 'starting the TLS proxy')
      stops.push(() => up.close())
      proxy = up
    }
    // The build first: the modal's port, free when picked, is bound only once the API is up;
    // picked before a build of a minute, it could be taken meanwhile by a suite beside this one.
    const dirs = await buildDone
    const modalPort = await freePort()
    const modalUrl = proxy?.origin('auth') ?? `http://127.0.0.1:${modalPort}`
    const connectorPort = await freePort()
    const connectorUrl = proxy?.origin('connect') ?? `http://connect.localhost:${connectorPort}`
    const api = await withTimeout(
      startServer({
        host: '127.0.0.1',
        port: 0,
        log: () => {},
        ...(database.pgliteData ? { pgliteData: database.pgliteData } : {}),
        env: {
          // The frontend may be building meanwhile, and Vite sets NODE_ENV while it does.
          NODE_ENV: 'test',
          LATCH_MODAL_ORIGIN: modalUrl,
          ...(database.dataDir ? { LATCH_DATA_DIR: database.dataDir } : {}),
          ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
          // Read per request, so the server may start before the build has written it.
          LATCH_WALLET_FRAME_DIR: FRONTEND_DIRS.walletFrame,
          SMTP_URL: smtp.url,
          LATCH_MAIL_FROM: 'Latch e2e <no-reply@latch.test>',
          TWILIO_ACCOUNT_SID: twilio.accountSid,
          TWILIO_AUTH_TOKEN: twilio.authToken,
          TWILIO_FROM: twilio.from,
          TWILIO_API_URL: twilio.apiUrl,
          // Behind the proxy the API sees http: its public origin is the https one.
          ...(proxy ? { LATCH_PUBLIC_URL: proxy.origin('api') } : {}),
          ...options.serverEnv,
        },
      }),
      60_000,
      'starting the API server',
    )
    stops.push(() => api.close())
    const apiDirectUrl = new URL(api.url).origin
    proxy?.route('api', Number(new URL(apiDirectUrl).port))
    const apiUrl = proxy?.origin('api') ?? apiDirectUrl

    const modal = await withTimeout(
      startModalServer({
        host: '127.0.0.1',
        port: modalPort,
        apiUrl,
        lookupApiUrl: apiDirectUrl,
        modalOrigin: modalUrl,
        connectorPort,
        connectorOrigin: connectorUrl,
        distDir: dirs.modal,
        sdkDir: dirs.sdk,
        ...(options.walletConnectRelayUrl
          ? { walletConnectRelayUrl: options.walletConnectRelayUrl }
          : {}),
        ...(options.coinbaseKeysUrl ? { coinbaseKeysUrl: options.coinbaseKeysUrl } : {}),
        ...(options.modalSsr === undefined ? {} : { ssr: options.modalSsr }),
      }),
      WAIT_MS,
      'starting the modal server',
    )
    stops.push(() => modal.close())
    proxy?.route('auth', modalPort)
    proxy?.route('connect', connectorPort)

    // The host page needs an app id; the default app is created once the host port is known.
    let defaultAppId = ''
    const host = await startHostServer({
      modalUrl,
      get appId() {
        return defaultAppId
      },
    })
    stops.push(() => host.close())
    proxy?.route('www', host.port)
    const hostUrl = proxy?.origin('www') ?? host.url

    const createApp = async (input: Partial<AppInput> = {}) =>
      api.admin.createApp({
        name: unique('e2e-app'),
        allowedOrigins: [hostUrl],
        loginMethods: ['email'],
        ...input,
      })
    const app = await createApp({ name: 'Latch e2e' })
    defaultAppId = app.id

    const browser = await browserUp

    let contexts: BrowserContext[] = []
    const open = async (opts: OpenOptions = {}): Promise<HostPage> => {
      const context = opts.context ?? (await browser.newContext(opts.contextOptions))
      if (!opts.context) {
        if (!opts.kept) contexts.push(context)
        // A page clock in every frame, running with real time: specs run out the modal's fixed
        // pauses with it (flows.ts runOutPause) instead of waiting them out.
        await context.clock.install()
        await opts.prepare?.(context)
      }
      context.setDefaultTimeout(WAIT_MS)
      const page = await context.newPage()
      const errors: string[] = []
      const messages: string[] = []
      page.on('console', (msg: ConsoleMessage) => {
        const line = `[${msg.type()}] ${msg.text()} (${msg.location().url})`
        messages.push(line)
        if (msg.type() === 'error') errors.push(line)
      })
      page.on('pageerror', (error) => errors.push(`[pageerror] ${error.message}`))
      const base = opts.origin ?? hostUrl
      const url = new URL(opts.path ?? '/', base)
      if (opts.appId) url.searchParams.set('appId', opts.appId)
      await page.goto(url.toString(), { waitUntil: opts.waitUntil ?? 'load' })
      const hostPage: HostPage = {
        context,
        page,
        modal: page.frameLocator(`[data-testid="${HOST_ELEMENT_IDS.frame}"]`),
        errors,
        console: messages,
      }
      if (opts.waitReady !== false) await waitReady(hostPage)
      return hostPage
    }

    return {
      api,
      apiUrl,
      apiDirectUrl,
      sameSite: proxy !== undefined,
      modal,
      modalUrl,
      connectorUrl,
      host,
      hostUrl,
      smtp,
      twilio,
      browser,
      app,
      createApp,
      open,
      async ageCodes(identifier) {
        await api.deps.db
          .updateTable('verification_codes')
          .set({ created_at: new Date(Date.now() - 61_000) })
          .where('identifier', '=', identifier)
          .execute()
      },
      async expireCodes(identifier) {
        await api.deps.db
          .updateTable('verification_codes')
          .set({ expires_at: new Date(Date.now() - 1000) })
          .where('identifier', '=', identifier)
          .execute()
      },
      async closeContexts() {
        const closing = contexts
        contexts = []
        await Promise.all(
          closing.map((c) => withTimeout(c.close(), 10_000, 'closing a browser context')),
        )
      },
      close: stopAll,
    }
  } catch (error) {
    await Promise.allSettled(starting)
    await stopAll()
    throw error
  }
}

/** Waits for `window.latch.ready`; throws with the page's console errors when it fails. */
export async function waitReady(hostPage: HostPage): Promise<void> {
  const outcome = await hostPage.page.evaluate(async (ms) => {
    const started = Date.now()
    while (!window.latch && Date.now() - started < ms) await new Promise((r) => setTimeout(r, 20))
    const latch = window.latch
    if (!latch) return 'window.latch was never created'
    const timeout = new Promise<string>((r) => setTimeout(() => r(`not ready after ${ms} ms`), ms))
    return Promise.race([
      latch.ready.then(
        () => 'ok',
        (e: unknown) => `ready rejected: ${e instanceof Error ? e.message : String(e)}`,
      ),
      timeout,
    ])
  }, WAIT_MS)
  if (outcome !== 'ok') {
    throw new Error(`${outcome}\n${hostPage.errors.join('\n')}`)
  }
}
