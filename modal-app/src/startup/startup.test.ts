import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { resetStore, store } from '../store.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { APP_ID, serverConfig } from '../test/fixtures.ts'
import { start } from './startup.ts'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  vi.restoreAllMocks()
  api.requests.length = 0
})

interface Posted {
  message: unknown
  options: unknown
}

/** A frame window whose parent records what is posted to it. */
function frame(
  parentOriginValue: string,
  apiUrl: string | null = api.url,
  hash = `#app=${APP_ID}`,
) {
  const posted: Posted[] = []
  const parent = {
    postMessage: (message: unknown, options: unknown) => posted.push({ message, options }),
  }
  const doc = document.implementation.createHTMLDocument('modal')
  if (apiUrl) {
    const meta = doc.createElement('meta')
    meta.name = 'latch-api-url'
    meta.content = apiUrl
    doc.head.append(meta)
  }
  const win = {
    parent,
    location: { hash, ancestorOrigins: [parentOriginValue] },
    document: doc,
  }
  return { win: win as unknown as Window, posted }
}

describe('startup', () => {
  test('behavior: an allowed host origin gets a penpal handshake', async () => {
    resetStore()
    api.on(`GET /apps/${APP_ID}`, { body: serverConfig() })
    const { win, posted } = frame('http://localhost:5173')
    const started = start({ win })
    await vi.waitFor(() => expect(posted.length).toBeGreaterThan(0))
    // penpal's SYN carries no data and goes to '*'; everything after it is bound to the origin.
    expect(posted[0]?.message).toMatchObject({ namespace: 'penpal', type: 'SYN' })
    const call = api.calls(`GET /apps/${APP_ID}`)[0]
    expect(call?.headers['latch-app-id']).toBe(APP_ID)
    started.destroy()
  })

  test('behavior: the first render waits for the host: not on the configuration alone, at once when the modal will not connect', async () => {
    resetStore()
    api.on(`GET /apps/${APP_ID}`, { body: serverConfig() })
    // An allowed host that has not answered the handshake (nor sent init): nothing to render yet.
    const allowed = frame('http://localhost:5173')
    const waiting = start({ win: allowed.win })
    let rendered = false
    void waiting.renderable.then(() => {
      rendered = true
    })
    await vi.waitFor(() => expect(allowed.posted.length).toBeGreaterThan(0))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(rendered).toBe(false)
    waiting.destroy()
    // A host the app does not allow: the modal renders (its error view) without waiting.
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const refused = start({ win: frame('https://evil.test').win })
    await expect(refused.connected).resolves.toBe(false)
    await expect(refused.renderable).resolves.toBeUndefined()
  })

  test('error: a host origin the app did not register gets a console error and no connection', async () => {
    resetStore()
    api.on(`GET /apps/${APP_ID}`, { body: serverConfig() })
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const { win, posted } = frame('https://evil.test')
    const started = start({ win })
    await expect(started.connected).resolves.toBe(false)
    expect(posted).toHaveLength(0)
    expect(String(error.mock.calls[0]?.[0])).toMatch(
      /https:\/\/evil\.test is not an allowed origin of app/,
    )
  })

  test('error: an unknown app shows the general error view and does not connect', async () => {
    resetStore()
    api.on(`GET /apps/${APP_ID}`, apiError(404, 'missing_or_invalid_latch_app_id', 'Missing'))
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const { win, posted } = frame('http://localhost:5173')
    await expect(start({ win }).connected).resolves.toBe(false)
    expect(posted).toHaveLength(0)
    expect(store.getState().status).toBe('error')
  })

  test('error: no app id in the fragment or no API URL', async () => {
    resetStore()
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    await expect(
      start({ win: frame('http://localhost:5173', api.url, '').win }).connected,
    ).resolves.toBe(false)
    await expect(start({ win: frame('http://localhost:5173', null).win }).connected).resolves.toBe(
      false,
    )
    expect(error).toHaveBeenCalledTimes(2)
    expect(api.requests).toHaveLength(0)
  })
})
