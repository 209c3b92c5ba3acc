/**
 * axe (WCAG 2.1 A and AA) over every screen the sign-in reaches, in the light and dark themes,
 * with custom accents and a custom background; the demo host page's own run; reduced motion.
 * The default colours stay the fills and borders; small text takes shades derived from them.
 */
import { ERRORS, type ThemeSetting } from '@latch/shared'
import { expect, test } from 'vitest'
import { expectAccessible, expectModalAccessible, modalFrame } from './axe.ts'
import {
  enterCode,
  latchCall,
  newEmail,
  openSection,
  screen,
  submitEmail,
  visit,
  waitEmailCode,
  wrongCode,
} from './flows.ts'
import type { HostPage } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

async function openEmailSection(hp: HostPage): Promise<void> {
  await openSection(hp.modal, 'email')
  await hp.modal.getByTestId('email-input').waitFor({ state: 'visible' })
}

const APPEARANCES: { label: string; theme: ThemeSetting; accentColor: string | null }[] = [
  { label: 'light, default accent', theme: 'light', accentColor: null },
  { label: 'dark, default accent', theme: 'dark', accentColor: null },
  { label: 'light, a pale gold accent', theme: 'light', accentColor: '#FFD700' },
  { label: 'dark, a deep navy accent', theme: 'dark', accentColor: '#0B3D91' },
  { label: 'a cream background, an orange accent', theme: '#F5F0E6', accentColor: '#E4572E' },
]

for (const look of APPEARANCES) {
  test(`behavior: every screen of a sign-in passes axe: ${look.label}`, async () => {
    const invited = newEmail('a11y-invited')
    const app = await h().createApp({
      loginMethods: ['email', 'wallet', 'google', 'github'],
      appearance: { theme: look.theme, accentColor: look.accentColor },
      legal: {
        termsAndConditionsUrl: 'https://example.com/terms',
        privacyPolicyUrl: 'https://example.com/privacy',
      },
      allowlist: { enabled: true, entries: [invited] },
    })
    const hp = await h().open({ appId: app.id })
    void latchCall(hp.page, 'login')
    // The wallet section first and open (the default), then the e-mail section.
    await visit(hp, 'LANDING')
    await hp.modal.getByTestId('wallet-section-body').waitFor({ state: 'visible' })
    await openEmailSection(hp)
    await expectModalAccessible(hp.page, `the landing's e-mail section (${look.label})`)

    // Off the allowlist: the rejection screen; its button leads back.
    await submitEmail(hp.modal, newEmail('a11y-stranger'))
    await visit(hp, 'ALLOWLIST_REJECTION_SCREEN')
    await hp.modal.getByTestId('allowlist-cta').click()
    await visit(hp, 'LANDING')
    await openEmailSection(hp)

    await submitEmail(hp.modal, invited)
    const code = await waitEmailCode(h(), invited)
    await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
    await enterCode(hp.modal, wrongCode(code))
    await hp.modal.getByText(ERRORS.invalid_verification_code.message).waitFor()
    await expectModalAccessible(hp.page, `the code screen with an error (${look.label})`)
    await enterCode(hp.modal, code)
    await hp.modal.getByText('Success!').waitFor()
    await expectModalAccessible(hp.page, `the code screen after Success! (${look.label})`)
  })
}

test('behavior: the demo host page passes axe, closed and with the dialog open, and has landmarks', async () => {
  const hp = await h().open()
  await expectAccessible(hp.page, 'the demo page')
  const landmarks = await hp.page.evaluate(() => ({
    lang: document.documentElement.lang,
    main: document.querySelectorAll('main').length,
    banner: document.querySelectorAll('body > header').length,
  }))
  expect(landmarks).toEqual({ lang: 'en', main: 1, banner: 1 })
  await hp.page.getByTestId('sign-in').click()
  await visit(hp, 'LANDING')
  await expectAccessible(hp.page, 'the demo page with the dialog open')

  const inline = await h().open({ path: '/inline' })
  await expectAccessible(inline.page, 'the inline demo page')
  await inline.page.getByTestId('sign-in').click()
  await visit(inline, 'LANDING')
  await expectAccessible(inline.page, 'the inline demo page with the modal shown')
})

test('behavior: with reduced motion the spinner does not spin (it fades); otherwise it spins', async () => {
  const hp = await h().open()
  const spinnerAnimation = async () => {
    const frame = await modalFrame(hp.page)
    return frame.evaluate(() => {
      const probe = document.createElement('div')
      probe.className = 'latch-spinner'
      document.body.append(probe)
      const name = getComputedStyle(probe).animationName
      probe.remove()
      return name
    })
  }
  expect(await spinnerAnimation()).toBe('latch-spin')
  await hp.page.emulateMedia({ reducedMotion: 'reduce' })
  expect(await spinnerAnimation()).toBe('latch-pulse')
  // The dialog's screens still pass with it.
  void latchCall(hp.page, 'login')
  await visit(hp, 'LANDING')
  await expect(screen(hp.modal, 'LANDING').isVisible()).resolves.toBe(true)
})
