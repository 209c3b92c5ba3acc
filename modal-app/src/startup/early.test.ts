import {
  API_PREFIX,
  APP_ID_HEADER,
  CLIENT_HEADER,
  CLIENT_NAME,
  createApiClient,
  isLatchError,
  type ServerAppConfig,
} from '@latch/shared'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { resetStore, store } from '../store.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { APP_ID, serverConfig } from '../test/fixtures.ts'
import {
  appConfigUrl,
  type ClientConstants,
  EARLY_CONFIG_KEY,
  EMBEDDED_CONFIG_ID,
  startEarlyConfig,
  takeEarlyConfig,
} from './early.ts'
import { start } from './startup.ts'

/** The values build.ts hands the inline script. */
const CLIENT: ClientConstants = {
  apiPrefix: API_PREFIX,
  appIdHeader: APP_ID_HEADER,
  clientHeader: CLIENT_HEADER,
  clientName: CLIENT_NAME,
}

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  vi.restoreAllMocks()
  api.requests.length = 0
})

/** A modal frame's window framed by `parent`, with the real fetch. */
function frame(
  parent: string,
  hash = `#app=${APP_ID}`,
  apiUrl: string | null = api.url,
  /** A configuration the modal server embedded, for the app named. */
  embedded?: { appId: string; config: ServerAppConfig },
) {
  const posted: unknown[] = []
  const doc = document.implementation.createHTMLDocument('modal')
  if (apiUrl) {
    const meta = doc.createElement('meta')
    meta.name = 'latch-api-url'
    meta.content = apiUrl
    doc.head.append(meta)
  }
  if (embedded) {
    const block = doc.createElement('script')
    block.type = 'application/json'
    block.id = EMBEDDED_CONFIG_ID
    block.setAttribute('data-app-id', embedded.appId)
    block.textContent = JSON.stringify(embedded.config)
    doc.head.append(block)
  }
  const win = {
    parent: { postMessage: (message: unknown) => posted.push(message) },
    location: { hash, ancestorOrigins: [parent] },
    document: doc,
    fetch: (input: RequestInfo | URL, init?: RequestInit) => fetch(input, init),
  }
  return { win: win as unknown as Window, posted }
}

