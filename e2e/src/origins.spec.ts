import { HOST_ELEMENT_IDS, MODAL_CONNECT_TIMEOUT_MS, type User } from '@latch/shared'
import { expect, test } from 'vitest'
import {
  expectOk,
  expectRejected,
  latchCall,
  newEmail,
  screen,
  settle,
  signInByEmail,
} from './flows.ts'
import { type HostPage, WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

/** How `ready` stands after `ms`: 'ok', 'rejected: ...' or 'pending'. */
function readyState(hp: HostPage, ms: number): Promise<string> {
  return hp.page.evaluate(async (wait) => {
    const latch = window.latch
    if (!latch) return 'no window.latch'
    const timeout = new Promise<string>((r) => setTimeout(() => r('pending'), wait))
    return Promise.race([
      latch.ready.then(
        () => 'ok',
        (e: Error) => `rejected: ${e.message}`,
      ),
      timeout,
    ])
  }, ms)
}

async function expectNoConnection(hp: HostPage, hostOrigin: string) {
  // The modal says why, in the console, naming the refused origin.
  await expect
    .poll(
      () => hp.console.some((line) => line.startsWith('[error]') && line.includes(hostOrigin)),
      { timeout: WAIT_MS },
    )
    .toBe(true)
  // No sign-in is offered on that page, and the SDK never becomes ready.
  void latchCall(hp.page, 'login')
  await new Promise((r) => setTimeout(r, 1000))
  await expect(screen(hp.modal, 'LANDING').isVisible()).resolves.toBe(false)
  expect(await readyState(hp, 200)).not.toBe('ok')
}

/**
 * The browser itself refused to render the modal in this page (frame-ancestors): Chromium says
 * so in the page's console, the frame never holds the modal, and the SDK never becomes ready.
 */
async function expectBlockedFrame(hp: HostPage, allowed: string) {
  await expect
    .poll(
      () =>
        hp.console.some(
          (line) =>
            line.startsWith('[error]') &&
            line.includes(`'${h().modalUrl}/`) &&
            line.includes(`"frame-ancestors ${allowed}"`) &&
            line.includes('blocked'),
        ),
      { timeout: WAIT_MS },
    )
    .toBe(true)
  const frame = await hp.page.getByTestId(HOST_ELEMENT_IDS.frame).elementHandle()
  expect((await frame?.contentFrame())?.url().startsWith(h().modalUrl)).toBe(false)
  void latchCall(hp.page, 'login')
  await new Promise((r) => setTimeout(r, 1000))
  await expect(screen(hp.modal, 'LANDING').isVisible()).resolves.toBe(false)
  expect(await readyState(hp, 200)).not.toBe('ok')
}

/**
 * The page on an origin its app does not list: `ready` rejects with origin_not_allowed (the
 * refusal, well before the connection's timeout could have fired), naming the page's origin and the command that adds it; the page shows it;
 * a sign-in fails with the same error and no modal screen ever shows.
 */
async function expectOriginRefused(hp: HostPage, appId: string, pageOrigin: string) {
  const outcome = await hp.page.evaluate(async () => {
    while (!window.latch) await new Promise((r) => setTimeout(r, 20))
    const error = await window.latch.ready.then(
      () => null,
      (e: { code?: string; message?: string; details?: string }) => e,
    )
    return {
      // Since the page's navigation started.
      ms: performance.now(),
      code: error?.code,
      message: error?.message,
      details: error?.details,
    }
  })
  const command = `npm run latch -- apps update ${appId} --add-origin ${pageOrigin}`
  expect(outcome).toEqual({
    ms: expect.any(Number),
    code: 'origin_not_allowed',
    message: `This origin is not allowed for this app: ${pageOrigin}`,
    details: `Add it on the Latch server, then reload the page: ${command}`,
  })
  // Half the connection's timeout: the refusal's answer, on a machine however busy, not the
  // timeout's.
  expect(outcome.ms).toBeLessThan(MODAL_CONNECT_TIMEOUT_MS / 2)
  await expect
    .poll(() => hp.page.getByTestId('status').textContent(), { timeout: WAIT_MS })
    .toContain(
      `ready failed: origin_not_allowed: This origin is not allowed for this app: ${pageOrigin}. Add it on the Latch server, then reload the page: ${command}`,
    )
  expect(expectRejected(await latchCall(hp.page, 'login')).code).toBe('origin_not_allowed')
  await expect(screen(hp.modal, 'LANDING').isVisible()).resolves.toBe(false)
  await expect(hp.page.getByTestId(HOST_ELEMENT_IDS.dialog).isVisible()).resolves.toBe(false)
}

test('error: a host page on an origin the app does not list: ready rejects with origin_not_allowed naming the origin and the command that adds it; added, the origin works from the next page load', async () => {
  const app = await h().createApp({ allowedOrigins: ['https://shop.example.com'] })
  const hp = await h().open({ appId: app.id, waitReady: false })
  await expectOriginRefused(hp, app.id, h().hostUrl)
  await h().api.admin.updateApp(app.id, {
    allowedOrigins: ['https://shop.example.com', h().hostUrl],
  })
  // Once the API's and the modal server's caches (2 s each) have passed, the next load connects.
  await new Promise((r) => setTimeout(r, 2500))
  await hp.page.reload({ waitUntil: 'load' })
  expect(await readyState(hp, WAIT_MS)).toBe('ok')
  const email = newEmail('added-origin')
  const { user } = await signInByEmail(h(), hp, email)
  expect(user.email?.address).toBe(email)
})

test('error: the registered app on another origin of the same server: ready rejects with origin_not_allowed for that origin', async () => {
  const otherOrigin = `http://127.0.0.1:${h().host.port}`
  const hp = await h().open({ origin: otherOrigin, waitReady: false })
  await expectOriginRefused(hp, h().app.id, otherOrigin)
})

test('error: a page that sends no Referer to the frame: the browser refuses to frame the modal, as before', async () => {
  const app = await h().createApp({ allowedOrigins: ['https://shop.example.com'] })
  const hp = await h().open({ appId: app.id, waitReady: false })
  await hp.page.evaluate((url) => {
    for (const f of document.querySelectorAll('[data-testid="latch-frame"]')) f.remove()
    const frame = document.createElement('iframe')
    frame.referrerPolicy = 'no-referrer'
    frame.src = url
    frame.dataset.testid = 'latch-frame'
    document.body.append(frame)
  }, `${h().modalUrl}/?app=${app.id}#app=${app.id}`)
  await expectBlockedFrame(hp, 'https://shop.example.com')
})

test('error: a frame URL naming an allowing app in its query and another in its fragment gets no connection', async () => {
  // frame-ancestors follows the query's app; the modal checks its parent against the fragment's.
  const other = await h().createApp({ allowedOrigins: ['https://shop.example.com'] })
  const hp = await h().open({ appId: other.id, waitReady: false })
  const src = `${h().modalUrl}/?app=${h().app.id}#app=${other.id}`
  await hp.page.evaluate((url) => {
    for (const f of document.querySelectorAll('[data-testid="latch-frame"]')) f.remove()
    const frame = document.createElement('iframe')
    frame.src = url
    frame.dataset.testid = 'latch-frame'
    document.body.append(frame)
  }, src)
  await expectNoConnection(hp, h().hostUrl)
})

test('behavior: messages from a foreign window to the modal are ignored', async () => {
  const hp = await h().open()
  const { user } = await signInByEmail(h(), hp, newEmail('target'))

  // A cross-origin frame inside the host page, and a popup on the host's own origin.
  const foreignUrl = `http://127.0.0.1:${h().host.port}/foreign`
  await hp.page.evaluate((src) => {
    const frame = document.createElement('iframe')
    frame.src = src
    frame.id = 'foreign'
    document.body.append(frame)
    return new Promise((r) => frame.addEventListener('load', r, { once: true }))
  }, foreignUrl)
  const foreignFrame = hp.page.frames().find((f) => f.url() === foreignUrl)
  expect(foreignFrame).toBeDefined()
  const popupPromise = hp.context.waitForEvent('page', { timeout: WAIT_MS })
  await hp.page.evaluate(() => window.open('/foreign', 'foreign-popup'))
  const popup = await popupPromise
  await popup.waitForLoadState('load')

  const methods = ['logout', 'login', 'getAccessToken', 'getUser', 'link', 'close']
  const sentFromFrame = await foreignFrame?.evaluate((m) => window.attack?.(m) ?? 0, methods)
  const sentFromPopup = await popup.evaluate((m) => window.attack?.(m) ?? 0, methods)
  expect(sentFromFrame).toBeGreaterThanOrEqual(1)
  expect(sentFromPopup).toBeGreaterThanOrEqual(1)
  await new Promise((r) => setTimeout(r, 1000))

  // No answer of any kind, no dialog opened, and the session is untouched.
  expect(await foreignFrame?.evaluate(() => window.replies)).toEqual([])
  expect(await popup.evaluate(() => window.replies)).toEqual([])
  await expect(hp.page.getByTestId(HOST_ELEMENT_IDS.dialog).isVisible()).resolves.toBe(false)
  const still = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))
  expect(still?.id).toBe(user.id)
  expect(expectOk(await settle(latchCall<string | null>(hp.page, 'getAccessToken')))).toEqual(
    expect.any(String),
  )
})
