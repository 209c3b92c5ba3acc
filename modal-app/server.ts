/**
 * The modal origin: serves modal-app/dist (index.html with the API URL injected) and the host
 * SDK's /sdk.js, /latch.js and /wallet-bridge.js from host-sdk/dist. node:http only.
 *
 * index.html answers `frame-ancestors` with the registered origins of the app named by the
 * `?app=` query (read from the API's public app configuration), so the browser itself refuses
 * to render the modal inside any other page; without a known app, no page may frame it.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { brotliCompress, gzip, constants as zlib } from 'node:zlib'
import { API_PREFIX, isAppId, validateOrigin } from '@latch/shared'
import {
  COINBASE_FRAME_PATH,
  COINBASE_FRAME_SANDBOX,
  COINBASE_KEYS_META,
  CONNECTOR_ORIGIN_META,
  MODAL_ORIGIN_META,
} from './src/connectors/coinbase-protocol.ts'
import { CONNECTOR_FRAME_PATH, CONNECTOR_FRAME_SANDBOX } from './src/connectors/frame-protocol.ts'
// The public relay's URL and the meta tag's name, as the page reads them (browser code with no
// runtime imports: nothing of the server reaches the bundle this way round).
import {
  DEFAULT_WALLETCONNECT_RELAY_URL,
  WALLETCONNECT_RELAY_META,
} from './src/connectors/walletconnect-config.ts'
// The id the page's early script reads the embedded configuration by.
import {
  CREDENTIAL_WINDOW_QUERY,
  EMBEDDED_CONFIG_ID,
  PASSKEY_WINDOW_QUERY,
} from './src/startup/early.ts'
// The refusal page's data block id and shape (the page's script reads them).
import { REFUSAL_DATA_ID, REFUSAL_SCRIPT, type RefusalData } from './src/startup/refusal-data.ts'

export const MODAL_DIST_DIR = fileURLToPath(new URL('./dist', import.meta.url))
export const HOST_SDK_DIST_DIR = fileURLToPath(new URL('../host-sdk/dist', import.meta.url))

export interface ModalServerOptions {
  port?: number
  host?: string
  /** Base URL of the Latch API, e.g. http://127.0.0.1:8787. */
  apiUrl: string
  log?: (line: string) => void
  /** Folders to serve from (tests). */
  distDir?: string
  sdkDir?: string
  /** How long an app's registered origins are reused before the API is asked again. */
  originsTtlMs?: number
  /** How long past that a known app's answer is still served while it is refreshed. */
  originsStaleMs?: number
  /**
   * Where this server itself reaches the API for app lookups, when not at `apiUrl` (a TLS proxy
   * in front of both, as in the e2e same-site harness). `apiUrl` otherwise.
   */
  lookupApiUrl?: string
  /**
   * Coinbase Wallet's keys page, the popup its SDK talks to (default: the SDK's own,
   * keys.coinbase.com). Given to Coinbase Wallet's connector frame as its
   * latch-coinbase-keys-url meta tag; LATCH_COINBASE_KEYS_URL in `latch serve`. Tests point it
   * at a local stand-in.
   */
  coinbaseKeysUrl?: string
  /**
   * The connector origin: a second listener on `connectorPort` (0 picks one; `connectorHost`,
   * else `host`) that serves only Coinbase Wallet's connector frame (coinbase.html and the
   * build's assets), so the SDK runs in an origin of its own, never the modal's. Unset: no
   * second listener, and the modal does not offer Coinbase Wallet.
   */
  connectorPort?: number
  connectorHost?: string
  /**
   * The connector origin as browsers reach it (e.g. https://connect.example.com behind a
   * proxy); the second listener's own URL by default. Must differ from the modal's origin.
   */
  connectorOrigin?: string
  /**
   * The modal's origin as browsers reach it (LATCH_MODAL_ORIGIN), the only parent the connector
   * frame talks to and may be framed by (with the app's registered origins above it); this
   * server's own URL by default.
   */
  modalOrigin?: string
  /**
   * The WalletConnect relay the modal's WalletConnect connector uses (ws: or wss:; default
   * WalletConnect's public relay). Given to the page as its latch-walletconnect-relay-url meta
   * tag and admitted in the CSP's connect-src; LATCH_WALLETCONNECT_RELAY_URL in
   * scripts/start.ts. Self-hosters running their own relay, and tests, point it elsewhere.
   */
  walletConnectRelayUrl?: string
  /**
   * Answers for the operator's probe paths (`/healthz`, `/readyz` from `latch serve`), asked
   * before any file; null passes the request on.
   */
  probe?: (pathname: string) => Promise<{ status: number; body: Record<string, unknown> } | null>
  /** Strict-Transport-Security's value on every answer (`latch serve` in production over https). */
  strictTransportSecurity?: string
}