describe('the early configuration request', () => {
  test('behavior: the inline script asks once, as the API client would; startup takes the answer over', async () => {
    resetStore()
    api.on(`GET /apps/${APP_ID}`, { body: serverConfig(), delay: 50 })
    const { win, posted } = frame('http://localhost:5173')
    startEarlyConfig(win, CLIENT)
    const started = start({ win })
    // The configuration allowed the parent: the handshake begins.
    await vi.waitFor(() => expect(posted.length).toBeGreaterThan(0))
    const calls = api.calls(`GET /apps/${APP_ID}`)
    expect(calls).toHaveLength(1)
    expect(calls[0]?.headers[APP_ID_HEADER]).toBe(APP_ID)
    expect(calls[0]?.headers[CLIENT_HEADER]).toBe(CLIENT_NAME)
    expect(calls[0]?.headers.authorization).toBeUndefined()
    started.destroy()
  })

  test('behavior: the API’s refusal of the early request shows the general error view', async () => {
    resetStore()
    api.on(`GET /apps/${APP_ID}`, apiError(404, 'missing_or_invalid_latch_app_id', 'Missing'))
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const { win, posted } = frame('http://localhost:5173')
    startEarlyConfig(win, CLIENT)
    await expect(start({ win }).connected).resolves.toBe(false)
    expect(posted).toHaveLength(0)
    expect(store.getState().status).toBe('error')
    expect(store.getState().error?.code).toBe('missing_or_invalid_latch_app_id')
    expect(api.calls(`GET /apps/${APP_ID}`)).toHaveLength(1)
  })

  test('error: an answer left for another URL is not taken: an origin it allows stays refused', async () => {
    resetStore()
    api.on(`GET /apps/${APP_ID}`, { body: serverConfig() })
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const { win, posted } = frame('https://evil.test')
    const forged: ServerAppConfig = serverConfig({ allowedOrigins: ['https://evil.test'] })
    ;(win as unknown as Record<string, unknown>)[EARLY_CONFIG_KEY] = {
      url: appConfigUrl(api.url, API_PREFIX, 'another-app'),
      response: Promise.resolve(new Response(JSON.stringify(forged))),
    }
    await expect(start({ win }).connected).resolves.toBe(false)
    expect(posted).toHaveLength(0)
    // Startup asked the API itself, for its own app.
    expect(api.calls(`GET /apps/${APP_ID}`)).toHaveLength(1)
  })

  test('behavior: the configuration the server embedded is taken: no request, the handshake begins', async () => {
    resetStore()
    api.on(`GET /apps/${APP_ID}`, { body: serverConfig() })
    const { win, posted } = frame('http://localhost:5173', undefined, api.url, {
      appId: APP_ID,
      config: serverConfig({ name: 'Embedded' }),
    })
    startEarlyConfig(win, CLIENT)
    const started = start({ win })
    await vi.waitFor(() => expect(posted.length).toBeGreaterThan(0))
    expect(api.requests).toHaveLength(0)
    started.destroy()
  })

  test('error: the embedded configuration’s allowed origins bind: a parent it does not name is refused', async () => {
    resetStore()
    // The API would allow it; the page's configuration (the header's list) does not.
    api.on(`GET /apps/${APP_ID}`, {
      body: serverConfig({ allowedOrigins: ['https://evil.test'] }),
    })
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const { win, posted } = frame('https://evil.test', undefined, api.url, {
      appId: APP_ID,
      config: serverConfig({ allowedOrigins: ['http://localhost:5173'] }),
    })
    startEarlyConfig(win, CLIENT)
    await expect(start({ win }).connected).resolves.toBe(false)
    expect(posted).toHaveLength(0)
    expect(api.requests).toHaveLength(0)
  })

  test('error: a configuration embedded for another app is not taken: an origin it allows stays refused', async () => {
    resetStore()
    api.on(`GET /apps/${APP_ID}`, { body: serverConfig() })
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const { win, posted } = frame('https://evil.test', undefined, api.url, {
      appId: 'another-app',
      config: serverConfig({ allowedOrigins: ['https://evil.test'] }),
    })
    startEarlyConfig(win, CLIENT)
    await expect(start({ win }).connected).resolves.toBe(false)
    expect(posted).toHaveLength(0)
    // The early script asked the API for the fragment's app instead.
    expect(api.calls(`GET /apps/${APP_ID}`)).toHaveLength(1)
  })

  test('error: without an app id or an API URL nothing is asked and nothing is left', async () => {
    for (const { win } of [
      frame('http://localhost:5173', ''),
      frame('http://localhost:5173', '#app='),
      frame('http://localhost:5173', `#app=${APP_ID}`, null),
    ]) {
      startEarlyConfig(win, CLIENT)
      expect((win as unknown as Record<string, unknown>)[EARLY_CONFIG_KEY]).toBeUndefined()
    }
    expect(api.requests).toHaveLength(0)
  })

  test('error: the answer is taken once; a second taker asks for itself', async () => {
    api.on(`GET /apps/${APP_ID}`, { body: serverConfig() })
    const { win } = frame('http://localhost:5173')
    startEarlyConfig(win, CLIENT)
    const url = appConfigUrl(api.url, API_PREFIX, APP_ID)
    const first = takeEarlyConfig(win, url)
    expect(first).not.toBeNull()
    expect(takeEarlyConfig(win, url)).toBeNull()
    expect((await first)?.status).toBe(200)
  })

  test('error: an early request that never answers times out like any other', async () => {
    const client = createApiClient({ baseUrl: api.url, appId: APP_ID, timeoutMs: 30 })
    const never = new Promise<Response>(() => {})
    const failure = await client
      .request('/apps/x', undefined, { auth: false, started: never })
      .catch((e: unknown) => e)
    expect(isLatchError(failure) && failure.code).toBe('client_request_timeout')
    expect(api.requests).toHaveLength(0)
  })

  test('error: an early request that failed on the network is an internal error', async () => {
    const client = createApiClient({ baseUrl: api.url, appId: APP_ID })
    const failure = await client
      .request('/apps/x', undefined, { started: Promise.reject(new TypeError('offline')) })
      .catch((e: unknown) => e)
    expect(isLatchError(failure) && failure.code).toBe('internal_error')
  })
})
