import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isLatchError, LatchError, toApiErrorBody } from '@latch/shared'
import { Hono } from 'hono'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createApi, statusOf } from '../api.ts'
import type { HonoEnv } from '../http.ts'
import { startTestServer, type TestServer } from '../testing/test-server.ts'
import { walletFrameCsp, walletFrameRoutes } from './frame.ts'

let latch: { server: TestServer; close(): Promise<void> }
let dir = ''
beforeAll(async () => {
  latch = await startTestServer('pglite', 'memory://')
  dir = await mkdtemp(join(tmpdir(), 'latch-wallet-frame-dist-'))
})
afterAll(async () => {
  await latch?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** The routes over a given build folder, with the API's error answers. */
function served(distDir: string, modalOrigin: string | null = 'https://modal.example') {
  const deps = { ...latch.server.deps, config: { ...latch.server.deps.config, modalOrigin } }
  const frame = new Hono<HonoEnv>()
  frame.onError((e, c) => {
    const err = isLatchError(e) ? e : LatchError.of('internal_error')
    return c.json(toApiErrorBody(err), statusOf(err))
  })
  frame.route('/', walletFrameRoutes(deps, { distDir }))
  return { api: createApi(deps), frame }
}

test('refusal: not built, the page answers a 503 that says how to build it, never a 500', async () => {
  const appId = (await latch.server.newApp()).id
  const { frame } = served(join(dir, 'missing'))
  const res = await frame.request(`/apps/${appId}/embedded-wallets`)
  expect(res.status).toBe(503)
  expect(await res.text()).toBe(
    'The wallet frame is not built: run `npm run build -w wallet-frame` on the server.',
  )
  expect(res.headers.get('cache-control')).toBe('no-store')
})

test('refusal: without LATCH_MODAL_ORIGIN no page may embed the frame: 503 with the reason', async () => {
  const appId = (await latch.server.newApp()).id
  const { api } = served(dir, null)
  const res = await api.request(`/apps/${appId}/embedded-wallets`)
  expect(res.status).toBe(503)
  expect(await res.json()).toMatchObject({
    error: {
      message: 'The wallet frame needs LATCH_MODAL_ORIGIN: without it no page may embed the frame',
    },
  })
})

test('behavior: a built page gets the modal origin written in, and a CSP whose frame-ancestors are the modal and the app’s host origins only', async () => {
  await mkdir(join(dir, 'assets'), { recursive: true })
  await writeFile(
    join(dir, 'index.html'),
    '<meta name="latch-modal-origin" content="%LATCH_MODAL_ORIGIN%"><script type="module" src="/embedded-wallets/assets/a-1.js"></script>',
  )
  await writeFile(join(dir, 'assets', 'a-1.js'), 'export {}')
  const appId = (
    await latch.server.newApp({
      allowedOrigins: ['https://shop.example', 'https://www.shop.example'],
    })
  ).id
  const { api, frame } = served(dir)
  // createApi mounts the same routes (over wallet-frame/dist): its page carries the same CSP.
  for (const handler of [frame, api]) {
    const res = await handler.request(`/apps/${appId}/embedded-wallets`)
    if (res.status === 503) continue // wallet-frame/dist not built on this machine
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors https://modal.example https://shop.example https://www.shop.example",
    )
    expect(await res.text()).toContain('content="https://modal.example"')
  }
  // Whatever an app's origin list holds, nothing else reaches the header: not CSP syntax, and
  // not a wildcard, a path or a user name from a row written before registration refused them
  // (`https://*` would let any https page frame the wallet).
  expect(
    walletFrameCsp('https://m.example', [
      'https://a.example; script-src *',
      'javascript:1',
      'https://*',
      '*',
      'https://*.a.example',
      'https://a.example/path',
      'https://u@a.example',
    ]),
  ).toBe(
    "default-src 'none'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors https://m.example",
  )
  const asset = await frame.request('/embedded-wallets/assets/a-1.js')
  expect(asset.status).toBe(200)
  expect(await asset.text()).toBe('export {}')
  for (const path of ['..%2Findex.html', 'index.html', 'a-2.js', 'a-1.js%00']) {
    const res = await frame.request(`/embedded-wallets/assets/${path}`)
    expect(res.status).toBe(404)
  }
})

test('behavior: the key export page at /apps/{appId}/embedded-wallets/export carries the modal origin, the frame’s CSP with its own stylesheet, no-referrer and no-store', async () => {
  const exportDir = await mkdtemp(join(tmpdir(), 'latch-export-dist-'))
  await writeFile(
    join(exportDir, 'export.html'),
    '<meta name="latch-modal-origin" content="%LATCH_MODAL_ORIGIN%"><p>export</p>',
  )
  const appId = (await latch.server.newApp({ allowedOrigins: ['https://shop.example'] })).id
  const { frame } = served(exportDir)
  const address = `0x${'ab'.repeat(20)}`
  const res = await frame.request(
    `/apps/${appId}/embedded-wallets/export?address=${address}&width=360&background=%23101010&foreground=%23fff&accent=%23676FFF`,
  )
  expect(res.status).toBe(200)
  expect(res.headers.get('content-security-policy')).toBe(
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors https://modal.example https://shop.example",
  )
  expect(res.headers.get('referrer-policy')).toBe('no-referrer')
  expect(res.headers.get('cache-control')).toBe('no-store')
  const html = await res.text()
  expect(html).toContain('content="https://modal.example"')
  expect(html).toContain('<p>export</p>')
  await rm(exportDir, { recursive: true, force: true })
})

test('refusal: the export page refuses an access token in the URL, a bad address, width or colour with a 400 that says which, and an unknown app; never a 500', async () => {
  const appId = (await latch.server.newApp()).id
  const { frame } = served(dir)
  const address = `0x${'ab'.repeat(20)}`
  const cases: [string, string][] = [
    [
      `address=${address}&token=eyJhbGciOi`,
      'The access token is not accepted in the URL: the modal passes it after the handshake',
    ],
    [
      `address=${address}&accessToken=x`,
      'The access token is not accepted in the URL: the modal passes it after the handshake',
    ],
    ['', 'address must be a 0x address of 40 hex digits'],
    [`address=${address.slice(0, 41)}`, 'address must be a 0x address of 40 hex digits'],
    [`address=${address}zz`, 'address must be a 0x address of 40 hex digits'],
    [`address=${address}&width=100`, 'width must be a whole number from 240 to 640'],
    [`address=${address}&width=3e2`, 'width must be a whole number from 240 to 640'],
    [`address=${address}&width=9999`, 'width must be a whole number from 240 to 640'],
    [`address=${address}&background=red`, 'background must be a colour as #rgb or #rrggbb'],
    [
      `address=${address}&accent=%23fff%3Bdisplay:none`,
      'accent must be a colour as #rgb or #rrggbb',
    ],
    [
      `address=${address}&locale=xx`,
      'locale must be one of en, es, fr, de, pt-BR, ja, zh-CN, ko, tr, ar',
    ],
  ]
  for (const [query, message] of cases) {
    const res = await frame.request(`/apps/${appId}/embedded-wallets/export?${query}`)
    expect(res.status, query).toBe(400)
    expect((await res.json()) as unknown, query).toMatchObject({ error: { message } })
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
  }
  const unknown = await frame.request(
    `/apps/${'x'.repeat(25)}/embedded-wallets/export?address=${address}`,
  )
  expect(unknown.status).toBe(400)
  expect(await unknown.json()).toMatchObject({
    error: { message: 'Missing or invalid Latch app ID' },
  })
})
