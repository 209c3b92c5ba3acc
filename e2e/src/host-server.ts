/**
 * The demo host page server: serves e2e/demo with the modal origin and the app id injected.
 * Used by the e2e specs and by `npm start`.
 *
 * Routes: `/` the page with the one-line script tag (dialog rendering); `/inline` the same page
 * rendering the modal inside a parent element through the ESM entry; `/foreign` a page that is
 * not the host and posts penpal-shaped messages to the frames it can reach; `/plain` an
 * integrator's page with the one-line script and a sign-in button, nothing of the demo's (the
 * cold-open bench's plain host page); `/demo.js`.
 * `?appId=` overrides the app id for one page load (the e2e specs use one app per scenario);
 * `?lang=` (a shipped locale) and `?code=sms` are the page's settings form: the modal's language
 * and phone instead of e-mail codes.
 */
import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { APP_ID_LENGTH, type HostAppConfig, isAppId, LOGIN_METHODS } from '@latch/shared'
import { LOCALES, type Locale } from '@latch/shared/i18n'

const DEMO_DIR = fileURLToPath(new URL('../demo/', import.meta.url))

/** The id of the element the inline variant renders the modal into. */
export const INLINE_PARENT_ID = 'latch-inline'

export interface HostServerOptions {
  /** Origin of the modal server, which also serves /sdk.js and /latch.js. */
  modalUrl: string
  /** The app id the page uses unless `?appId=` says otherwise. */
  appId: string
  port?: number
  /** Interface to bind; 127.0.0.1 by default (the page is then opened as http://localhost). */
  host?: string
  /** The name the page is opened by: 'localhost' by default, so it is cross-site to 127.0.0.1. */
  publicHost?: string
  /** A Content-Security-Policy the pages are served with (what `latch csp` prints). */
  csp?: string
  /**
   * What `npm start` tells its page (demo.js reads it): the chain "Send" uses, or null when the
   * demo runs without one. The e2e specs pass nothing and the page says nothing of a chain.
   */
  demo?: DemoPageConfig
}

export interface DemoPageConfig {
  chain: {
    id: number
    name: string
    funding: string
    recipient: string
    /**
     * The demo token whose approve and transfer the demo app's sponsor pays for (the page's
     * batch button), or null when the demo has no sponsor.
     */
    token?: string | null
  } | null
}

export interface HostServer {
  /** The page's URL, on `publicHost` (http://localhost:PORT). */
  url: string
  port: number
  close(): Promise<void>
}

