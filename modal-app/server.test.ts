// @vitest-environment node

import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib'
import { API_PREFIX } from '@latch/shared'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type RunningServer, startServer } from '../server/src/index.ts'
import { migratedMemory } from '../server/src/testing/global-setup.ts'
import {
  createAppLookup,
  inlineScriptHashes,
  type ModalServer,
  pickEncoding,
  startModalServer,
} from './server.ts'
import { EMBEDDED_CONFIG_ID } from './src/startup/early.ts'

let dir: string
let server: ModalServer

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'latch-modal-'))
  await mkdir(join(dir, 'dist/assets'), { recursive: true })
  await mkdir(join(dir, 'sdk'))
  await writeFile(
    join(dir, 'dist/index.html'),
    '<!doctype html><html><head><meta name="latch-api-url" content="" /></head><body></body></html>',
  )
  await writeFile(join(dir, 'dist/assets/index-abc.js'), 'console.log(1)')
  await writeFile(join(dir, 'dist/assets/index-abc.css'), 'body{}')
  await writeFile(join(dir, 'sdk/sdk.js'), '/* sdk */')
  await writeFile(join(dir, 'sdk/latch.js'), 'export {}')
  await writeFile(join(dir, 'sdk/wallet-bridge.js'), 'export {}')
  await writeFile(join(dir, 'secret.txt'), 'secret')
  server = await startModalServer({
    apiUrl: 'http://127.0.0.1:8787/"><script>',
    distDir: join(dir, 'dist'),
    sdkDir: join(dir, 'sdk'),
  })
})

afterAll(async () => {
  await server.close()
  await rm(dir, { recursive: true, force: true })
})

test('behavior: index.html with the API URL injected (escaped), CSP and no caching', async () => {
  const res = await fetch(`${server.url}/`)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(res.headers.get('cache-control')).toBe('no-store')
  const csp = res.headers.get('content-security-policy') ?? ''
  expect(csp).toContain("script-src 'self'")
  expect(csp).toContain("connect-src 'self' http://127.0.0.1:8787 wss://relay.walletconnect.org")
  expect(csp).toContain("object-src 'none'")
  const html = await res.text()
  expect(html).toContain(
    '<meta name="latch-api-url" content="http://127.0.0.1:8787/%22%3E%3Cscript%3E" />',
  )
  expect(html).not.toContain('<script>')
})