/**
 * Registered origins are reused this long: the API's app cache's 2 s, so a change of an app's
 * origins or settings reaches the modal origin as soon as every API process (one background
 * request per app at most every 2 s, never in a page load's way: see ORIGINS_STALE_MS).
 */
export const ORIGINS_TTL_MS = 2_000
/**
 * A known app's answer past its time is still served this much longer while a fresh one is
 * fetched in the background: the first open of an app visited less often than every 2 s does
 * not wait for the API. An origin removed from an app may so frame it at most one more page
 * load, and not after this long.
 */
export const ORIGINS_STALE_MS = 5 * 60_000
/** Unknown app ids are remembered more briefly: a freshly created app works within seconds. */
const UNKNOWN_APP_TTL_MS = 5_000
/** Bounds the cache, so a stream of made-up app ids cannot grow it without limit. */
const ORIGINS_CACHE_MAX = 1000
const ORIGINS_FETCH_TIMEOUT_MS = 5_000

export interface ModalServer {
  url: string
  /** The connector origin's listener (none without `connectorPort`). */
  connector: { url: string; origin: string; server: Server } | null
  /** Stops at once: open connections are cut. */
  close(): Promise<void>
  /** The listener, for a graceful shutdown by its owner (`latch serve` drains it on SIGTERM). */
  server: Server
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
}

/** Types worth compressing: images and fonts are compressed already. */
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg)/
const MIN_COMPRESS_BYTES = 1024
const COMPRESSED_CACHE_MAX = 64
const brotli = promisify(brotliCompress)
const gzipAsync = promisify(gzip)

type Encoding = 'br' | 'gzip'

/** The encoding to answer with, from Accept-Encoding: brotli, else gzip, else none. */
export function pickEncoding(accept: string | undefined): Encoding | null {
  const offered = new Map<string, number>()
  for (const part of (accept ?? '').split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    offered.set(name.trim(), q ? Number(q.slice(2)) : 1)
  }
  for (const encoding of ['br', 'gzip'] as const) {
    const q = offered.get(encoding) ?? offered.get('*')
    if (q !== undefined && q > 0) return encoding
  }
  return null
}

const SUFFIX: Record<Encoding, string> = { br: '.br', gzip: '.gz' }

/**
 * Compressed copies of the static files: the build's own for the hashed assets (`x.js.br`
 * beside `x.js`, at the highest settings; a hashed name never pairs with another content),
 * else made once per content and encoding and kept for the next visitor.
 */
function createCompressor(): (file: Buffer, encoding: Encoding, built?: string) => Promise<Buffer> {
  const cache = new Map<string, Promise<Buffer>>()
  const made = (file: Buffer, encoding: Encoding): Promise<Buffer> => {
    const key = `${encoding}:${createHash('sha256').update(file).digest('base64')}`
    const hit = cache.get(key)
    if (hit) return hit
    if (cache.size >= COMPRESSED_CACHE_MAX) {
      const oldest = cache.keys().next().value
      if (oldest !== undefined) cache.delete(oldest)
    }
    const compressed =
      encoding === 'br'
        ? brotli(file, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9 } })
        : gzipAsync(file, { level: 9 })
    // A failure is not kept: the next request tries again.
    compressed.catch(() => cache.delete(key))
    cache.set(key, compressed)
    return compressed
  }
  return async (file, encoding, built) => {
    const prebuilt = built ? await readFile(built + SUFFIX[encoding]).catch(() => null) : null
    return prebuilt ?? made(file, encoding)
  }
}

function escapeAttr(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
}

/**
 * CSP sources for the page's inline scripts, by hash: the build inlines the one that starts the
 * app configuration request (modal-app/build.ts); no other inline script may run.
 */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (m) =>
      `'sha256-${createHash('sha256')
        .update(m[1] ?? '')
        .digest('base64')}'`,
  )
}

/**
 * The modal page's Content-Security-Policy: its own scripts and the inline ones of these
 * hashes, and only the app's registered origins as embedders (`'none'` when there are none).
 *
 * It sends nothing out but where the modal must: `connect-src` is the API and the WalletConnect
 * relay the server is given, besides this origin itself (Coinbase's SDK reads the page's own
 * headers with a HEAD; this origin serves static files and receives nothing it could keep),
 * and images come from this origin,
 * `data:` (wallet icons, QR codes), the app's configured logo's origin and the host page's
 * registered origins (a logo or a sender image the host names at run time, on its own origin:
 * the modal talks to that page anyway). No `https:` wildcard: a script on this origin (an XSS,
 * a compromised wallet SDK) cannot carry anything it reads to a server of its own by fetch,
 * WebSocket, beacon or image.
 */
