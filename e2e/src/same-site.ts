/**
 * The recommended deployment for tests: host page, modal and API on subdomains of one site
 * (`www.`, `auth.` and `api.example.test`) over HTTPS, so the frames are same-site with the page
 * and the browser lets the wallet frame keep its device share. Chromium resolves the names to
 * 127.0.0.1 (SAME_SITE_CHROMIUM_ARGS) and trusts the throwaway certificate; one TLS proxy on
 * one port passes each name's requests to its plain-http server.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** The registrable domain of the same-site deployment (`.test` never resolves in DNS). */
export const SAME_SITE_DOMAIN = 'example.test'

/** Chromium flags: `*.example.test` is 127.0.0.1, and the test certificate is accepted. */
export const SAME_SITE_CHROMIUM_ARGS = [
  `--host-resolver-rules=MAP *.${SAME_SITE_DOMAIN} 127.0.0.1`,
  '--ignore-certificate-errors',
]

/** A self-signed certificate for *.example.test, made with the openssl command line. */
export function testCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'latch-tls-'))
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${SAME_SITE_DOMAIN}`,
        '-addext',
        `subjectAltName=DNS:*.${SAME_SITE_DOMAIN},DNS:${SAME_SITE_DOMAIN}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore', timeout: 20_000 },
    )
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface SameSiteProxy {
  port: number
  /** `https://{sub}.example.test:{port}`, e.g. origin('api'). */
  origin(sub: string): string
  /** Sends the requests for `{sub}.example.test` to http://127.0.0.1:{port}. */
  route(sub: string, port: number): void
  close(): Promise<void>
}

/**
 * Starts the TLS proxy on a free 127.0.0.1 port. A name without a route answers 502. The Host
 * header passes unchanged, so each server sees the name the browser used.
 */
export async function startSameSiteProxy(): Promise<SameSiteProxy> {
  const routes = new Map<string, number>()
  const server = createHttpsServer(testCertificate(), (req, res) => {
    const name = (req.headers.host ?? '').replace(/:\d+$/, '')
    const target = routes.get(name)
    if (target === undefined) {
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`no route for ${name}`)
      return
    }
    const upstream = httpRequest(
      { host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers },
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    port,
    origin: (sub) => `https://${sub}.${SAME_SITE_DOMAIN}:${port}`,
    route: (sub, to) => routes.set(`${sub}.${SAME_SITE_DOMAIN}`, to),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
