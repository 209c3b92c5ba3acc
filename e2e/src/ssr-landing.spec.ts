/**
 * The landing rendered by the modal server (modal-app/ssr.ts): it paints from the HTML, the host
 * shows it at login() before the modal's JavaScript has run, what the visitor does meanwhile is
 * carried out once, after hydration; it is in the visitor's language; a hydration React cannot
 * complete and a page that cannot hydrate both leave a landing that renders and works
 * client-side, with what the visitor typed and did before kept.
 */
import { HOST_ELEMENT_IDS, type LoginResult, MODAL_FULL_HEIGHT_PX } from '@latch/shared'
import type { BrowserContext, Route } from 'playwright-core'
import { describe, expect, test } from 'vitest'
import { expectAccessible, expectModalAccessible, modalFrame } from './axe.ts'
import {
  latchCall,
  modalRootState,
  newEmail,
  settle,
  signedInByCode,
  submitEmail,
  visit,
  waitEmailCode,
} from './flows.ts'
import { type HostPage, WAIT_MS } from './harness.ts'
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

/**
 * What the modal's frame holds (whether React took the landing over, and what `read` reads in
 * it) and the page's last console lines, for the message of a wait that failed.
 */
async function modalReport<T>(hp: HostPage, read: () => T): Promise<string> {
  const modal = hp.page.frames().find((f) => f.url().startsWith(h().modalUrl))
  const state = await modal
    ?.evaluate(read)
    .then(async (page) => ({ url: modal.url(), ...(await modalRootState(modal)), ...page }))
    .catch((e: unknown) => String(e))
  return `the modal's frame: ${JSON.stringify(state ?? 'none')}; the page logged: ${
    hp.console.slice(-10).join(' | ') || 'nothing'
  }`
}

/**
 * Waits until the host took the height of the landing the page painted (the page's first
 * message): the frame leaves the full height it starts at. When it does not, the error says what
 * the modal's frame holds, and what the page logged.
 */
async function paintedLanding(hp: HostPage): Promise<void> {
  const frame = hp.page.getByTestId(HOST_ELEMENT_IDS.frame)
  try {
    await expect
      .poll(() => frame.evaluate((f) => (f as HTMLIFrameElement).style.height), {
        timeout: WAIT_MS,
      })
      .not.toBe(`${MODAL_FULL_HEIGHT_PX}px`)
  } catch (error) {
    const report = await modalReport(hp, () => {
      const root = document.getElementById('root')
      return {
        readyState: document.readyState,
        landingHeight: root?.firstElementChild?.getBoundingClientRect().height ?? null,
        body: document.body?.textContent?.slice(0, 120) ?? null,
      }
    })
    throw new Error(`the host did not take the painted landing's height; ${report}`, {
      cause: error,
    })
  }
}

/**
 * The code mailed for what the visitor typed and submitted before hydration. When none comes,
 * the error says what the modal shows (its screen, the field's text, an error, whether React
 * took the landing over) and what the page logged: a held action that was not carried out.
 */