export function modalCsp(
  apiOrigin: string,
  ancestors: readonly string[] = [],
  scriptHashes: readonly string[] = [],
  /** Other origins the page connects to (the WalletConnect relay's WebSocket). */
  connect: readonly string[] = [],
  /** Other origins the page frames (the connector origin). */
  frames: readonly string[] = [],
  /** Other origins the page's images may come from (the app's logo). */
  images: readonly string[] = [],
): string {
  const imageSources = [...new Set(["'self'", 'data:', ...images, ...ancestors])]
  return [
    "default-src 'self'",
    ['script-src', "'self'", ...scriptHashes].join(' '),
    // React sets style properties through the CSSOM; the theme tokens are inline custom properties.
    "style-src 'self' 'unsafe-inline'",
    ['img-src', ...imageSources].join(' '),
    ['connect-src', "'self'", apiOrigin, ...connect].join(' '),
    // The wallet frame (the API's origin), the connector frame (this origin, sandboxed into an
    // opaque one by its own CSP and the modal's iframe: connectorCsp) and Coinbase Wallet's
    // frame on the connector origin.
    ['frame-src', "'self'", apiOrigin, ...frames].join(' '),
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    // The browser refuses any other embedder; the modal also checks its parent itself.
    `frame-ancestors ${ancestors.length ? ancestors.join(' ') : "'none'"}`,
  ].join('; ')
}

/**
 * The connector frame's Content-Security-Policy (connectors.html: the wallet SDKs). A sandbox
 * without `allow-same-origin`, whoever frames it: an opaque origin, with no cookie, storage or
 * credential of the modal's. Its scripts come from this server; it connects only to the relay;
 * only the modal inside the app's registered origins may frame it.
 */
export function connectorCsp(ancestors: readonly string[], connect: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    ['connect-src', ...connect].join(' '),
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors 'self' ${ancestors.join(' ')}`.trim(),
    `sandbox ${CONNECTOR_FRAME_SANDBOX}`,
  ].join('; ')
}

/**
 * Coinbase Wallet's connector frame's Content-Security-Policy (coinbase.html, on the connector
 * origin): a sandbox that keeps this origin (the keys page answers it by postMessage) and lets
 * the popup out of the sandbox, nothing else; scripts and styles of this origin; fetches only to
 * itself (the SDK's HEAD of its own page); framed only by the modal's origin inside the app's
 * registered origins.
 */
export function coinbaseFrameCsp(modalOrigin: string, ancestors: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${[modalOrigin, ...ancestors].join(' ')}`,
    `sandbox ${COINBASE_FRAME_SANDBOX}`,
  ].join('; ')
}

/** The origin of the app's configured logo, as CSP writes it, when it has one. */
function logoOrigin(config: Record<string, unknown> | null): string[] {
  const origin = cspOrigin(config?.logoUrl)
  return origin ? [origin] : []
}

/** A ws(s) origin as CSP writes it, or null for anything else or a URL with credentials. */
export function wsOrigin(value: string): string | null {
  if (!URL.canParse(value)) return null
  const url = new URL(value)
  if ((url.protocol !== 'ws:' && url.protocol !== 'wss:') || url.username || url.password) {
    return null
  }
  return `${url.protocol}//${url.host}`
}

/** An http(s) URL's origin as CSP writes it, or null for anything else. */
function cspOrigin(value: unknown): string | null {
  if (typeof value !== 'string' || !URL.canParse(value)) return null
  const url = new URL(value)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
  return url.origin
}

/**
 * A registered host origin for frame-ancestors, or null: validateOrigin's, so a wildcard
 * (`https://*` would let every https page frame the modal), a path or a user name from an app
 * row written before registration refused them is dropped, not passed on.
 */
function registeredOrigin(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const checked = validateOrigin(value)
  return checked.ok ? checked.value : null
}

/** An app as the modal page needs it: its registered origins and its public configuration. */
export interface AppLookup {
  /** For frame-ancestors: http(s) origins only. */
  origins: string[]
  /**
   * The API's configuration, to embed in the page (null when unknown or unreachable): its
   * `allowedOrigins` are exactly `origins`, so the embedded copy never lets the modal talk to a
   * page the header would not let frame it.
   */
  config: Record<string, unknown> | null
}

const NO_APP: AppLookup = { origins: [], config: null }

/**
 * An app's registered origins and public configuration, from the API's public
 * `GET /apps/{id}`, cached briefly. Unknown ids answer none; a failed lookup answers none and
 * is not cached. A known app's answer past `ttlMs` is served for up to `staleMs` more while
 * one request refreshes it in the background (a lookup asked `fresh` waits for that refresh
 * instead); a refresh the API fails keeps the old answer
 * (within that window), one that says the app is gone replaces it.
 */
