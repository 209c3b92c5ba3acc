import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { type ApiDouble, startApiDouble } from './test/api-double.ts'
import { APP_ID, serverConfig } from './test/fixtures.ts'

/** What index.html shows until the first render. */
const STATIC_LOADING = '<div class="latch-screen latch-center" data-static-loading=""></div>'

let api: ApiDouble
let answer: () => void = () => {}
beforeAll(async () => {
  api = await startApiDouble()
  const released = new Promise<void>((resolve) => {
    answer = resolve
  })
  api.on(`GET /apps/${APP_ID}`, async () => {
    await released
    return { body: serverConfig() }
  })
})
afterAll(() => api.close())

test('behavior: the first render waits until the modal knows it will not connect (here: not framed); the static loading view stays until then', async () => {
  document.head.innerHTML = `<meta name="latch-api-url" content="${api.url}" />`
  document.body.innerHTML = `<div id="root">${STATIC_LOADING}</div>`
  window.location.hash = `#app=${APP_ID}`
  // Not framed here, so the modal will not connect: the error is expected.
  vi.spyOn(console, 'error').mockImplementation(() => {})
  await import('./main.tsx')
  await vi.waitFor(() => expect(api.calls(`GET /apps/${APP_ID}`)).toHaveLength(1))
  // The configuration is on its way (the API saw the request, many tasks after a render would
  // have run): the renderer has not replaced the page's own markup. Framed by an allowed host, the
  // render would wait for its init (startup.test.ts).
  expect(document.getElementById('root')?.innerHTML).toBe(STATIC_LOADING)
  answer()
  await vi.waitFor(() =>
    expect(document.querySelector('[data-testid="latch-modal"]')).not.toBeNull(),
  )
  expect(document.querySelector('[data-static-loading]')).toBeNull()
})
