import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type HostServer, INLINE_PARENT_ID, startHostServer } from './host-server.ts'

const APP_ID = 'abcdefghijklmnopqrstuvwxy'
const OTHER_ID = 'ABCDEFGHIJKLMNOPQRSTUVWXY'
const MODAL = 'http://127.0.0.1:9'

let host: HostServer

beforeAll(async () => {
  host = await startHostServer({ modalUrl: `${MODAL}/ignored/path`, appId: APP_ID })
})
afterAll(async () => {
  await host.close()
})

const get = (path: string, init?: RequestInit) =>
  fetch(`http://127.0.0.1:${host.port}${path}`, init)

describe('demo host page server', () => {
  test('behavior: the page carries the one-line script with the modal origin and app id', async () => {
    expect(host.url).toBe(`http://localhost:${host.port}`)
    const res = await get('/')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const html = await res.text()
    expect(html).toContain(`<script src="${MODAL}/sdk.js" data-app-id="${APP_ID}"></script>`)
    expect(html).toContain('data-latch-login')
    expect(html).not.toContain('%')
  })

  test('behavior: /plain is an integrator page: the one-line script and a sign-in button, nothing of the demo', async () => {
    const html = await (await get(`/plain?appId=${OTHER_ID}`)).text()
    expect(html).toContain(`<script src="${MODAL}/sdk.js" data-app-id="${OTHER_ID}"></script>`)
    expect(html).toContain('data-latch-login')
    expect(html).not.toContain('%')
    expect(html).not.toContain('demo.js')
    expect(html).not.toContain('data-testid="demo-settings"')
  })

  test('param: ?appId= picks another app for one load', async () => {
    const html = await (await get(`/?appId=${OTHER_ID}`)).text()
    expect(html).toContain(`data-app-id="${OTHER_ID}"`)
  })

  test('param: the settings form: ?lang= a shipped language and ?code=sms reach the SDK as its configuration, on both entries; anything else is ignored', async () => {
    const config = (html: string) => {
      const attr = /data-config="([^"]*)"/.exec(html)?.[1]
      return attr ? JSON.parse(attr.replaceAll('&quot;', '"')) : null
    }
    const plain = await (await get('/')).text()
    expect(config(plain)).toBeNull()
    expect(plain).toContain('<option value="" selected>Browser’s</option>')
    const both = await (await get(`/?appId=${OTHER_ID}&lang=de&code=sms`)).text()
    expect(config(both)).toEqual({
      locale: 'de',
      loginMethods: ['wallet', 'sms', 'google', 'twitter', 'discord', 'github', 'apple', 'passkey'],
    })
    expect(both).toContain('<option value="de" lang="de" selected>Deutsch</option>')
    expect(both).toContain('<option value="sms" selected>Phone (SMS)</option>')
    // The form keeps the page's app for the next load.
    expect(both).toContain(`<input type="hidden" name="appId" value="${OTHER_ID}" />`)
    const inline = await (await get('/inline?lang=ja')).text()
    expect(inline).toContain('"locale":"ja"')
    expect(inline).toContain(`"inParentNodeId":"${INLINE_PARENT_ID}"`)
    // An unknown language or code, or markup, changes nothing.
    const hostile = await (
      await get(`/?lang=${encodeURIComponent('"><script>x</script>')}&code=email`)
    ).text()
    expect(config(hostile)).toBeNull()
    expect(hostile).not.toContain('<script>x')
  })

  test('behavior: /inline renders into a parent element through the ESM entry', async () => {
    const html = await (await get('/inline')).text()
    expect(html).toContain(`<div id="${INLINE_PARENT_ID}"`)
    expect(html).toContain(`import { createLatch } from "${MODAL}/latch.js"`)
    expect(html).toContain(`"inParentNodeId":"${INLINE_PARENT_ID}"`)
    expect(html).toContain(`"modalUrl":"${MODAL}"`)
  })

  test('error: an app id that is not 25 safe characters is refused, not injected', async () => {
    const res = await get(`/?appId=${encodeURIComponent('"><script>alert(1)</script>xxxxx')}`)
    expect(res.status).toBe(400)
    expect(await res.text()).not.toContain('<script>')
    expect((await get('/?appId=short')).status).toBe(400)
  })

  test('error: unknown paths answer 404 and other methods 405', async () => {
    expect((await get('/nope')).status).toBe(404)
    expect((await get('/', { method: 'POST', body: 'x' })).status).toBe(405)
  })

  test('behavior: the demo script and the foreign page are served', async () => {
    const js = await get('/demo.js')
    expect(js.headers.get('content-type')).toContain('text/javascript')
    expect(await js.text()).toContain('window.latch')
    expect(await (await get('/foreign')).text()).toContain('window.attack')
  })

  test('behavior: npm start\'s settings reach the page as inert JSON; a "<" cannot end its block', async () => {
    expect(await (await get('/')).text()).not.toContain('demo-config')
    const recipient = '</script><script>alert(1)</script>'
    const demo = await startHostServer({
      modalUrl: MODAL,
      appId: APP_ID,
      demo: { chain: { id: 1, name: 'Ethereum', funding: '1 ETH', recipient } },
    })
    try {
      const html = await (await fetch(`http://127.0.0.1:${demo.port}/`)).text()
      const block = /<script type="application\/json" id="demo-config">(.*?)<\/script>/.exec(html)
      expect(block?.[1]).not.toContain('<')
      expect(JSON.parse(block?.[1] ?? '')).toEqual({
        chain: { id: 1, name: 'Ethereum', funding: '1 ETH', recipient },
      })
      expect(html).not.toContain('%')
    } finally {
      await demo.close()
    }
  })
})
