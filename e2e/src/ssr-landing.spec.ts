/**
 * The landing rendered by the modal server (modal-app/ssr.ts): it paints from the HTML, the host
 * shows it at login() before the modal's JavaScript has run, what the visitor does meanwhile is
 * carried out once, after hydration; a hydration React cannot complete and a language the
 * server does not render both leave a landing that renders and works client-side.
 */
import { HOST_ELEMENT_IDS, type LoginResult, SUCCESS_CLOSE_DELAY_MS } from '@latch/shared'
import type { BrowserContext, Route } from 'playwright-core'
import { describe, expect, test } from 'vitest'
import { expectModalAccessible, modalFrame } from './axe.ts'
import {
  enterCode,
  expectOk,
  latchCall,
  newEmail,
  runOutPause,
  settle,
  submitEmail,
  visit,
  waitEmailCode,
} from './flows.ts'
import { WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness({ modalSsr: true })

/** The modal's entry script, held until `release()`: the modal page without its JavaScript. */
async function holdModalScript(context: BrowserContext) {
  let release = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  await context.route(`${h().modalUrl}/assets/index-*.js`, async (route: Route) => {
    await released
    await route.continue()
  })
  return () => release()
}

/** Whether the frame's root holds the server's landing, and whether React has taken it over. */
async function rootState(frame: Awaited<ReturnType<typeof modalFrame>>) {
  return frame.evaluate(() => {
    const root = document.getElementById('root')
    const modal = root?.firstElementChild
    return {
      serverRendered: root?.hasAttribute('data-latch-ssr') ?? false,
      hydrated: modal ? Object.keys(modal).some((k) => k.startsWith('__reactFiber')) : false,
    }
  })
}

describe('the server-rendered landing', () => {
  test('behavior: login() shows the painted landing before the JavaScript; text typed and Enter pressed then are carried out once, after hydration', async () => {
    const email = newEmail('ssr')
    let release = () => {}
    const hp = await h().open({
      waitReady: false,
      // The frame's load waits for the held script; the page's own does not need to.
      waitUntil: 'domcontentloaded',
      prepare: async (context) => {
        release = await holdModalScript(context)
      },
    })
    const frame = hp.page.getByTestId(HOST_ELEMENT_IDS.frame)
    // The page told the host its landing is painted: the frame takes the landing's height.
    await expect
      .poll(() => frame.evaluate((f) => (f as HTMLIFrameElement).style.height), {
        timeout: WAIT_MS,
      })
      .not.toBe('620px')
    const modal = await modalFrame(hp.page)
    expect(await rootState(modal)).toEqual({ serverRendered: true, hydrated: false })

    const pending = latchCall<LoginResult>(hp.page, 'login')
    const dialog = hp.page.getByTestId(HOST_ELEMENT_IDS.dialog)
    await expect.poll(() => dialog.isVisible(), { timeout: WAIT_MS }).toBe(true)
    await hp.modal.getByTestId('screen-LANDING').waitFor({ state: 'visible' })
    await expectModalAccessible(hp.page, 'the server-rendered landing before its JavaScript')

    const input = hp.modal.getByTestId('email-input')
    await input.click()
    await input.pressSequentially(email)
    await input.press('Enter')
    await input.press('Enter')
    // Nothing left the page: no navigation, no code, React not there yet.
    expect(await rootState(modal)).toEqual({ serverRendered: true, hydrated: false })
    expect(h().smtp.messages.filter((m) => m.to === email)).toEqual([])

    release()
    const code = await waitEmailCode(h(), email)
    await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
    expect((await rootState(modal)).hydrated).toBe(true)
    // Carried out once: one code mail for the two Enters.
    await hp.page.waitForTimeout(500)
    expect(h().smtp.messages.filter((m) => m.to === email)).toHaveLength(1)
    await enterCode(hp.modal, code)
    await runOutPause(
      hp.page,
      hp.modal.getByTestId('code-success'),
      SUCCESS_CLOSE_DELAY_MS,
      pending,
    )
    const result = expectOk(await settle(pending, 'login()'))
    expect(result.user.email?.address).toBe(email)
    expect(hp.errors).toEqual([])
  })

  test('behavior: a click on a method before hydration is carried out after it', async () => {
    let release = () => {}
    const hp = await h().open({
      waitReady: false,
      // The frame's load waits for the held script; the page's own does not need to.
      waitUntil: 'domcontentloaded',
      prepare: async (context) => {
        release = await holdModalScript(context)
      },
    })
    const frame = hp.page.getByTestId(HOST_ELEMENT_IDS.frame)
    await expect
      .poll(() => frame.evaluate((f) => (f as HTMLIFrameElement).style.height), {
        timeout: WAIT_MS,
      })
      .not.toBe('620px')
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await hp.modal.getByTestId('screen-LANDING').waitFor({ state: 'visible' })
    // The close button: a click the page holds, then the modal closes the sign-in.
    await hp.modal.getByTestId('close-button').click()
    release()
    const outcome = await settle(pending, 'login()')
    expect(outcome.ok).toBe(false)
    const dialog = hp.page.getByTestId(HOST_ELEMENT_IDS.dialog)
    await expect.poll(() => dialog.isVisible(), { timeout: WAIT_MS }).toBe(false)
  })

  test('error: a landing React cannot hydrate renders client-side, and signs in', async () => {
    const email = newEmail('ssr-mismatch')
    let release = () => {}
    const hp = await h().open({
      waitReady: false,
      waitUntil: 'domcontentloaded',
      prepare: async (context) => {
        release = await holdModalScript(context)
      },
    })
    const modal = await modalFrame(hp.page)
    await hp.modal.getByTestId('screen-LANDING').waitFor({ state: 'attached' })
    // The server's markup altered before the JavaScript: React's render no longer matches it.
    await modal.evaluate(() => {
      const heading = document.querySelector('h1')
      if (heading) heading.textContent = 'Something else'
    })
    release()
    await hp.page.evaluate(() => window.latch?.ready)
    expect((await rootState(modal)).serverRendered).toBe(true)
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    expect(await hp.modal.getByRole('heading', { name: 'Log in or sign up' }).count()).toBe(1)
    expect(hp.console.some((line) => line.includes('the landing rendered client-side'))).toBe(true)
    await submitEmail(hp.modal, email)
    await enterCode(hp.modal, await waitEmailCode(h(), email))
    await runOutPause(
      hp.page,
      hp.modal.getByTestId('code-success'),
      SUCCESS_CLOSE_DELAY_MS,
      pending,
    )
    expect(expectOk(await settle(pending, 'login()')).user.email?.address).toBe(email)
  })

  test('behavior: a page whose browser speaks another language than the server rendered in renders the landing afresh in its language, stops holding the visitor’s keys and clicks, and signs in', async () => {
    const email = newEmail('ssr-german')
    let release = () => {}
    const hp = await h().open({
      waitReady: false,
      waitUntil: 'domcontentloaded',
      contextOptions: { locale: 'de-DE' },
      prepare: async (context) => {
        release = await holdModalScript(context)
        // The server reads English from the page's request; the page's own languages say German.
        const page = (url: URL) => url.origin === h().modalUrl && url.pathname === '/'
        await context.route(page, (route) =>
          route.continue({ headers: { ...route.request().headers(), 'accept-language': 'en' } }),
        )
      },
    })
    const frame = hp.page.getByTestId(HOST_ELEMENT_IDS.frame)
    await expect
      .poll(() => frame.evaluate((f) => (f as HTMLIFrameElement).style.height), {
        timeout: WAIT_MS,
      })
      .not.toBe('620px')
    const pending = latchCall<LoginResult>(hp.page, 'login')
    const input = hp.modal.getByTestId('email-input')
    await input.click()
    await input.pressSequentially(email)
    await input.press('Enter')
    release()
    // Rendered afresh in German (the field empty again); the Enter held before is carried out
    // with what the new field holds: nothing, so no code goes out.
    await expect
      .poll(() => hp.modal.getByTestId('email-submit').textContent(), { timeout: WAIT_MS })
      .not.toBe('Submit')
    // The page handles clicks and keys itself again: the sign-in works.
    await submitEmail(hp.modal, email)
    await enterCode(hp.modal, await waitEmailCode(h(), email))
    await runOutPause(
      hp.page,
      hp.modal.getByTestId('code-success'),
      SUCCESS_CLOSE_DELAY_MS,
      pending,
    )
    expect(expectOk(await settle(pending, 'login()')).user.email?.address).toBe(email)
  })

  test('refusal: a browser asking for another language gets the landing rendered client-side, in its language', async () => {
    const hp = await h().open({ contextOptions: { locale: 'de-DE' } })
    const modal = await modalFrame(hp.page)
    expect((await rootState(modal)).serverRendered).toBe(false)
    void latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    expect(await hp.modal.getByTestId('email-submit').textContent()).not.toBe('Submit')
  })
})
