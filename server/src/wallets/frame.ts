/**
 * The wallet frame's page and assets on the API origin: GET /apps/{appId}/embedded-wallets and
 * GET /embedded-wallets/assets/*. The page carries the modal origin (the one origin allowed to
 * talk to it) written in by the server, never read from the request; its CSP allows scripts
 * from this origin only and requests to this origin only. `frame-ancestors` is checked by the
 * browser against every ancestor, not just the parent: the frame sits in the modal, which sits
 * in the host page, so it names the modal origin and the app's registered host origins (the
 * same list the modal's own frame-ancestors carries); penpal then answers the modal alone.
 * The page is never cached (it names origins); the hashed assets are immutable.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  LatchError,
  toApiErrorBody,
  validateOrigin,
  WALLET_EXPORT_ROUTE,
  WALLET_FRAME_ROUTE,
} from '@latch/shared'
import { LOCALES } from '@latch/shared/i18n'
import { type Context, Hono } from 'hono'
import { findApp } from '../apps/service.ts'
import type { Deps } from '../context.ts'
import type { HonoEnv } from '../http.ts'

export const WALLET_FRAME_DIST = fileURLToPath(
  new URL('../../../wallet-frame/dist', import.meta.url),
)
const PLACEHOLDER = '%LATCH_MODAL_ORIGIN%'
/** A hashed build asset name: nothing else under the assets path is ever read. */
const ASSET = /^[A-Za-z0-9_-]+\.(js|css)$/

/**
 * An origin as a CSP source: exactly what validateOrigin answers for it, so no wildcard, path
 * or other CSP syntax reaches the header even from a row written before registration refused
 * them (a `https://*` there would let every https page frame the wallet).
 */
const isCspOrigin = (o: string): boolean => {
  const checked = validateOrigin(o)
  return checked.ok && checked.value === o
}

/** The frame page's Content-Security-Policy for a modal origin and the app's host origins. */
export function walletFrameCsp(modalOrigin: string, hostOrigins: readonly string[] = []): string {
  const ancestors = [modalOrigin, ...hostOrigins.filter(isCspOrigin)]
  return [
    "default-src 'none'",
    "script-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${[...new Set(ancestors)].join(' ')}`,
  ].join('; ')
}

/**
 * The key export page's CSP: the frame's, plus its own stylesheet (`style-src 'self'`; the
 * theme colours are set through the CSSOM, which the CSP does not govern).
 */
export function exportFrameCsp(modalOrigin: string, hostOrigins: readonly string[] = []): string {
  return walletFrameCsp(modalOrigin, hostOrigins).replace(
    "connect-src 'self'",
    "connect-src 'self'; style-src 'self'",
  )
}

const EXPORT_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const EXPORT_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/

/**
 * The export page's query, checked before the page is served (the page checks it again): an
 * access token in the URL is refused, whatever else is right, because a URL sits in logs,
 * history and Referer headers; the modal hands the token over penpal instead.
 */
export function exportQueryError(query: URLSearchParams): string | null {
  if (query.has('token') || query.has('accessToken')) {
    return 'The access token is not accepted in the URL: the modal passes it after the handshake'
  }
  if (!EXPORT_ADDRESS.test(query.get('address') ?? '')) {
    return 'address must be a 0x address of 40 hex digits'
  }
  const width = query.get('width')
  if (width !== null && (!/^\d{3}$/.test(width) || Number(width) < 240 || Number(width) > 640)) {
    return 'width must be a whole number from 240 to 640'
  }
  for (const name of ['background', 'foreground', 'accent', 'accentForeground']) {
    const color = query.get(name)
    if (color !== null && !EXPORT_COLOR.test(color)) {
      return `${name} must be a colour as #rgb or #rrggbb`
    }
  }
  const locale = query.get('locale')
  if (locale !== null && !(LOCALES as readonly string[]).includes(locale)) {
    return `locale must be one of ${LOCALES.join(', ')}`
  }
  return null
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
}

export function walletFrameRoutes(deps: Deps, options: { distDir?: string } = {}): Hono<HonoEnv> {
  const distDir = options.distDir ?? deps.config.walletFrameDir ?? WALLET_FRAME_DIST
  const routes = new Hono<HonoEnv>()

  /** One of the two pages, with the modal origin written in and its CSP. */
  const page = async (c: Context<HonoEnv>, file: string, csp: typeof walletFrameCsp) => {
    c.header('cache-control', 'no-store')
    const app = await findApp(deps, c.req.param('appId') ?? '')
    if (!app) throw LatchError.of('missing_or_invalid_latch_app_id')
    const modalOrigin = deps.config.modalOrigin
    if (!modalOrigin) {
      return c.json(
        toApiErrorBody(
          LatchError.of('internal_error', {
            message:
              'The wallet frame needs LATCH_MODAL_ORIGIN: without it no page may embed the frame',
          }),
        ),
        503,
      )
    }
    const html = await readFile(join(distDir, file), 'utf8').catch(() => null)
    if (html === null || !html.includes(PLACEHOLDER)) {
      return c.text(
        'The wallet frame is not built: run `npm run build -w wallet-frame` on the server.',
        503,
      )
    }
    c.header('content-security-policy', csp(modalOrigin, app.allowedOrigins))
    c.header('x-content-type-options', 'nosniff')
    c.header('referrer-policy', 'no-referrer')
    c.header('cross-origin-opener-policy', 'same-origin')
    return c.html(html.replace(PLACEHOLDER, escapeAttribute(modalOrigin)))
  }

  routes.get(WALLET_FRAME_ROUTE, (c) => page(c, 'index.html', walletFrameCsp))

  routes.get(WALLET_EXPORT_ROUTE, (c) => {
    const error = exportQueryError(new URL(c.req.url).searchParams)
    if (error) {
      c.header('cache-control', 'no-store')
      c.header('referrer-policy', 'no-referrer')
      throw LatchError.of('invalid_data', { message: error })
    }
    return page(c, 'export.html', exportFrameCsp)
  })

  routes.get('/embedded-wallets/assets/:file', async (c) => {
    const file = c.req.param('file')
    const body = ASSET.test(file)
      ? await readFile(join(distDir, 'assets', file)).catch(() => null)
      : null
    if (!body) throw LatchError.of('not_found', { message: `No route GET ${c.req.path}` })
    c.header('cache-control', 'public, max-age=31536000, immutable')
    c.header('x-content-type-options', 'nosniff')
    c.header(
      'content-type',
      file.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
    )
    return c.body(new Uint8Array(body))
  })

  return routes
}