async function heldCode(hp: HostPage, email: string): Promise<string> {
  try {
    return await waitEmailCode(h(), email)
  } catch (error) {
    const report = await modalReport(hp, () => ({
      screens: [...document.querySelectorAll('[data-testid^="screen-"]')].map((e) =>
        e.getAttribute('data-testid'),
      ),
      field: (document.querySelector('[data-testid="email-input"]') as HTMLInputElement | null)
        ?.value,
      alert: document.querySelector('[role="alert"]')?.textContent ?? null,
    }))
    throw new Error(`no code for the held submit; ${report}`, { cause: error })
  }
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
    // The page told the host its landing is painted: the frame takes the landing's height.
    await paintedLanding(hp)
    const modal = await modalFrame(hp.page)
    expect(await modalRootState(modal)).toEqual({ serverRendered: true, hydrated: false })

    const pending = latchCall<LoginResult>(hp.page, 'login')
    const dialog = hp.page.getByTestId(HOST_ELEMENT_IDS.dialog)
    await expect.poll(() => dialog.isVisible(), { timeout: WAIT_MS }).toBe(true)
    await hp.modal.getByTestId('screen-LANDING').waitFor({ state: 'visible' })
    await expectModalAccessible(hp.page, 'the server-rendered landing before its JavaScript')
    // The host's dialog and frame carry the modal's name from the first paint, not from the
    // connection: a screen reader announces the dialog's title as it opens.
    const named = await modal.evaluate(
      () => document.querySelector('[data-testid="latch-modal"]')?.getAttribute('aria-label') ?? '',
    )
    expect(named).toMatch(/^Log in to ./)
    expect(await hp.page.getByRole('dialog', { name: named, exact: true }).count()).toBe(1)
    expect(await hp.page.getByTestId(HOST_ELEMENT_IDS.frame).getAttribute('title')).toBe(named)
    await expectAccessible(hp.page, 'the host page with the painted landing before its JavaScript')
    expect(await modalRootState(modal)).toEqual({ serverRendered: true, hydrated: false })

    const input = hp.modal.getByTestId('email-input')
    await input.click()
    await input.pressSequentially(email)
    await input.press('Enter')
    await input.press('Enter')
    // Nothing left the page: no navigation, no code, React not there yet.
    expect(await modalRootState(modal)).toEqual({ serverRendered: true, hydrated: false })
    expect(h().smtp.messages.filter((m) => m.to === email)).toEqual([])

    release()
    const code = await heldCode(hp, email)
    await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
    expect((await modalRootState(modal)).hydrated).toBe(true)
    // Carried out once: one code mail for the two Enters.
    await hp.page.waitForTimeout(500)
    expect(h().smtp.messages.filter((m) => m.to === email)).toHaveLength(1)
    const result = await signedInByCode(hp, code, pending)
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
    await paintedLanding(hp)
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

  test.each([
    [
      'a landing React cannot hydrate (its markup altered)',
      () => {
        const heading = document.querySelector('h1')
        if (heading) heading.textContent = 'Something else'
      },
    ],
    [
      'a landing the page cannot hydrate (the configuration it was rendered with unreadable)',
      () => document.getElementById('root')?.setAttribute('data-latch-ssr', '{'),
    ],
  ])(
    'error: %s renders client-side with the text typed before put back, and the Enter pressed then carried out once',
    async (_, breakIt) => {
      const email = newEmail('ssr-fallback')
      let release = () => {}
      const hp = await h().open({
        waitReady: false,
        waitUntil: 'domcontentloaded',
        prepare: async (context) => {
          release = await holdModalScript(context)
        },
      })
      // The host took the painted landing's height (else the error says what the frame holds).
      await paintedLanding(hp)
      const modal = await modalFrame(hp.page)
      const pending = latchCall<LoginResult>(hp.page, 'login')
      await hp.modal.getByTestId('screen-LANDING').waitFor({ state: 'visible' })
      const input = hp.modal.getByTestId('email-input')
      await input.click()
      await input.pressSequentially(email)
      await input.press('Enter')
      await input.press('Enter')
      await modal.evaluate(breakIt)
      const typedIn = await input.elementHandle()
      release()
      // Sent from the field rendered afresh, which holds the text again: one code for two Enters.
      const code = await heldCode(hp, email)
      await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
      expect(await typedIn?.evaluate((el) => el.isConnected)).toBe(false)
      await hp.page.waitForTimeout(500)
      expect(h().smtp.messages.filter((m) => m.to === email)).toHaveLength(1)
      expect((await signedInByCode(hp, code, pending)).user.email?.address).toBe(email)
    },
  )

  test('error: a landing React cannot hydrate, nothing typed: rendered client-side, and signs in', async () => {
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
    expect((await modalRootState(modal)).serverRendered).toBe(true)
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    expect(await hp.modal.getByRole('heading', { name: 'Log in or sign up' }).count()).toBe(1)
    expect(hp.console.some((line) => line.includes('the landing rendered client-side'))).toBe(true)
    await submitEmail(hp.modal, email)
    expect(
      (await signedInByCode(hp, await waitEmailCode(h(), email), pending)).user.email?.address,
    ).toBe(email)
  })

  test('behavior: a page whose browser speaks another language than the server rendered in hydrates in the server’s, then shows its own; the text typed and the Enter pressed before are kept and carried out once', async () => {
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
    await paintedLanding(hp)
    const modal = await modalFrame(hp.page)
    const pending = latchCall<LoginResult>(hp.page, 'login')
    const input = hp.modal.getByTestId('email-input')
    expect(await hp.modal.getByTestId('email-submit').textContent()).toBe('Submit')
    await input.click()
    await input.pressSequentially(email)
    await input.press('Enter')
    release()
    const code = await heldCode(hp, email)
    await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
    // Hydrated (no fresh render), then in German once the host's init ran.
    expect(hp.console.some((line) => line.includes('the landing rendered client-side'))).toBe(false)
    expect(await modal.evaluate(() => document.documentElement.lang)).toBe('de')
    expect(h().smtp.messages.filter((m) => m.to === email)).toHaveLength(1)
    expect((await signedInByCode(hp, code, pending)).user.email?.address).toBe(email)
  })

  test('behavior: an Arabic visitor’s landing paints from the HTML in Arabic, right to left, named, and hydrates in it; what the visitor does while its table loads is held and carried out once', async () => {
    const email = newEmail('ssr-arabic')
    let release = () => {}
    // The Arabic table, held too: the page's JavaScript runs and waits for it.
    let tableAsked = false
    let releaseTable = () => {}
    const table = new Promise<void>((resolve) => {
      releaseTable = resolve
    })
    const hp = await h().open({
      waitReady: false,
      waitUntil: 'domcontentloaded',
      contextOptions: { locale: 'ar' },
      prepare: async (context) => {
        release = await holdModalScript(context)
        await context.route(`${h().modalUrl}/assets/ar-*.js`, async (route: Route) => {
          tableAsked = true
          await table
          await route.continue()
        })
      },
    })
    const modal = await modalFrame(hp.page)
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await hp.modal.getByTestId('screen-LANDING').waitFor({ state: 'visible' })
    const painted = () =>
      modal.evaluate(() => ({
        lang: document.documentElement.lang,
        dir: document.documentElement.dir,
        submit: document.querySelector('[data-testid="email-submit"]')?.textContent,
      }))
    expect(await modalRootState(modal)).toEqual({ serverRendered: true, hydrated: false })
    expect(await painted()).toEqual({ lang: 'ar', dir: 'rtl', submit: 'إرسال' })
    await expectModalAccessible(hp.page, 'the Arabic landing before its JavaScript')
    expect(
      await hp.page.getByRole('dialog', { name: /^سجّل الدخول إلى / }).count(),
      'the host dialog named in Arabic from the first paint',
    ).toBe(1)
    release()
    // The page's JavaScript ran and asked for its table: typed and pressed meanwhile.
    await expect.poll(() => tableAsked, { timeout: WAIT_MS }).toBe(true)
    const input = hp.modal.getByTestId('email-input')
    await input.click()
    await input.pressSequentially(email)
    await input.press('Enter')
    expect(await modalRootState(modal)).toEqual({ serverRendered: true, hydrated: false })
    releaseTable()
    // Its table loaded, React takes the markup over as it is, and the Enter held sends once.
    const code = await heldCode(hp, email)
    await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
    expect((await modalRootState(modal)).hydrated).toBe(true)
    expect(await modal.evaluate(() => document.documentElement.dir)).toBe('rtl')
    expect(hp.console.some((line) => line.includes('the landing rendered client-side'))).toBe(false)
    await hp.page.waitForTimeout(500)
    expect(h().smtp.messages.filter((m) => m.to === email)).toHaveLength(1)
    expect((await signedInByCode(hp, code, pending)).user.email?.address).toBe(email)
    expect(hp.errors).toEqual([])
  })

  /**
   * A German visitor's page whose server rendered English: React hydrates the landing at once,
   * and the host's init, then its login(), wait for the German table, held until `releaseTable`.
   * Meanwhile the landing is shown (the host's login() showed the painted one) and React handles
   * what the visitor does, before any flow reached the modal.
   */
  async function landingBeforeLogin(appId: string) {
    let releaseTable = () => {}
    const table = new Promise<void>((resolve) => {
      releaseTable = resolve
    })
    const hp = await h().open({
      appId,
      waitReady: false,
      waitUntil: 'domcontentloaded',
      contextOptions: { locale: 'de-DE' },
      prepare: async (context) => {
        const page = (url: URL) => url.origin === h().modalUrl && url.pathname === '/'
        await context.route(page, (route) =>
          route.continue({ headers: { ...route.request().headers(), 'accept-language': 'en' } }),
        )
        await context.route(`${h().modalUrl}/assets/de-*.js`, async (route: Route) => {
          await table
          await route.continue()
        })
      },
    })
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await hp.modal.getByTestId('screen-LANDING').waitFor({ state: 'visible' })
    const modal = await modalFrame(hp.page)
    await expect
      .poll(async () => (await modalRootState(modal)).hydrated, { timeout: WAIT_MS })
      .toBe(true)
    // The flow has not started: the wallet list asks for wallets only once it has.
    expect(await hp.modal.getByTestId('wallet-section-body').textContent()).toBe(
      'Looking for wallets…',
    )
    /**
     * Lets the host's init and login() reach the modal, and waits until the sign-in flow has
     * started: the modal names the host's dialog for it, in German.
     */
    const loginArrived = async () => {
      releaseTable()
      const frame = hp.page.getByTestId(HOST_ELEMENT_IDS.frame)
      await expect
        .poll(() => frame.getAttribute('title'), { timeout: WAIT_MS })
        .toMatch(/^Bei .+ anmelden$/)
    }
    return { hp, modal, pending, loginArrived, releaseTable }
  }

  test("behavior: what the visitor does on the hydrated landing before the host's login() reaches the modal is kept: the section opened, the address typed with its field focused, 'Use a passkey'; the modal's close there ends that login()", async () => {
    const app = await h().createApp({ loginMethods: ['email', 'wallet', 'passkey'] })

    const typing = await landingBeforeLogin(app.id)
    const toggle = typing.hp.modal.getByTestId('section-email-toggle')
    // Listed second (wallet login first, the server's default): opened by the visitor.
    expect(await toggle.getAttribute('aria-expanded')).toBe('false')
    await toggle.click()
    const email = newEmail('before-login')
    const input = typing.hp.modal.getByTestId('email-input')
    await input.click()
    await input.pressSequentially(email)
    await typing.loginArrived()
    expect(await toggle.getAttribute('aria-expanded')).toBe('true')
    expect(await input.inputValue()).toBe(email)
    expect(
      await typing.modal.evaluate(() => document.activeElement?.getAttribute('data-testid')),
    ).toBe('email-input')
    await input.press('Enter')
    const code = await waitEmailCode(h(), email)
    await visit(typing.hp, 'AWAITING_PASSWORDLESS_CODE')
    const result = await signedInByCode(typing.hp, code, typing.pending)
    expect(result.user.email?.address).toBe(email)

    const passkey = await landingBeforeLogin(app.id)
    await passkey.hp.modal.getByTestId('landing-passkey').click()
    await passkey.hp.modal.getByTestId('screen-PASSKEY_SCREEN').waitFor({ state: 'visible' })
    await passkey.loginArrived()
    await visit(passkey.hp, 'PASSKEY_SCREEN')
    expect(await passkey.hp.modal.getByTestId('screen-LANDING').count()).toBe(0)

    const closing = await landingBeforeLogin(app.id)
    await closing.hp.modal.getByTestId('close-button').click()
    closing.releaseTable()
    const outcome = await settle(closing.pending, 'login()')
    expect(outcome.ok ? null : outcome.error).toMatchObject({ code: 'login_exited' })
    const dialog = closing.hp.page.getByTestId(HOST_ELEMENT_IDS.dialog)
    await expect.poll(() => dialog.isVisible(), { timeout: WAIT_MS }).toBe(false)
    for (const hp of [typing.hp, passkey.hp, closing.hp]) expect(hp.errors).toEqual([])
  })
})
