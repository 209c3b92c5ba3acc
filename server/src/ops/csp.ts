/**
 * `latch csp`: what a host page's Content-Security-Policy must allow for Latch, so nobody
 * assembles it by hand.
 *
 * The host page itself only does three things that a CSP governs: it runs scripts from the
 * modal origin (sdk.js or latch.js, and on first use provider.js and wallet-bridge.js, imported
 * from there), it frames the modal origin, and the SDK adds one <style> element (the dialog's
 * layout, shared/src/frame-css.ts), admitted by its hash so the page needs no 'unsafe-inline'.
 * Nothing else: the SDK makes no fetch or WebSocket of its own (it talks to the modal by
 * postMessage), so connect-src needs nothing; the API and the wallet frame are framed by the
 * modal, not by the page, and a page's frame-src does not reach frames inside its frames (the
 * modal's own CSP and the wallet frame's frame-ancestors govern those); OAuth leaves the page
 * by navigation, which CSP does not restrict.
 */
import { createHash } from 'node:crypto'
import { FRAME_CSS, validateOrigin } from '@latch/shared'
import { findApp } from '../apps/service.ts'
import type { CliIo } from '../cli-io.ts'
import type { Env } from '../config.ts'
import { openServices } from '../index.ts'

/** The hash source of the SDK's <style> element, as CSP writes it. */
export function frameStyleHash(css: string = FRAME_CSS): string {
  return `'sha256-${createHash('sha256').update(css, 'utf8').digest('base64')}'`
}

export interface HostCsp {
  modalOrigin: string
  /** Each directive's sources to add to the page's own policy, in print order. */
  directives: { 'script-src': string[]; 'frame-src': string[]; 'style-src': string[] }
  /** A whole policy for a page with nothing else to allow ('self' plus Latch). */
  example: string
}

export function hostPageCsp(modalOrigin: string): HostCsp {
  const origin = new URL(modalOrigin).origin
  const directives = {
    'script-src': [origin],
    'frame-src': [origin],
    'style-src': [frameStyleHash()],
  }
  const example = [
    "default-src 'self'",
    `script-src 'self' ${origin}`,
    `frame-src ${origin}`,
    `style-src 'self' ${directives['style-src'].join(' ')}`,
    "object-src 'none'",
    "base-uri 'self'",
  ].join('; ')
  return { modalOrigin: origin, directives, example }
}

/** What `latch csp` prints: the lines to merge, then a whole header for a page with no other needs. */
export function describeHostCsp(csp: HostCsp, pages: readonly string[] = []): string {
  return [
    `# What a host page's Content-Security-Policy needs for Latch (modal ${csp.modalOrigin})${
      pages.length ? `, on ${pages.join(', ')}` : ''
    }.`,
    '# Add these sources to the directives of your own policy:',
    ...Object.entries(csp.directives).map(([name, sources]) => `${name} ${sources.join(' ')}`),
    '# Or, for a page that loads nothing else from elsewhere, the whole header:',
    `Content-Security-Policy: ${csp.example}`,
  ].join('\n')
}

/**
 * `latch csp [--app <id>] [--modal-origin <url>] [--json]`: the modal origin from the flag,
 * else LATCH_MODAL_ORIGIN (what `serve` is told its public origin is). With `--app`, the app
 * must exist and its registered page origins are named (the pages the policy is for).
 */
export async function cspCommand(
  options: { app?: string; modalOrigin?: string; json?: boolean },
  io: CliIo,
): Promise<number> {
  const env: Env = { ...process.env, ...io.env }
  const given = options.modalOrigin ?? env.LATCH_MODAL_ORIGIN?.trim()
  if (!given) {
    io.err(
      "csp needs the modal's public origin: --modal-origin https://auth.example.com, or LATCH_MODAL_ORIGIN",
    )
    return 2
  }
  const checked = validateOrigin(given)
  if (!checked.ok) {
    io.err(`--modal-origin: ${checked.error.message}`)
    return 2
  }
  let pages: readonly string[] = []
  if (options.app !== undefined) {
    const services = await openServices({ env: io.env, log: io.err })
    try {
      const app = await findApp(services.deps, options.app)
      if (!app) {
        io.err(`No app with id '${options.app}'`)
        return 1
      }
      pages = app.allowedOrigins
    } finally {
      await services.close()
    }
  }
  const csp = hostPageCsp(checked.value)
  io.out(options.json ? JSON.stringify({ ...csp, pages }, null, 2) : describeHostCsp(csp, pages))
  return 0
}
