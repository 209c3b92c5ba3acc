/**
 * The modal origin: serves modal-app/dist (index.html with the API URL injected) and the host
 * SDK's /sdk.js and /latch.js from host-sdk/dist. node:http only.
 */
import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

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
}

export interface ModalServer {
  url: string
  close(): Promise<void>
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

function escapeAttr(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
}

/** The modal page's Content-Security-Policy: its own scripts, the API for data. */
export function modalCsp(apiOrigin: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    // React sets style properties through the CSSOM; the theme tokens are inline custom properties.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' https: data:",
    `connect-src 'self' ${apiOrigin}`,
    `frame-src ${apiOrigin}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    // Any page may frame the modal; the modal itself talks only to the app's allowed origins.
    'frame-ancestors *',
  ].join('; ')
}

/** Starts the modal origin server. */
export async function startModalServer(options: ModalServerOptions): Promise<ModalServer> {
  const apiUrl = new URL(options.apiUrl)
  const apiBase = apiUrl.href.replace(/\/+$/, '')
  const distDir = options.distDir ?? MODAL_DIST_DIR
  const sdkDir = options.sdkDir ?? HOST_SDK_DIST_DIR
  const log = options.log ?? (() => {})
  const csp = modalCsp(apiUrl.origin)
  const meta = `<meta name="latch-api-url" content="${escapeAttr(apiBase)}" />`

  // Read on every request: a rebuild renames the hashed assets index.html points to.
  const loadIndex = async (): Promise<string> => {
    const raw = await readFile(join(distDir, 'index.html'), 'utf8')
    return /<meta name="latch-api-url"[^>]*>/.test(raw)
      ? raw.replace(/<meta name="latch-api-url"[^>]*>/, meta)
      : raw.replace('<head>', `<head>${meta}`)
  }

  const send = (
    res: ServerResponse,
    status: number,
    body: string | Buffer,
    headers: Record<string, string>,
    head: boolean,
  ): void => {
    res.writeHead(status, {
      'x-content-type-options': 'nosniff',
      'content-length': String(Buffer.byteLength(body)),
      ...headers,
    })
    res.end(head ? undefined : body)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const head = req.method === 'HEAD'
    if (req.method !== 'GET' && !head) {
      send(
        res,
        405,
        'Method Not Allowed',
        { allow: 'GET, HEAD', 'content-type': 'text/plain' },
        head,
      )
      return
    }
    let pathname: string
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
    } catch {
      send(res, 400, 'Bad Request', { 'content-type': 'text/plain' }, head)
      return
    }
    if (pathname === '/' || pathname === '/index.html') {
      const html = await loadIndex().catch(() => null)
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
          'cache-control': 'no-store',
          'content-security-policy': csp,
          'referrer-policy': 'no-referrer',
          'cross-origin-opener-policy': 'same-origin-allow-popups',
        },
        head,
      )
      return
    }
    if (pathname === '/sdk.js' || pathname === '/latch.js') {
      const file = await readFile(join(sdkDir, pathname.slice(1))).catch(() => null)
      if (!file) {
        send(
          res,
          404,
          'Not Found: build the host SDK first',
          { 'content-type': 'text/plain' },
          head,
        )
        return
      }
      send(
        res,
        200,
        file,
        {
          'content-type': TYPES['.js'] as string,
          'cache-control': 'no-cache',
          // Host pages on any origin load the SDK, including as an ES module (CORS mode).
          'access-control-allow-origin': '*',
          'cross-origin-resource-policy': 'cross-origin',
        },
        head,
      )
      return
    }
    const target = normalize(join(distDir, pathname))
    if (!target.startsWith(distDir + sep) || pathname.includes('\0')) {
      send(res, 404, 'Not Found', { 'content-type': 'text/plain' }, head)
      return
    }
    const file = await readFile(target).catch(() => null)
    if (!file) {
      send(res, 404, 'Not Found', { 'content-type': 'text/plain' }, head)
      return
    }
    send(
      res,
      200,
      file,
      {
        'content-type': TYPES[extname(target)] ?? 'application/octet-stream',
        // Vite names assets by content hash.
        'cache-control': pathname.startsWith('/assets/')
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
      },
      head,
    )
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log(`modal server: ${req.method} ${req.url} failed: ${String(e)}`)
      if (!res.headersSent)
        send(res, 500, 'Internal Server Error', { 'content-type': 'text/plain' }, false)
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
  })
  const address = server.address() as AddressInfo
  const hostName = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${hostName}:${address.port}`
  log(`modal: ${url} (API ${apiBase})`)
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
