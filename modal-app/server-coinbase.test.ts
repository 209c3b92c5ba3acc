// @vitest-environment node
/**
 * The connector origin as the modal server serves it: a second listener with Coinbase Wallet's
 * frame (coinbase.html) and the build's assets only, its page sandboxed with its own origin and
 * popups, framed only by the modal's origin, told the modal's origin and the keys page; the
 * modal page names the connector origin and may frame it; no listener, no Coinbase Wallet. The
 * frame in a browser is e2e/src/connector-frame.spec.ts and wallet-connectors.spec.ts.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type ModalServer, startModalServer } from './server.ts'

let dir = ''
let server: ModalServer
let plain: ModalServer

const MODAL_ORIGIN = 'https://auth.example.test'
const CONNECTOR_ORIGIN = 'https://connect.example.test'

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'latch-modal-coinbase-'))
  await mkdir(join(dir, 'dist/assets'), { recursive: true })
  await mkdir(join(dir, 'sdk'))
  await writeFile(
    join(dir, 'dist/index.html'),
    '<!doctype html><html><head><meta name="latch-api-url" content="" /></head><body></body></html>',
  )
  await writeFile(
    join(dir, 'dist/coinbase.html'),
    '<!doctype html><html><head><script type="module" crossorigin src="/assets/coinbase-x.js"></script></head><body></body></html>',
  )
  await writeFile(join(dir, 'dist/assets/coinbase-x.js'), 'export {}')
  await writeFile(join(dir, 'sdk/sdk.js'), 'export {}')
  const base = {
    apiUrl: 'http://127.0.0.1:9',
    distDir: join(dir, 'dist'),
    sdkDir: join(dir, 'sdk'),
  }
  server = await startModalServer({
    ...base,
    modalOrigin: MODAL_ORIGIN,
    connectorPort: 0,
    connectorOrigin: CONNECTOR_ORIGIN,
    coinbaseKeysUrl: 'https://keys.example.test/connect',
  })
  plain = await startModalServer(base)
})

afterAll(async () => {
  await server?.close()
  await plain?.close()
  await rm(dir, { recursive: true, force: true })
})

const directives = (csp: string) =>
  new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(' '))
      .map(([name = '', ...values]) => [name, values]),
  )

test("behavior: Coinbase Wallet's page is sandboxed with its own origin and popups that leave the sandbox, framed only by the modal's origin, told the modal's origin and the keys page", async () => {
  const connector = server.connector
  if (!connector) throw new Error('no connector listener')
  expect(connector.origin).toBe(CONNECTOR_ORIGIN)
  const res = await fetch(`${connector.url}/coinbase.html`)
  expect(res.status).toBe(200)
  expect(res.headers.get('cache-control')).toBe('no-store')
  const csp = directives(res.headers.get('content-security-policy') ?? '')
  expect(csp.get('sandbox')).toEqual([
    'allow-scripts',
    'allow-same-origin',
    'allow-popups',
    'allow-popups-to-escape-sandbox',
  ])
  expect(csp.get('default-src')).toEqual(["'none'"])
  expect(csp.get('script-src')).toEqual(["'self'"])
  expect(csp.get('connect-src')).toEqual(["'self'"])
  // No app: the modal's origin alone (with an app, its registered origins above it too).
  expect(csp.get('frame-ancestors')).toEqual([MODAL_ORIGIN])
  const html = await res.text()
  expect(html).toContain(`<meta name="latch-modal-origin" content="${MODAL_ORIGIN}" />`)
  expect(html).toContain(
    '<meta name="latch-coinbase-keys-url" content="https://keys.example.test/connect" />',
  )
  expect(html).not.toContain('latch-api-url')
})

test('refusal: the connector origin serves nothing of the modal: not its page, the SDK, the WalletConnect frame; the modal origin does not serve the Coinbase page', async () => {
  const connector = server.connector
  if (!connector) throw new Error('no connector listener')
  for (const path of ['/', '/index.html', '/sdk.js', '/connectors.html', '/coinbase.htm']) {
    const res = await fetch(`${connector.url}${path}`)
    expect(res.status).toBe(404)
    await res.body?.cancel()
  }
  const asset = await fetch(`${connector.url}/assets/coinbase-x.js`)
  expect(asset.status).toBe(200)
  await asset.body?.cancel()
  const onModal = await fetch(`${server.url}/coinbase.html`)
  expect(onModal.status).toBe(404)
  await onModal.body?.cancel()
  const post = await fetch(`${connector.url}/coinbase.html`, { method: 'POST' })
  expect(post.status).toBe(405)
  await post.body?.cancel()
})

test('behavior: the modal page names the connector origin and may frame it; without one, neither, and the keys page is never on the modal page', async () => {
  const res = await fetch(`${server.url}/`)
  const html = await res.text()
  expect(html).toContain(`<meta name="latch-connector-origin" content="${CONNECTOR_ORIGIN}" />`)
  expect(html).not.toContain('latch-coinbase-keys-url')
  const csp = directives(res.headers.get('content-security-policy') ?? '')
  expect(csp.get('frame-src')).toEqual(["'self'", 'http://127.0.0.1:9', CONNECTOR_ORIGIN])

  expect(plain.connector).toBeNull()
  const without = await fetch(`${plain.url}/`)
  expect(await without.text()).not.toContain('latch-connector-origin')
  expect(directives(without.headers.get('content-security-policy') ?? '').get('frame-src')).toEqual(
    ["'self'", 'http://127.0.0.1:9'],
  )
})

test("error: a connector origin that is the modal's, or not an origin, stops the start", async () => {
  const base = {
    apiUrl: 'http://127.0.0.1:9',
    distDir: join(dir, 'dist'),
    sdkDir: join(dir, 'sdk'),
  }
  await expect(
    startModalServer({
      ...base,
      modalOrigin: MODAL_ORIGIN,
      connectorPort: 0,
      connectorOrigin: MODAL_ORIGIN,
    }),
  ).rejects.toThrow(/must not be the modal's origin/)
  await expect(
    startModalServer({ ...base, connectorPort: 0, connectorOrigin: 'https://connect.example/x' }),
  ).rejects.toThrow(/connectorOrigin must be an http\(s\) origin/)
})