export function createAppLookup(
  apiBase: string,
  log: (line: string) => void,
  ttlMs = ORIGINS_TTL_MS,
  staleMs = ORIGINS_STALE_MS,
): (appId: string, fresh?: boolean) => Promise<AppLookup> {
  interface Entry {
    /** Served as it is until then. */
    until: number
    /** Served while a refresh runs until then (a known app only). */
    staleUntil: number
    app: Promise<AppLookup>
    /** The refresh under way: the new answer, or the old one when the API fails it. */
    refreshing: Promise<AppLookup> | null
  }
  const cache = new Map<string, Entry>()
  const fetchApp = async (appId: string): Promise<{ app: AppLookup; keep: number }> => {
    let res: Response
    try {
      res = await fetch(`${apiBase}${API_PREFIX}/apps/${appId}`, {
        signal: AbortSignal.timeout(ORIGINS_FETCH_TIMEOUT_MS),
      })
    } catch (e) {
      log(`modal server: the API did not answer for app ${appId}: ${String(e)}`)
      return { app: NO_APP, keep: 0 }
    }
    if (!res.ok) {
      await res.body?.cancel()
      // 4xx: no such app (cached briefly); anything else is the API's trouble (not cached).
      if (res.status < 500) return { app: NO_APP, keep: Math.min(ttlMs, UNKNOWN_APP_TTL_MS) }
      log(`modal server: the API answered ${res.status} for app ${appId}`)
      return { app: NO_APP, keep: 0 }
    }
    const body: unknown = await res.json().catch(() => null)
    const fields =
      body !== null && typeof body === 'object' && !Array.isArray(body)
        ? (body as Record<string, unknown>)
        : {}
    const list = Array.isArray(fields.allowedOrigins) ? fields.allowedOrigins : []
    const origins = [...new Set(list.map(registeredOrigin).filter((o): o is string => o !== null))]
    // Only the app asked for is embedded: an answer about another id is not this app's.
    const config = fields.id === appId ? { ...fields, allowedOrigins: origins } : null
    return { app: { origins, config }, keep: ttlMs }
  }
  /** How long an answer may be served stale: only a known app's, never "no such app". */
  const staleFor = (app: AppLookup) => (app.config ? staleMs : 0)
  const refresh = (appId: string, stale: Entry): Promise<AppLookup> => {
    const refreshed = fetchApp(appId).then(({ app, keep }) => {
      stale.refreshing = null
      if (cache.get(appId) !== stale) return app
      // The API's trouble: the old answer stands until its stale time runs out.
      if (keep === 0) return stale.app
      const now = Date.now()
      cache.delete(appId)
      cache.set(appId, {
        until: now + keep,
        staleUntil: now + keep + staleFor(app),
        app: Promise.resolve(app),
        refreshing: null,
      })
      return app
    })
    stale.refreshing = refreshed
    return refreshed
  }
  return (appId, fresh = false) => {
    if (!isAppId(appId)) return Promise.resolve(NO_APP)
    const now = Date.now()
    const hit = cache.get(appId)
    if (hit && hit.until > now) return hit.app
    if (hit && hit.staleUntil > now) {
      const refreshed = hit.refreshing ?? refresh(appId, hit)
      // `fresh`: this answer waits for the refresh rather than taking the stale one.
      return fresh ? refreshed : hit.app
    }
    cache.delete(appId)
    if (cache.size >= ORIGINS_CACHE_MAX) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      const oldest = cache.keys().next().value
      if (oldest !== undefined) cache.delete(oldest)
    }
    // Requests for the same app while the lookup runs share it.
    const entry: Entry = {
      until: now + ORIGINS_FETCH_TIMEOUT_MS,
      staleUntil: 0,
      app: Promise.resolve(NO_APP),
      refreshing: null,
    }
    entry.app = fetchApp(appId).then(({ app, keep }) => {
      if (keep > 0) {
        entry.until = Date.now() + keep
        entry.staleUntil = entry.until + staleFor(app)
      } else if (cache.get(appId) === entry) cache.delete(appId)
      return app
    })
    cache.set(appId, entry)
    return entry.app
  }
}

/** JSON for a data block in a page's head: nothing in it can end the element. */
const dataBlockJson = (value: unknown) =>
  JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )

/**
 * The app configuration as a JSON data block for the page's head. `<`, `>` and `&` are
 * escaped as JSON escapes, so no value (an app name of `</script>`, say) can end the element
 * or open a comment; a data block never runs, so the CSP needs no hash for it.
 */
export function embeddedConfigTag(appId: string, config: Record<string, unknown>): string {
  const json = dataBlockJson(config)
  return `<script type="application/json" id="${EMBEDDED_CONFIG_ID}" data-app-id="${escapeAttr(appId)}">${json}</script>`
}