function escapeAttribute(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('"', '&quot;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
}

/** The one line a host page adds, or the ESM variant rendering into a parent element. */
export function latchScript(
  modalUrl: string,
  appId: string,
  inline: boolean,
  config: HostAppConfig = { render: { inDialog: false, inParentNodeId: INLINE_PARENT_ID } },
  /** The one-line script's `data-config` (the demo settings); the inline config gets them merged. */
  settings?: HostAppConfig,
): string {
  const origin = new URL(modalUrl).origin
  if (!inline) {
    const data = settings ? ` data-config="${escapeAttribute(JSON.stringify(settings))}"` : ''
    return `<script src="${escapeAttribute(`${origin}/sdk.js`)}" data-app-id="${escapeAttribute(appId)}"${data}></script>`
  }
  if (settings) config = { ...config, ...settings }
  return [
    '<script type="module">',
    `import { createLatch } from ${JSON.stringify(`${origin}/latch.js`)}`,
    `window.latch = createLatch(${JSON.stringify({ appId, modalUrl: origin, config })})`,
    '</script>',
  ].join('\n    ')
}

/** Each shipped language by its own name, for the demo page's language switch. */
const LANGUAGE_NAMES: Record<Locale, string> = {
  en: 'English',
  es: 'Español',
  fr: 'Français',
  de: 'Deutsch',
  'pt-BR': 'Português (Brasil)',
  ja: '日本語',
  'zh-CN': '简体中文',
  ko: '한국어',
  tr: 'Türkçe',
  ar: 'العربية',
}

/**
 * The demo page's settings, from its query (`?lang=de&code=sms`): the modal's language, and
 * whether its code section is e-mail or phone. The modal shows one code section only, e-mail
 * when the app has both, so phone sign-in asks for every method but e-mail.
 */
export interface DemoSettings {
  lang: Locale | null
  code: 'email' | 'sms'
}

export function demoSettings(query: URLSearchParams): DemoSettings {
  const lang = query.get('lang')
  return {
    lang: LOCALES.find((l) => l === lang) ?? null,
    code: query.get('code') === 'sms' ? 'sms' : 'email',
  }
}

/** The host configuration the settings ask for, or nothing when they are the defaults. */
export function settingsConfig(settings: DemoSettings): HostAppConfig | undefined {
  const config: HostAppConfig = {
    ...(settings.lang ? { locale: settings.lang } : {}),
    ...(settings.code === 'sms'
      ? { loginMethods: LOGIN_METHODS.filter((m) => m !== 'email') }
      : {}),
  }
  return Object.keys(config).length > 0 ? config : undefined
}

/** The settings form: a GET to the same page, so a change applies on the next load. */
function settingsForm(settings: DemoSettings, appId: string | null): string {
  const option = (value: string, label: string, selected: boolean, lang?: string) =>
    `<option value="${escapeAttribute(value)}"${lang ? ` lang="${escapeAttribute(lang)}"` : ''}${selected ? ' selected' : ''}>${label}</option>`
  return [
    '<form class="actions" method="get" data-testid="demo-settings">',
    appId ? `<input type="hidden" name="appId" value="${escapeAttribute(appId)}" />` : '',
    '<label for="demo-lang">Language</label>',
    '<select id="demo-lang" name="lang" data-testid="demo-lang">',
    option('', 'Browser’s', settings.lang === null),
    ...LOCALES.map((l) => option(l, LANGUAGE_NAMES[l], settings.lang === l, l)),
    '</select>',
    '<label for="demo-code">Sign in by code</label>',
    '<select id="demo-code" name="code" data-testid="demo-code">',
    option('email', 'E-mail', settings.code === 'email'),
    option('sms', 'Phone (SMS)', settings.code === 'sms'),
    '</select>',
    '<button type="submit" data-testid="demo-apply">Apply</button>',
    '</form>',
  ].join('')
}

/** `render: { inDialog: false }` naming no parent element: the ESM entry, a dialog still. */
const NO_PARENT: HostAppConfig = { render: { inDialog: false } }

async function renderPage(
  options: HostServerOptions,
  appId: string,
  inline: boolean,
  query: URLSearchParams,
  config?: HostAppConfig,
) {
  const template = await readFile(`${DEMO_DIR}index.html`, 'utf8')
  const settings = demoSettings(query)
  return template
    .replace('%DEMO_SETTINGS%', settingsForm(settings, query.get('appId')))
    .replace(
      '%MODE_TEXT%',
      inline && !config ? 'The modal renders inline, below.' : 'The modal opens as a dialog.',
    )
    .replace(
      '%INLINE_PARENT%',
      inline && !config ? `<div id="${INLINE_PARENT_ID}" data-testid="inline-parent"></div>` : '',
    )
    .replace(
      '%LATCH_SCRIPT%',
      latchScript(options.modalUrl, appId, inline, config, settingsConfig(settings)),
    )
    .replace('%DEMO_CONFIG%', demoConfig(options.demo))
}

/** The demo's settings as data, never run: a JSON block, `<` escaped so it cannot end it. */
function demoConfig(demo: DemoPageConfig | undefined): string {
  if (!demo) return ''
  const json = JSON.stringify(demo).replaceAll('<', '\\u003c')
  return `<script type="application/json" id="demo-config">${json}</script>`
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, {
    'content-type': `${type}; charset=utf-8`,
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
    ...headers,
  })
  res.end(body)
}

async function handle(options: HostServerOptions, req: IncomingMessage, res: ServerResponse) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'text/plain', 'Method not allowed')
    return
  }
  const url = new URL(req.url ?? '/', 'http://host.invalid')
  const requested = url.searchParams.get('appId')
  if (requested !== null && !isAppId(requested)) {
    send(res, 400, 'text/plain', `appId must be ${APP_ID_LENGTH} letters and digits`)
    return
  }
  const appId = requested ?? options.appId
  const page: Record<string, string> = options.csp ? { 'content-security-policy': options.csp } : {}
  switch (url.pathname) {
    case '/':
    case '/index.html':
      send(res, 200, 'text/html', await renderPage(options, appId, false, url.searchParams), page)
      return
    case '/inline':
      send(res, 200, 'text/html', await renderPage(options, appId, true, url.searchParams), page)
      return
    case '/no-parent':
      send(
        res,
        200,
        'text/html',
        await renderPage(options, appId, true, url.searchParams, NO_PARENT),
        page,
      )
      return
    case '/foreign':
      send(res, 200, 'text/html', await readFile(`${DEMO_DIR}foreign.html`, 'utf8'))
      return
    case '/plain': {
      const template = await readFile(`${DEMO_DIR}plain.html`, 'utf8')
      const script = latchScript(options.modalUrl, appId, false)
      send(
        res,
        200,
        'text/html',
        template.replace('%LATCH_SCRIPT%', () => script),
        page,
      )
      return
    }
    case '/demo.js':
      send(res, 200, 'text/javascript', await readFile(`${DEMO_DIR}demo.js`, 'utf8'))
      return
    case '/favicon.ico':
      res.writeHead(204).end()
      return
    default:
      send(res, 404, 'text/plain', 'Not found')
  }
}

/**
 * Starts the demo host page server.
 * @example const host = await startHostServer({ modalUrl: modal.url, appId: app.id })
 */
export async function startHostServer(options: HostServerOptions): Promise<HostServer> {
  const server = createServer((req, res) => {
    handle(options, req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', String(error))
      else res.destroy()
    })
  })
  const host = options.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${options.publicHost ?? 'localhost'}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
