/**
 * The demo host page as a visitor uses it: its settings form switches the modal's language and
 * its code section to phone (applied on the next load), SMS sign-in works from it, and the page
 * fits a 390 px phone, the long recipient address of `npm start`'s chain line included.
 */
import { HOST_ELEMENT_IDS } from '@latch/shared'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { expectAccessible } from './axe.ts'
import { latchCall, newPhone, screen, signInBySms } from './flows.ts'
import { type HostPage, waitReady } from './harness.ts'
import { type HostServer, startHostServer } from './host-server.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

/** The page as `npm start` serves it: with a chain line naming the recipient in full. */
let demoHost: HostServer
beforeAll(async () => {
  demoHost = await startHostServer({
    modalUrl: h().modalUrl,
    appId: h().app.id,
    demo: {
      chain: {
        id: 1,
        name: 'Ethereum',
        funding: '1 ETH',
        recipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      },
    },
  })
})
afterAll(() => demoHost?.close())

/** Applies the page's settings form, as a visitor does, and waits for the page it loads. */
async function applySettings(hp: HostPage, settings: { lang?: string; code?: string }) {
  if (settings.lang) await hp.page.getByLabel('Language').selectOption(settings.lang)
  if (settings.code) await hp.page.getByLabel('Sign in by code').selectOption(settings.code)
  await Promise.all([
    hp.page.waitForEvent('load'),
    hp.page.getByRole('button', { name: 'Apply' }).click(),
  ])
  await waitReady(hp)
}

test('behavior: the page fits a 390 px phone, dialog and inline, signed out and with the sign-in open', async () => {
  const app = await h().createApp({ allowedOrigins: [demoHost.url] })
  for (const path of ['/', '/inline']) {
    const hp = await h().open({
      origin: demoHost.url,
      path,
      contextOptions: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
      appId: app.id,
    })
    const width = () => hp.page.evaluate(() => document.documentElement.scrollWidth)
    expect([path, await width()]).toEqual([path, 390])
    void latchCall(hp.page, 'login')
    await screen(hp.modal, 'LANDING').waitFor({ state: 'visible' })
    expect([path, await width()]).toEqual([path, 390])
    await expectAccessible(hp.page.mainFrame(), `the demo page (${path}) at 390 px`)
  }
})

test('behavior: the language switch shows the modal in the chosen language on the next load', async () => {
  const hp = await h().open()
  await applySettings(hp, { lang: 'de' })
  expect(new URL(hp.page.url()).searchParams.get('lang')).toBe('de')
  expect(await hp.page.getByLabel('Language').inputValue()).toBe('de')
  void latchCall(hp.page, 'login')
  await screen(hp.modal, 'LANDING')
    .getByRole('heading', { name: 'Anmelden oder registrieren' })
    .waitFor({ state: 'visible' })
  expect(await hp.modal.locator('html').getAttribute('lang')).toBe('de')
})

test('behavior: with phone codes chosen, an app with e-mail and SMS signs in by SMS from the demo page', async () => {
  const app = await h().createApp({ loginMethods: ['email', 'sms'] })
  const hp = await h().open({ appId: app.id })
  // The modal shows one code section: e-mail, until the page asks for phone.
  void latchCall(hp.page, 'login')
  await hp.modal.getByTestId('email-input').waitFor({ state: 'visible' })
  await hp.page.keyboard.press('Escape')
  await hp.page.getByTestId(HOST_ELEMENT_IDS.dialog).waitFor({ state: 'hidden' })
  await applySettings(hp, { code: 'sms' })
  expect(new URL(hp.page.url()).searchParams.get('appId')).toBe(app.id)
  const phone = newPhone()
  const result = await signInBySms(h(), hp, phone)
  expect(result.user.linkedAccounts.map((a) => a.type)).toEqual(['phone'])
  await expect(hp.page.getByTestId(HOST_ELEMENT_IDS.dialog).isVisible()).resolves.toBe(false)
})