test('behavior: the modal page keeps its opener policy; the passkey and credential windows (the same page) have none, so they can answer the modal frame that opened them, and no one may frame them', async () => {
  const page = await fetch(`${server.url}/`)
  expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin-allow-popups')
  await page.body?.cancel()
  for (const query of ['latch-passkey-window', 'latch-credential-window']) {
    const win = await fetch(`${server.url}/?${query}`)
    expect(win.status).toBe(200)
    expect(win.headers.get('cross-origin-opener-policy')).toBe('unsafe-none')
    expect(win.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    await win.body?.cancel()
  }
})

test('behavior: hashed assets are immutable with their content types', async () => {
  const js = await fetch(`${server.url}/assets/index-abc.js`)
  expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
  expect(js.headers.get('cache-control')).toContain('immutable')
  const css = await fetch(`${server.url}/assets/index-abc.css`)
  expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
  expect(css.headers.get('x-content-type-options')).toBe('nosniff')
})

test('behavior: /sdk.js, /latch.js and /wallet-bridge.js from the host SDK build, loadable cross-origin', async () => {
  for (const name of ['sdk.js', 'latch.js', 'wallet-bridge.js']) {
    const res = await fetch(`${server.url}/${name}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
  }
})

test('error: paths outside the build folder, unknown files and other methods', async () => {
  const raw = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const url = new URL(server.url)
      request({ host: url.hostname, port: url.port, path }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
        .on('error', reject)
        .end()
    })
  expect(await raw('/../secret.txt')).toBe(404)
  expect(await raw('/%2e%2e/secret.txt')).toBe(404)
  expect(await raw('/assets/%E0%A4%A')).toBe(400)
  expect((await fetch(`${server.url}/nope.js`)).status).toBe(404)
  expect((await fetch(`${server.url}/`, { method: 'POST' })).status).toBe(405)
})

describe('frame-ancestors: only the app’s registered origins may frame the modal', () => {
  let api: RunningServer
  let modal: ModalServer
  let appId: string
  const ancestors = async (server: ModalServer, query: string) => {
    const res = await fetch(`${server.url}/${query}`, { signal: AbortSignal.timeout(10_000) })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const csp = res.headers.get('content-security-policy') ?? ''
    return csp
      .split(';')
      .map((d) => d.trim())
      .find((d) => d.startsWith('frame-ancestors '))
  }

  beforeAll(async () => {
    api = await startServer({
      port: 0,
      host: '127.0.0.1',
      env: { DATABASE_URL: 'memory://', LATCH_SECRET: 'modal-server-test-secret-0123456789abcdef' },
      log: () => {},
      ...migratedMemory(),
    })
    appId = (
      await api.admin.createApp({
        name: 'Framed',
        allowedOrigins: ['https://shop.example.com', 'http://localhost:5173'],
      })
    ).id
    modal = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
    })
  }, 60_000)
  afterAll(async () => {
    await modal?.close()
    await api?.close()
  })

  test('behavior: the page of a known app names its registered origins, for / and /index.html', async () => {
    const expected = 'frame-ancestors https://shop.example.com http://localhost:5173'
    expect(await ancestors(modal, `?app=${appId}`)).toBe(expected)
    expect(await ancestors(modal, `index.html?app=${appId}`)).toBe(expected)
  })

  test('refusal: a frame on an origin the app does not list gets the refusal page, frameable by that origin only; a listed one, the modal', async () => {
    const framed = (referer: string, dest = 'iframe') =>
      fetch(`${modal.url}/?app=${appId}`, {
        headers: { referer, 'sec-fetch-dest': dest },
        signal: AbortSignal.timeout(10_000),
      })
    const refused = await framed('https://evil.example/shop?x=1')
    expect(refused.status).toBe(200)
    expect(refused.headers.get('cache-control')).toBe('no-store')
    const csp = refused.headers.get('content-security-policy') ?? ''
    expect(csp).toContain('frame-ancestors https://evil.example')
    expect(csp).toContain("default-src 'none'")
    expect(csp).not.toContain('shop.example.com')
    const html = await refused.text()
    // Its data and its script, nothing of the modal page (no API URL, no configuration).
    expect(html).toContain(`"origin":"https://evil.example","appId":"${appId}"`)
    expect(html).toContain('<script src="/refused.js"></script>')
    expect(html).not.toContain('latch-api-url')
    expect(html).not.toContain(EMBEDDED_CONFIG_ID)
    // A listed origin, a top-level visit, a request with no Referer or one that is no http(s)
    // origin: the modal page with the app's origins.
    const expected = 'frame-ancestors https://shop.example.com http://localhost:5173'
    for (const res of [
      await framed('http://localhost:5173/'),
      await framed('https://evil.example/', 'document'),
      await framed('javascript:alert(1)'),
      await fetch(`${modal.url}/?app=${appId}`, { headers: { 'sec-fetch-dest': 'iframe' } }),
    ]) {
      const directive = (res.headers.get('content-security-policy') ?? '')
        .split(';')
        .map((d) => d.trim())
        .find((d) => d.startsWith('frame-ancestors '))
      expect(directive).toBe(expected)
      expect(await res.text()).toContain('latch-api-url')
    }
    // An unknown app says nothing of origins: no page may frame it.
    const unknown = await fetch(`${modal.url}/?app=${'z'.repeat(25)}`, {
      headers: { referer: 'https://evil.example/', 'sec-fetch-dest': 'iframe' },
    })
    expect(unknown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(await unknown.text()).not.toContain('refused.js')
  })

  test('security: the served policy sends nothing out: connect-src is the page, the API and the configured relay only, images only from the page, data:, the app’s logo origin and its host origins', async () => {
    const logoApp = (
      await api.admin.createApp({
        name: 'Logo',
        allowedOrigins: ['https://shop.example.com'],
        appearance: { logoUrl: 'https://cdn.example.net/brand/logo.png?v=2' },
      })
    ).id
    const relayed = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
      walletConnectRelayUrl: 'wss://relay.example.org/ws?projectId=x',
    })
    try {
      const directives = async (query: string) => {
        const res = await fetch(`${relayed.url}/${query}`, { signal: AbortSignal.timeout(10_000) })
        await res.body?.cancel()
        return new Map(
          (res.headers.get('content-security-policy') ?? '').split(';').map((d) => {
            const [name = '', ...sources] = d.trim().split(/\s+/)
            return [name, sources] as const
          }),
        )
      }
      const known = await directives(`?app=${logoApp}`)
      expect(known.get('connect-src')).toEqual([
        "'self'",
        new URL(api.url).origin,
        'wss://relay.example.org',
      ])
      expect(known.get('img-src')).toEqual([
        "'self'",
        'data:',
        'https://cdn.example.net',
        'https://shop.example.com',
      ])
      // An unknown app: nothing but the page itself and data: for images.
      const unknown = await directives('?app=unknown-app-id-0000000000')
      expect(unknown.get('img-src')).toEqual(["'self'", 'data:'])
      expect(unknown.get('connect-src')).toEqual([
        "'self'",
        new URL(api.url).origin,
        'wss://relay.example.org',
      ])
      // No wildcard anywhere: no scheme source, no `*`.
      for (const policy of [known, unknown]) {
        for (const [name, sources] of policy) {
          for (const source of sources) {
            expect(source, `${name} ${source}`).not.toMatch(/^(https?|wss?):$|\*/)
          }
        }
      }
    } finally {
      await relayed.close()
    }
  })

  test('behavior: an origin just added is not refused from a stale answer: before refusing, the lookup waits for its refresh', async () => {
    const stale = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
      originsTtlMs: 100,
      originsStaleMs: 60_000,
    })
    try {
      const id = (
        await api.admin.createApp({ name: 'Growing', allowedOrigins: ['https://a.example'] })
      ).id
      const framed = () =>
        fetch(`${stale.url}/?app=${id}`, {
          headers: { referer: 'https://b.example/', 'sec-fetch-dest': 'iframe' },
          signal: AbortSignal.timeout(10_000),
        }).then((r) => r.text())
      expect(await framed()).toContain('refused.js')
      await api.admin.updateApp(id, { allowedOrigins: ['https://a.example', 'https://b.example'] })
      // Past the API's own 2 s cache and this server's 100 ms: the answer is stale, not gone.
      await new Promise((r) => setTimeout(r, 2500))
      const page = await framed()
      expect(page).not.toContain('refused.js')
      expect(page).toContain('latch-api-url')
    } finally {
      await stale.close()
    }
  })

  test('error: the page is served only at / and /index.html, with its policy', async () => {
    // Sent as written: fetch would normalise the dot segments away.
    const raw = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(modal.url)
        request({ host: url.hostname, port: url.port, path, timeout: 10_000 }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
          .on('error', reject)
          .end()
      })
    // Encoded slashes decode into paths that reach the same file by another name.
    for (const path of ['/%2findex.html', '/assets%2f..%2findex.html', '/%2F%2Findex.html?app=x']) {
      expect(await raw(path)).toBe(404)
    }
    expect(await raw(`/index.html?app=${appId}`)).toBe(200)
  })

  test('error: no app id, an unknown, malformed or hostile one: no page may frame it', async () => {
    for (const query of [
      '',
      '?app=',
      `?app=${'z'.repeat(25)}`,
      '?app=../../apps',
      `?app=${appId}%3B%20frame-ancestors%20*`,
      `?app=${appId.slice(1)}`,
    ]) {
      expect(await ancestors(modal, query)).toBe("frame-ancestors 'none'")
    }
  })

  test('error: an API that does not answer leaves the page unframeable', async () => {
    const closed = await startModalServer({
      apiUrl: 'http://127.0.0.1:9',
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
    })
    try {
      expect(await ancestors(closed, `?app=${appId}`)).toBe("frame-ancestors 'none'")
    } finally {
      await closed.close()
    }
  })

  test('behavior: answers are reused for a short while, then follow the app’s changes', async () => {
    const fresh = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
      originsTtlMs: 0,
    })
    try {
      const id = (
        await api.admin.createApp({ name: 'Moving', allowedOrigins: ['https://a.example'] })
      ).id
      expect(await ancestors(modal, `?app=${id}`)).toBe('frame-ancestors https://a.example')
      await api.admin.updateApp(id, { allowedOrigins: ['https://b.example'] })
      // The cache (2 s, then once more while it asks again) still answers the old list; a server
      // without a cache the new. Within the API's 2 s (and the one stale answer), the new.
      expect(await ancestors(modal, `?app=${id}`)).toBe('frame-ancestors https://a.example')
      expect(await ancestors(fresh, `?app=${id}`)).toBe('frame-ancestors https://b.example')
      await expect
        .poll(() => ancestors(modal, `?app=${id}`), { timeout: 10_000, interval: 250 })
        .toBe('frame-ancestors https://b.example')
    } finally {
      await fresh.close()
    }
  })

  test('behavior: past its time, a known app’s answer is served once more while the API is asked again in the background', async () => {
    const stale = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
      originsTtlMs: 1,
    })
    try {
      const id = (
        await api.admin.createApp({ name: 'Stale', allowedOrigins: ['https://a.example'] })
      ).id
      expect(await ancestors(stale, `?app=${id}`)).toBe('frame-ancestors https://a.example')
      await api.admin.updateApp(id, { allowedOrigins: ['https://b.example'] })
      await new Promise((resolve) => setTimeout(resolve, 10))
      // Not waited for: the old answer, and the refresh it started brings the new one.
      expect(await ancestors(stale, `?app=${id}`)).toBe('frame-ancestors https://a.example')
      await expect
        .poll(() => ancestors(stale, `?app=${id}`), { timeout: 10_000 })
        .toBe('frame-ancestors https://b.example')
    } finally {
      await stale.close()
    }
  })

  test('error: an answer older than its stale window is never served: the API is waited for', async () => {
    const bounded = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
      originsTtlMs: 1,
      originsStaleMs: 1,
    })
    try {
      const id = (
        await api.admin.createApp({ name: 'Bounded', allowedOrigins: ['https://a.example'] })
      ).id
      expect(await ancestors(bounded, `?app=${id}`)).toBe('frame-ancestors https://a.example')
      await api.admin.updateApp(id, { allowedOrigins: ['https://b.example'] })
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(await ancestors(bounded, `?app=${id}`)).toBe('frame-ancestors https://b.example')
    } finally {
      await bounded.close()
    }
  })
})

test('refusal: a wildcard, a path or a user name in an app’s origin list (a row older than registration’s check) never reaches frame-ancestors or the embedded configuration', async () => {
  const id = 'w'.repeat(25)
  const stub = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(
      JSON.stringify({
        id,
        allowedOrigins: [
          'https://*',
          '*',
          'https://*.shop.example',
          'https://shop.example/path',
          'https://user@shop.example',
          'https://%2A.shop.example',
          'https://shop.example',
        ],
      }),
    )
  })
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = stub.address() as AddressInfo
    const lookup = createAppLookup(`http://127.0.0.1:${port}`, () => {})
    const app = await lookup(id)
    expect(app.origins).toEqual(['https://shop.example'])
    expect(app.config?.allowedOrigins).toEqual(['https://shop.example'])
  } finally {
    await new Promise((resolve) => stub.close(resolve))
  }
})

describe('the app configuration in the page: the API’s answer, never more than the header allows', () => {
  let api: RunningServer
  let modal: ModalServer
  const page = async (server: ModalServer, query: string) => {
    const res = await fetch(`${server.url}/${query}`, { signal: AbortSignal.timeout(10_000) })
    expect(res.status).toBe(200)
    const csp = res.headers.get('content-security-policy') ?? ''
    const ancestors = csp
      .split(';')
      .map((d) => d.trim())
      .find((d) => d.startsWith('frame-ancestors '))
    return { html: await res.text(), ancestors }
  }
  /** The embedded block's app id and configuration, or null when there is none. */
  const embedded = (html: string) => {
    // As the HTML parser reads a script element: up to the first `</script`.
    const found = new RegExp(
      `<script type="([^"]*)" id="${EMBEDDED_CONFIG_ID}" data-app-id="([^"]*)">([\\s\\S]*?)</script`,
    ).exec(html)
    if (!found) return null
    return {
      type: found[1],
      appId: found[2],
      config: JSON.parse(found[3] ?? '') as Record<string, unknown>,
    }
  }

  beforeAll(async () => {
    api = await startServer({
      port: 0,
      host: '127.0.0.1',
      env: { DATABASE_URL: 'memory://', LATCH_SECRET: 'modal-server-test-secret-0123456789abcdef' },
      log: () => {},
      ...migratedMemory(),
    })
    modal = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
    })
  }, 60_000)
  afterAll(async () => {
    await modal?.close()
    await api?.close()
  })

  test('behavior: a known app’s page carries the API’s answer as a data block after the API URL', async () => {
    const app = await api.admin.createApp({
      name: 'Embedded',
      allowedOrigins: ['https://shop.example.com'],
    })
    const { html } = await page(modal, `?app=${app.id}`)
    const found = embedded(html)
    expect(found?.type).toBe('application/json')
    expect(found?.appId).toBe(app.id)
    const answer = await (await fetch(`${api.url}${API_PREFIX}/apps/${app.id}`)).json()
    expect(found?.config).toEqual(answer)
    // Before the early script (build.ts puts it before </head>), which reads it.
    expect(html.indexOf('latch-api-url')).toBeLessThan(html.indexOf(EMBEDDED_CONFIG_ID))
  })

  test('error: a hostile app name cannot end the block or run: `<`, `>` and `&` travel escaped', async () => {
    const name = '</script><script>alert(1)</script><!--&amp;$&'
    const app = await api.admin.createApp({ name, allowedOrigins: ['https://shop.example.com'] })
    const { html } = await page(modal, `?app=${app.id}`)
    expect(html).not.toContain('alert(1)</script>')
    expect(html).not.toContain('<!--')
    expect(embedded(html)?.config.name).toBe(name)
    // The only scripts are the data block: nothing executable was added.
    expect(inlineScriptHashes(html)).toEqual([])
  })

  test('error: no app id, an unknown or malformed one, or an API that does not answer: no block', async () => {
    for (const query of ['', '?app=', `?app=${'z'.repeat(25)}`, '?app=../../apps']) {
      expect(embedded((await page(modal, query)).html)).toBeNull()
    }
    const app = await api.admin.createApp({ name: 'Down', allowedOrigins: ['https://a.example'] })
    const closed = await startModalServer({
      apiUrl: 'http://127.0.0.1:9',
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
    })
    try {
      expect(embedded((await page(closed, `?app=${app.id}`)).html)).toBeNull()
    } finally {
      await closed.close()
    }
  })

  test('error: the block allows exactly the origins the header allows, stale or not, and no others', async () => {
    const app = await api.admin.createApp({
      name: 'Moving',
      // The same origin twice (as written, and with a trailing slash): the header and the block
      // carry it once.
      allowedOrigins: ['https://a.example', 'https://A.example/'],
    })
    const first = await page(modal, `?app=${app.id}`)
    expect(first.ancestors).toBe('frame-ancestors https://a.example')
    expect(embedded(first.html)?.config.allowedOrigins).toEqual(['https://a.example'])
    await api.admin.updateApp(app.id, { allowedOrigins: ['https://b.example'] })
    // Cached (30 s, like the header): the old list in both, never the union of old and new.
    const cached = await page(modal, `?app=${app.id}`)
    expect(cached.ancestors).toBe('frame-ancestors https://a.example')
    expect(embedded(cached.html)?.config.allowedOrigins).toEqual(['https://a.example'])
    const fresh = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'sdk'),
      originsTtlMs: 0,
    })
    try {
      const now = await page(fresh, `?app=${app.id}`)
      expect(now.ancestors).toBe('frame-ancestors https://b.example')
      expect(embedded(now.html)?.config.allowedOrigins).toEqual(['https://b.example'])
    } finally {
      await fresh.close()
    }
  })
})