/** What a response of this server is made of, decided once at start. */
interface Site {
  distDir: string
  sdkDir: string
  /** The API's origin, for the page's connect-src. */
  apiOrigin: string
  /** The WalletConnect relay's origin, for the page's connect-src. */
  relayOrigin: string
  /** The meta tags index.html gets: the API URL, the keys page, the relay. */
  meta: string
  /** The meta tags connectors.html gets: the relay. */
  frameMeta: string
  /** The connector origin (Coinbase Wallet's frame), or null without one. */
  connectorOrigin: string | null
  /** The modal's public origin: the only parent of Coinbase Wallet's frame. */
  modalOrigin: string
  /** The meta tags coinbase.html gets: the modal's origin, the keys page. */
  coinbaseMeta: string
  lookupApp: (appId: string, fresh?: boolean) => Promise<AppLookup>
  compress: ReturnType<typeof createCompressor>
  probe: ModalServerOptions['probe']
}

/**
 * The page's meta tags, from the API URL and the wallet services' URLs (each checked: a bad one
 * stops the start), and the relay's origin the CSP admits.
 */
function pageMeta(
  apiBase: string,
  options: Pick<ModalServerOptions, 'coinbaseKeysUrl' | 'walletConnectRelayUrl'>,
): { meta: string; frameMeta: string; relayOrigin: string; keysMeta: string } {
  const keysUrl = options.coinbaseKeysUrl
  if (keysUrl !== undefined && cspOrigin(keysUrl) === null) {
    throw new Error(`coinbaseKeysUrl must be an http(s) URL: ${keysUrl}`)
  }
  const relayUrl = options.walletConnectRelayUrl ?? DEFAULT_WALLETCONNECT_RELAY_URL
  const relayOrigin = wsOrigin(relayUrl)
  if (relayOrigin === null) {
    throw new Error(`walletConnectRelayUrl must be a ws(s) URL without credentials: ${relayUrl}`)
  }
  const relayMeta = `<meta name="${WALLETCONNECT_RELAY_META}" content="${escapeAttr(relayUrl)}" />`
  const meta = `<meta name="latch-api-url" content="${escapeAttr(apiBase)}" />${relayMeta}`
  const keysMeta = keysUrl
    ? `<meta name="${COINBASE_KEYS_META}" content="${escapeAttr(keysUrl)}" />`
    : ''
  return { meta, frameMeta: relayMeta, relayOrigin, keysMeta }
}

/**
 * index.html with the meta tags and, when the app is known, its configuration: right after the
 * API URL's tag, before the early script (build.ts) that reads both. Read on every request: a
 * rebuild renames the hashed assets index.html points to.
 */
async function loadIndex(raw: Promise<string>, meta: string, embedded: string): Promise<string> {
  const page = await raw
  // A function replacement: `$&` and the like in the JSON must stay as written.
  return /<meta name="latch-api-url"[^>]*>/.test(page)
    ? page.replace(/<meta name="latch-api-url"[^>]*>/, () => meta + embedded)
    : page.replace('<head>', () => `<head>${meta}${embedded}`)
}

function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string>,
  head: boolean,
): void {
  res.writeHead(status, {
    'x-content-type-options': 'nosniff',
    'content-length': String(Buffer.byteLength(body)),
    ...headers,
  })
  res.end(head ? undefined : body)
}

/** One request under way: what was asked, where the answer goes, whether it is a HEAD. */
interface Exchange {
  req: IncomingMessage
  res: ServerResponse
  head: boolean
}

const notFound = ({ res, head }: Exchange, text = 'Not Found') =>
  send(res, 404, text, { 'content-type': 'text/plain' }, head)

/** A static file, compressed when the browser takes it and it is worth it. */
async function sendFile(
  site: Site,
  { req, res, head }: Exchange,
  file: Buffer,
  headers: Record<string, string>,
  /** The file's path when the build compressed it already (the hashed assets). */
  built?: string,
): Promise<void> {
  const type = headers['content-type'] ?? ''
  const encoding = pickEncoding(req.headers['accept-encoding'])
  // Caches must keep one copy per encoding.
  const vary = { vary: 'accept-encoding' }
  if (!encoding || !COMPRESSIBLE.test(type) || file.length < MIN_COMPRESS_BYTES) {
    send(res, 200, file, { ...headers, ...vary }, head)
    return
  }
  const body = await site.compress(file, encoding, built)
  send(res, 200, body, { ...headers, ...vary, 'content-encoding': encoding }, head)
}

/**
 * The origin of the page a frame request comes from, when the browser says it is one: a frame
 * navigation (`Sec-Fetch-Dest: iframe`) whose Referer (the host page's, cut to its origin by
 * the browser's default referrer policy) is an http(s) URL. Null otherwise, for a host page
 * that sends no Referer too: that one gets the modal page, which the browser then refuses to
 * frame, as before.
 */
export function embedderOrigin(req: IncomingMessage): string | null {
  if (req.headers['sec-fetch-dest'] !== 'iframe') return null
  return cspOrigin(req.headers.referer)
}

