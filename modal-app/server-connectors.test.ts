// @vitest-environment node
/**
 * The connector frame's page as the modal server serves it: a sandbox without the modal's
 * origin whoever frames it, scripts from this server, the relay as its only connection; the
 * modal page's CSP lets it frame that page; the build's assets load from the frame's opaque
 * origin (CORS). The page in a browser is e2e/src/connector-frame.spec.ts.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type ModalServer, startModalServer } from './server.ts'

let dir = ''
let server: ModalServer

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'latch-modal-connectors-'))
  await mkdir(join(dir, 'dist/assets'), { recursive: true })
  await mkdir(join(dir, 'sdk'))
  await writeFile(
    join(dir, 'dist/index.html'),
    '<!doctype html><html><head><meta name="latch-api-url" content="" /></head><body></body></html>',
  )
  await writeFile(
    join(dir, 'dist/connectors.html'),
    '<!doctype html><html><head><script type="module" crossorigin src="/assets/connectors-x.js"></script></head><body></body></html>',
  )
  await writeFile(join(dir, 'dist/assets/connectors-x.js'), 'export {}')
  server = await startModalServer({
    apiUrl: 'http://127.0.0.1:9',
    distDir: join(dir, 'dist'),
    sdkDir: join(dir, 'sdk'),
    walletConnectRelayUrl: 'wss://relay.example.test/v2',
  })
})

afterAll(async () => {
  await server?.close()
  await rm(dir, { recursive: true, force: true })
})

const directives = (csp: string) =>
  new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(' '))
      .map(([name = '', ...values]) => [name, values]),
  )

test("behavior: the connector page is sandboxed to scripts alone (no allow-same-origin, no popups), runs this server's scripts, connects to the relay only, and names it in a meta tag", async () => {
  const res = await fetch(`${server.url}/connectors.html`)
  expect(res.status).toBe(200)
  expect(res.headers.get('cache-control')).toBe('no-store')
  expect(res.headers.get('referrer-policy')).toBe('no-referrer')
  const csp = directives(res.headers.get('content-security-policy') ?? '')
  expect(csp.get('sandbox')).toEqual(['allow-scripts'])
  expect(csp.get('default-src')).toEqual(["'none'"])
  expect(csp.get('script-src')).toEqual(["'self'"])
  expect(csp.get('connect-src')).toEqual(['wss://relay.example.test'])
  // No app: only the modal's own origin may frame it (with an app, its registered origins too).
  expect(csp.get('frame-ancestors')).toEqual(["'self'"])
  const html = await res.text()
  expect(html).toContain(
    '<meta name="latch-walletconnect-relay-url" content="wss://relay.example.test/v2" />',
  )
  // Nothing of the modal's: not the API URL, not the app's configuration.
  expect(html).not.toContain('latch-api-url')
})

test("behavior: the modal page may frame its own origin's connector page beside the wallet frame", async () => {
  const res = await fetch(`${server.url}/`)
  await res.body?.cancel()
  const csp = directives(res.headers.get('content-security-policy') ?? '')
  expect(csp.get('frame-src')).toEqual(["'self'", 'http://127.0.0.1:9'])
})

test("behavior: the build's assets are readable from the frame's opaque origin (CORS), without credentials", async () => {
  const res = await fetch(`${server.url}/assets/connectors-x.js`, { headers: { origin: 'null' } })
  expect(res.status).toBe(200)
  expect(res.headers.get('access-control-allow-origin')).toBe('*')
  expect(res.headers.get('access-control-allow-credentials')).toBeNull()
  await res.body?.cancel()
})

test('error: only GET and HEAD; the page is never served under another name', async () => {
  const post = await fetch(`${server.url}/connectors.html`, { method: 'POST' })
  expect(post.status).toBe(405)
  await post.body?.cancel()
  for (const path of ['/assets/../connectors.html', '/%2e/connectors.html', '/connectors.htm']) {
    const res = await fetch(`${server.url}${path}`)
    if (res.status === 200) {
      expect(res.headers.get('content-security-policy')).toContain('sandbox allow-scripts')
    }
    await res.body?.cancel()
  }
})