describe('the first open: an inline script by hash, compressed static files', () => {
  let folder: string
  let modal: ModalServer
  const early = 'window.latchEarly = 1'
  const bundle = `export const landing = ${JSON.stringify('latch '.repeat(2000))}`
  const prebuilt = `${bundle}// as the build compressed it`

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'latch-modal-first-open-'))
    await mkdir(join(folder, 'dist/assets'), { recursive: true })
    await mkdir(join(folder, 'sdk'))
    await writeFile(
      join(folder, 'dist/index.html'),
      `<!doctype html><html><head><meta name="latch-api-url" content="" /><script>${early}</script><script type="module" src="/assets/index-big.js"></script></head><body></body></html>`,
    )
    await writeFile(join(folder, 'dist/assets/index-big.js'), bundle)
    await writeFile(join(folder, 'dist/assets/logo.png'), Buffer.alloc(4096, 1))
    await writeFile(join(folder, 'sdk/sdk.js'), bundle)
    // The build's compressed copies; a stale one beside sdk.js, which the build never makes.
    await writeFile(join(folder, 'dist/assets/index-big.js.br'), brotliCompressSync(prebuilt))
    await writeFile(join(folder, 'dist/assets/index-big.js.gz'), gzipSync(prebuilt))
    await writeFile(join(folder, 'sdk/sdk.js.br'), brotliCompressSync(prebuilt))
    await writeFile(join(folder, 'sdk/latch.js'), 'export {}')
    modal = await startModalServer({
      apiUrl: 'http://127.0.0.1:8787',
      distDir: join(folder, 'dist'),
      sdkDir: join(folder, 'sdk'),
    })
  })
  afterAll(async () => {
    await modal?.close()
    await rm(folder, { recursive: true, force: true })
  })

  /** A GET with this Accept-Encoding, the body as sent (not decoded). */
  const get = (path: string, acceptEncoding?: string) =>
    new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const url = new URL(modal.url)
      const headers = acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }
      request({ host: url.hostname, port: url.port, path, headers }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
      })
        .on('error', reject)
        .end()
    })

  test('behavior: the page’s inline script runs by its hash, and no other inline script', async () => {
    const res = await fetch(`${modal.url}/`)
    const scriptSrc = (res.headers.get('content-security-policy') ?? '')
      .split(';')
      .map((d) => d.trim())
      .find((d) => d.startsWith('script-src '))
    const hash = createHash('sha256').update(early).digest('base64')
    expect(scriptSrc).toBe(`script-src 'self' 'sha256-${hash}'`)
    expect(inlineScriptHashes('<script>a</script><script>b</script>')).toHaveLength(2)
    // Scripts with attributes are not inline code the page runs by hash.
    expect(inlineScriptHashes('<script type="module" src="/x.js"></script>')).toEqual([])
  })

  test('behavior: the hashed assets go out as the build compressed them; sdk.js compressed here', async () => {
    for (const [encoding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const asset = await get('/assets/index-big.js', encoding)
      expect(asset.headers['content-encoding']).toBe(encoding)
      expect(decode(asset.body).toString()).toBe(prebuilt)
    }
    // Not a hashed asset: a file beside it is not trusted to match.
    expect(brotliDecompressSync((await get('/sdk.js', 'br')).body).toString()).toBe(bundle)
  })

  test('behavior: brotli, else gzip, compressed here; the same bytes once decoded', async () => {
    await rm(join(folder, 'dist/assets/index-big.js.br'))
    await rm(join(folder, 'dist/assets/index-big.js.gz'))
    for (const path of ['/assets/index-big.js', '/sdk.js']) {
      const br = await get(path, 'gzip, deflate, br')
      expect(br.headers['content-encoding']).toBe('br')
      expect(br.headers.vary).toBe('accept-encoding')
      expect(Number(br.headers['content-length'])).toBe(br.body.length)
      expect(br.body.length).toBeLessThan(bundle.length / 10)
      expect(brotliDecompressSync(br.body).toString()).toBe(bundle)
      const gz = await get(path, 'gzip')
      expect(gz.headers['content-encoding']).toBe('gzip')
      expect(gunzipSync(gz.body).toString()).toBe(bundle)
    }
    // Answered again from the compressed copy: the same bytes.
    const again = await get('/assets/index-big.js', 'br')
    expect(again.body.equals((await get('/assets/index-big.js', 'br')).body)).toBe(true)
    expect(again.headers['cache-control']).toContain('immutable')
  })

  test('error: no encoding the browser refuses, and none where it does not pay', async () => {
    for (const accept of [undefined, '', 'identity', 'br;q=0, gzip;q=0', 'deflate', 'br;q=zero']) {
      const res = await get('/assets/index-big.js', accept)
      expect(res.headers['content-encoding']).toBeUndefined()
      expect(res.body.toString()).toBe(bundle)
    }
    expect((await get('/assets/index-big.js', 'br;q=0, gzip'))?.headers['content-encoding']).toBe(
      'gzip',
    )
    // Already compressed, or too small to gain anything.
    expect((await get('/assets/logo.png', 'br')).headers['content-encoding']).toBeUndefined()
    expect((await get('/latch.js', 'br')).headers['content-encoding']).toBeUndefined()
    expect(pickEncoding('*')).toBe('br')
    expect(pickEncoding('*;q=0')).toBeNull()
  })

  test('behavior: HEAD answers the headers of the compressed file without a body', async () => {
    const url = new URL(modal.url)
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      request(
        {
          host: url.hostname,
          port: url.port,
          path: '/assets/index-big.js',
          method: 'HEAD',
          headers: { 'accept-encoding': 'br' },
        },
        resolve,
      )
        .on('error', reject)
        .end()
    })
    res.resume()
    expect(res.headers['content-encoding']).toBe('br')
    expect(Number(res.headers['content-length'])).toBeGreaterThan(0)
  })
})