/**
 * The page a frame gets when the page embedding it is on an origin its app does not list:
 * frameable by that origin only, with no screen and no API, it loads /refused.js, which
 * connects to that page and refuses every call with `origin_not_allowed` naming the origin and
 * the command that adds it (src/startup/refused.ts). Without it the page would wait out the SDK's
 * connection timeout with the reason only in its console. What it tells that page (the app
 * exists and does not list it) the modal page's own frame-ancestors tells anyone.
 */
export function refusalPage(origin: string, appId: string): { html: string; csp: string } {
  const data: RefusalData = { origin, appId }
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8" />' +
    '<meta name="referrer" content="no-referrer" /><title>Latch</title>' +
    `<script type="application/json" id="${REFUSAL_DATA_ID}">${dataBlockJson(data)}</script>` +
    `<script src="/${REFUSAL_SCRIPT}"></script></head><body></body></html>`
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${origin}`,
  ].join('; ')
  return { html, csp }
}

/** The modal page: frameable only by the app's registered origins, with its configuration. */
async function sendPage(
  site: Site,
  { req, res, head }: Exchange,
  query: URLSearchParams,
): Promise<void> {
  // The host SDK puts the app id in the query too: the fragment never reaches a server.
  const appId = query.get('app')
  // Read while the lookup runs.
  const raw = readFile(join(site.distDir, 'index.html'), 'utf8')
  raw.catch(() => {})
  let app = appId ? await site.lookupApp(appId) : NO_APP
  const embedder = embedderOrigin(req)
  // Only for an app the API knows: an unknown id, or an API that did not answer, says nothing
  // of the origin.
  const refused = (lookup: AppLookup) =>
    Boolean(appId && lookup.config && embedder && !lookup.origins.includes(embedder))
  // Before refusing, a stale answer waits for its refresh: an origin just added works on the
  // next load, not the one after (what a fresh answer within its 2 s says stands).
  if (appId && refused(app)) app = await site.lookupApp(appId, true)
  if (appId && embedder && refused(app)) {
    const refusal = refusalPage(embedder, appId)
    send(
      res,
      200,
      refusal.html,
      {
        'content-type': TYPES['.html'] as string,
        'cache-control': 'no-store',
        'content-security-policy': refusal.csp,
        'referrer-policy': 'no-referrer',
      },
      head,
    )
    return
  }
  const embedded = appId && app.config ? embeddedConfigTag(appId, app.config) : ''
  const html = await loadIndex(raw, site.meta, embedded).catch(() => null)
  if (html === null) {
    send(
      res,
      503,
      'The modal is not built: run buildModalApp()',
      { 'content-type': 'text/plain', 'retry-after': '1' },
      head,
    )
    return
  }
  send(
    res,
    200,
    html,
    {
      'content-type': TYPES['.html'] as string,
      // Never cached: the policy differs per app and follows its registered origins.
      'cache-control': 'no-store',
      // The hashes follow the index.html of the moment: a rebuild may change its script.
      'content-security-policy': modalCsp(
        site.apiOrigin,
        app.origins,
        inlineScriptHashes(html),
        [site.relayOrigin],
        site.connectorOrigin ? [site.connectorOrigin] : [],
        logoOrigin(app.config),
      ),
      'referrer-policy': 'no-referrer',
      // The passkey window (src/passkeys/passkey-window.ts) and the credential window
      // (src/wallet/credential-window.ts) answer the modal frame that opened them: a policy of
      // their own would cut them off from that opener, whose top-level page is the host's. They
      // speak only to the modal's origin and only with the frame's nonce.
      'cross-origin-opener-policy':
        query.has(PASSKEY_WINDOW_QUERY) || query.has(CREDENTIAL_WINDOW_QUERY)
          ? 'unsafe-none'
          : 'same-origin-allow-popups',
    },
    head,
  )
}

/**
 * A wallet SDK's frame page (connectors.html, coinbase.html): the built file with its meta tags
 * and the headers `headers` makes from the app's registered origins; no-store, no referrer.
 */
async function sendFramePage(
  site: Site,
  { res, head }: Exchange,
  query: URLSearchParams,
  path: string,
  meta: string,
  headers: (origins: readonly string[]) => Record<string, string>,
): Promise<void> {
  const appId = query.get('app')
  const raw = readFile(join(site.distDir, path.slice(1)), 'utf8')
  raw.catch(() => {})
  const app = appId ? await site.lookupApp(appId) : NO_APP
  const page = await raw.catch(() => null)
  if (page === null) {
    send(
      res,
      503,
      'The modal is not built',
      { 'content-type': 'text/plain', 'retry-after': '1' },
      head,
    )
    return
  }
  send(
    res,
    200,
    page.replace('<head>', () => `<head>${meta}`),
    {
      'content-type': TYPES['.html'] as string,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      ...headers(app.origins),
    },
    head,
  )
}

/**
 * The connector frame's page: the wallet SDKs in an opaque origin (connectorCsp), framed only
 * by this origin inside the app's registered origins.
 */
function sendConnectorPage(site: Site, x: Exchange, query: URLSearchParams): Promise<void> {
  return sendFramePage(site, x, query, CONNECTOR_FRAME_PATH, site.frameMeta, (origins) => ({
    'content-security-policy': connectorCsp(origins, [site.relayOrigin]),
  }))
}

/**
 * Coinbase Wallet's connector frame, on the connector origin: framed only by the modal's origin
 * inside the app's registered origins (coinbaseFrameCsp).
 */
function sendCoinbasePage(site: Site, x: Exchange, query: URLSearchParams): Promise<void> {
  return sendFramePage(site, x, query, COINBASE_FRAME_PATH, site.coinbaseMeta, (origins) => ({
    'content-security-policy': coinbaseFrameCsp(site.modalOrigin, origins),
    // Its popup (the keys page) must reach back to it: no policy of its own cuts the opener.
    'cross-origin-opener-policy': 'unsafe-none',
  }))
}

/** The host SDK's files. wallet-bridge.js: the host SDK imports it into the host page when the
 * modal first asks for browser wallets (host-sdk/src/bridge/), as an ES module, so CORS
 * applies; provider.js likewise on the first getEthereumProvider() (host-sdk/src/provider/).
 */
const SDK_FILES = new Set(['/sdk.js', '/latch.js', '/wallet-bridge.js', '/provider.js'])

async function sendSdkFile(site: Site, x: Exchange, pathname: string): Promise<void> {
  const file = await readFile(join(site.sdkDir, pathname.slice(1))).catch(() => null)
  if (!file) {
    notFound(x, 'Not Found: build the host SDK first')
    return
  }
  await sendFile(site, x, file, {
    'content-type': TYPES['.js'] as string,
    'cache-control': 'no-cache',
    // Host pages on any origin load the SDK, including as an ES module (CORS mode).
    'access-control-allow-origin': '*',
    'cross-origin-resource-policy': 'cross-origin',
  })
}

/** The build's other files (scripts, styles, images); never a page. */
async function sendAsset(site: Site, x: Exchange, pathname: string): Promise<void> {
  const target = normalize(join(site.distDir, pathname))
  // A page served here would carry none of index.html's headers (frame-ancestors above all):
  // '/%2e/index.html' must not be a way around them.
  const page = extname(target) === '.html'
  if (!target.startsWith(site.distDir + sep) || pathname.includes('\0') || page) {
    notFound(x)
    return
  }
  const file = await readFile(target).catch(() => null)
  if (!file) {
    notFound(x)
    return
  }
  await sendFile(
    site,
    x,
    file,
    {
      'content-type': TYPES[extname(target)] ?? 'application/octet-stream',
      // Vite names assets by content hash.
      'cache-control': pathname.startsWith('/assets/')
        ? 'public, max-age=31536000, immutable'
        : 'no-cache',
      // The connector frame's opaque origin loads its module scripts in CORS mode. Public
      // build output, no credentials: any origin may read them.
      ...(pathname.startsWith('/assets/') ? { 'access-control-allow-origin': '*' } : {}),
    },
    pathname.startsWith('/assets/') ? target : undefined,
  )
}

/**
 * A request's path and query, GET or HEAD only: anything else is answered here (405, or 400 for
 * a path that does not decode) and gives null.
 */
function readRequest(
  req: IncomingMessage,
  res: ServerResponse,
): { head: boolean; pathname: string; query: URLSearchParams } | null {
  const head = req.method === 'HEAD'
  if (req.method !== 'GET' && !head) {
    send(res, 405, 'Method Not Allowed', { allow: 'GET, HEAD', 'content-type': 'text/plain' }, head)
    return null
  }
  try {
    const url = new URL(req.url ?? '/', 'http://x')
    return { head, pathname: decodeURIComponent(url.pathname), query: url.searchParams }
  } catch {
    send(res, 400, 'Bad Request', { 'content-type': 'text/plain' }, head)
    return null
  }
}

/** One request: GET or HEAD only; the probes, then the page, the SDK, the build's files. */
async function handle(site: Site, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const read = readRequest(req, res)
  if (!read) return
  const { head, pathname, query } = read
  const probed = site.probe ? await site.probe(pathname) : null
  if (probed) {
    send(
      res,
      probed.status,
      JSON.stringify(probed.body),
      { 'content-type': 'application/json', 'cache-control': 'no-store' },
      head,
    )
    return
  }
  const x: Exchange = { req, res, head }
  if (pathname === '/' || pathname === '/index.html') return sendPage(site, x, query)
  if (pathname === CONNECTOR_FRAME_PATH) return sendConnectorPage(site, x, query)
  if (SDK_FILES.has(pathname)) return sendSdkFile(site, x, pathname)
  return sendAsset(site, x, pathname)
}

/**
 * One request to the connector origin: Coinbase Wallet's frame and the build's assets, nothing
 * else (never the modal page, the SDK or the probes).
 */
async function handleConnector(
  site: Site,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const read = readRequest(req, res)
  if (!read) return
  const { head, pathname, query } = read
  const x: Exchange = { req, res, head }
  if (pathname === COINBASE_FRAME_PATH) return sendCoinbasePage(site, x, query)
  if (pathname.startsWith('/assets/')) return sendAsset(site, x, pathname)
  return notFound(x)
}

/** An http(s) origin without path, query or credentials, or an error naming the option. */
function originOption(name: string, value: string): string {
  const origin = cspOrigin(value)
  const url = URL.canParse(value) ? new URL(value) : null
  if (origin === null || url === null || url.username || url.password || url.pathname !== '/') {
    throw new Error(`${name} must be an http(s) origin: ${value}`)
  }
  if (url.search || url.hash) throw new Error(`${name} must be an http(s) origin: ${value}`)
  return origin
}

/** Listens on `port` and `host`; resolves with the URL it answers on. */
async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  const hostName = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return `http://${hostName}:${address.port}`
}

