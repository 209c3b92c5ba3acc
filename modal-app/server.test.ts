// @vitest-environment node
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type RunningServer, startServer } from '../server/src/index.ts'
import { type ModalServer, startModalServer } from './server.ts'

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
  expect(csp).toContain("connect-src 'self' http://127.0.0.1:8787")
  expect(csp).toContain("object-src 'none'")
  const html = await res.text()
  expect(html).toContain(
    '<meta name="latch-api-url" content="http://127.0.0.1:8787/%22%3E%3Cscript%3E" />',
  )
  expect(html).not.toContain('<script>')
})

test('behavior: hashed assets are immutable with their content types', async () => {
  const js = await fetch(`${server.url}/assets/index-abc.js`)
  expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
  expect(js.headers.get('cache-control')).toContain('immutable')
  const css = await fetch(`${server.url}/assets/index-abc.css`)
  expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
  expect(css.headers.get('x-content-type-options')).toBe('nosniff')
})

test('behavior: /sdk.js and /latch.js from the host SDK build, loadable cross-origin', async () => {
  for (const name of ['sdk.js', 'latch.js']) {
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
      // The long-lived cache (30 s) still answers the old list; a server without a cache the new.
      expect(await ancestors(modal, `?app=${id}`)).toBe('frame-ancestors https://a.example')
      expect(await ancestors(fresh, `?app=${id}`)).toBe('frame-ancestors https://b.example')
    } finally {
      await fresh.close()
    }
  })
})
