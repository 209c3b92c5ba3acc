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
      allowedOrigins: ['https://shop.example', 'https://*.shop.example'],
    })
  ).id
  const { api, frame } = served(dir)
  // createApi mounts the same routes (over wallet-frame/dist): its page carries the same CSP.
  for (const handler of [frame, api]) {
    const res = await handler.request(`/apps/${appId}/embedded-wallets`)
    if (res.status === 503) continue // wallet-frame/dist not built on this machine
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors https://modal.example https://shop.example https://*.shop.example",
    )
    expect(await res.text()).toContain('content="https://modal.example"')
  }
  // Whatever an app's origin list holds, nothing else reaches the header.
  expect(
    walletFrameCsp('https://m.example', ['https://a.example; script-src *', 'javascript:1']),
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