/** Starts the modal origin server. */
export async function startModalServer(options: ModalServerOptions): Promise<ModalServer> {
  const apiUrl = new URL(options.apiUrl)
  const apiBase = apiUrl.href.replace(/\/+$/, '')
  const log = options.log ?? (() => {})
  const lookupApp = createAppLookup(
    options.lookupApiUrl?.replace(/\/+$/, '') ?? apiBase,
    log,
    options.originsTtlMs,
    options.originsStaleMs,
  )
  const { keysMeta, ...meta } = pageMeta(apiBase, options)
  const site: Site = {
    distDir: options.distDir ?? MODAL_DIST_DIR,
    sdkDir: options.sdkDir ?? HOST_SDK_DIST_DIR,
    apiOrigin: apiUrl.origin,
    ...meta,
    // Known once the listeners are up (their own URLs are the defaults).
    connectorOrigin: null,
    modalOrigin: '',
    coinbaseMeta: '',
    lookupApp,
    compress: createCompressor(),
    probe: options.probe,
  }
  const configuredModal =
    options.modalOrigin === undefined ? null : originOption('modalOrigin', options.modalOrigin)
  const configuredConnector =
    options.connectorOrigin === undefined
      ? null
      : originOption('connectorOrigin', options.connectorOrigin)
  const hsts = options.strictTransportSecurity
  const serve = (handler: typeof handle) =>
    createServer((req, res) => {
      if (hsts) res.setHeader('strict-transport-security', hsts)
      handler(site, req, res).catch((e: unknown) => {
        log(`modal server: ${req.method} ${req.url} failed: ${String(e)}`)
        if (!res.headersSent)
          send(res, 500, 'Internal Server Error', { 'content-type': 'text/plain' }, false)
        else res.destroy()
      })
    })
  const server = serve(handle)
  const url = await listen(server, options.port ?? 0, options.host ?? '127.0.0.1')
  site.modalOrigin = configuredModal ?? new URL(url).origin
  let connector: ModalServer['connector'] = null
  if (options.connectorPort !== undefined) {
    const connectorServer = serve(handleConnector)
    try {
      const connectorUrl = await listen(
        connectorServer,
        options.connectorPort,
        options.connectorHost ?? options.host ?? '127.0.0.1',
      )
      const origin = configuredConnector ?? new URL(connectorUrl).origin
      if (origin === site.modalOrigin) {
        throw new Error(`the connector origin must not be the modal's origin: ${origin}`)
      }
      connector = { url: connectorUrl, origin, server: connectorServer }
    } catch (e) {
      connectorServer.close()
      server.close()
      throw e
    }
    site.connectorOrigin = connector.origin
    site.meta += `<meta name="${CONNECTOR_ORIGIN_META}" content="${escapeAttr(connector.origin)}" />`
    site.coinbaseMeta = `<meta name="${MODAL_ORIGIN_META}" content="${escapeAttr(site.modalOrigin)}" />${keysMeta}`
    log(`modal: connector origin ${connector.origin} on ${connector.url}`)
  }
  log(`modal: ${url} (API ${apiBase})`)
  const stop = (s: Server) =>
    new Promise<void>((resolve) => {
      s.close(() => resolve())
      s.closeAllConnections()
    })
  return {
    url,
    server,
    connector,
    close: async () => {
      await Promise.all([stop(server), connector ? stop(connector.server) : undefined])
    },
  }
}
