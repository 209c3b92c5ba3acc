/**
 * Languages: the browser's languages pick the modal's (no host `locale` here), the landing is
 * painted in it from the first frame, held to axe in every shipped locale and right to left in
 * Arabic; with passkeys on, the passkey screen speaks Japanese; a Japanese visitor signs in by
 * an e-mail code mailed in Japanese and creates a wallet in Japanese.
 */
import type { LoginResult, WalletAccount } from '@latch/shared'
import { LOCALES } from '@latch/shared/i18n'
import { TABLES } from '@latch/shared/i18n/all'
import { expect, test } from 'vitest'
import { axeViolations, formatViolations, modalFrame } from './axe.ts'
import {
  enterCode,
  expectOk,
  latchCall,
  newEmail,
  screen,
  settle,
  submitEmail,
  visit,
  waitEmailCode,
} from './flows.ts'
import { useHarness } from './use-harness.ts'
import {
  enterPasscode,
  expectInAppWallet,
  passcodeBoxes,
  SCREENS,
  walletApp,
  walletCall,
} from './wallet-flows.ts'

const h = useHarness()

/** The browser language each shipped locale is opened with (a region, as browsers send). */
const BROWSER_LANGUAGE: Record<(typeof LOCALES)[number], string> = {
  en: 'en-US',
  es: 'es-ES',
  fr: 'fr-FR',
  de: 'de-DE',
  'pt-BR': 'pt-BR',
  ja: 'ja-JP',
  'zh-CN': 'zh-CN',
  ko: 'ko-KR',
  tr: 'tr-TR',
  ar: 'ar-EG',
}

// One test per locale: each has its own time bound, and a failure names its language.
for (const locale of LOCALES) {
  test(`behavior: the landing in ${locale}: its texts, lang and direction, axe-clean${locale === 'ar' ? '; mirrored' : ''}`, async () => {
    const hp = await h().open({ contextOptions: { locale: BROWSER_LANGUAGE[locale] } })
    const pending = latchCall<LoginResult>(hp.page, 'login')
    // visit() holds the landing to axe in this language.
    await visit(hp, 'LANDING')
    const landing = screen(hp.modal, 'LANDING')
    const m = TABLES[locale].m
    expect(await landing.getByRole('heading', { level: 1 }).textContent(), locale).toBe(m.title)
    expect(await landing.getByTestId('email-helper').textContent(), locale).toBe(m.helpEmail)
    expect(await landing.getByTestId('email-submit').textContent(), locale).toBe(m.submit)
    const frame = await modalFrame(hp.page)
    const marks = await frame.evaluate(() => ({
      lang: document.documentElement.lang,
      dir: document.documentElement.dir,
      direction: getComputedStyle(document.querySelector('.latch-landing') as Element).direction,
    }))
    const rtl = locale === 'ar'
    expect(marks, locale).toEqual({
      lang: locale,
      // The server-rendered page states both in every language, English included.
      dir: rtl ? 'rtl' : 'ltr',
      direction: rtl ? 'rtl' : 'ltr',
    })
    // The host page's dialog and frame carry the modal's own name, in the same language.
    const named = m.dialog.replace('{app}', h().app.name)
    expect(await hp.page.getByTestId('latch-dialog').getAttribute('aria-label'), locale).toBe(named)
    expect(await hp.page.getByTestId('latch-frame').getAttribute('title'), locale).toBe(named)
    if (rtl) {
      // Mirrored: the Submit button sits left of the e-mail field, the code boxes stay in order.
      const input = await landing.getByTestId('email-input').boundingBox()
      const submit = await landing.getByTestId('email-submit').boundingBox()
      expect(submit && input && submit.x < input.x).toBe(true)
    }
    // The login stays pending; closing the context settles it (latchCall never throws).
    await hp.context.close()
    await pending
  })
}

test('behavior: with passkeys on, the landing offers them in Japanese and PASSKEY_SCREEN speaks Japanese, axe-clean', async () => {
  const ja = TABLES.ja.m
  const app = await h().createApp({ loginMethods: ['email', 'passkey'] })
  const hp = await h().open({ appId: app.id, contextOptions: { locale: 'ja-JP' } })
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await screen(hp.modal, 'LANDING').getByRole('button', { name: ja.passkey }).click()
  // visit() holds the screen to axe in Japanese.
  await visit(hp, 'PASSKEY_SCREEN')
  const passkeys = screen(hp.modal, 'PASSKEY_SCREEN')
  expect(await passkeys.getByRole('heading', { level: 1 }).textContent()).toBe(ja.pkTitle)
  await passkeys.getByText(ja.pkBody.replace('{app}', app.name)).waitFor()
  await passkeys.getByRole('button', { name: ja.pkSignIn }).waitFor()
  await passkeys.getByRole('button', { name: ja.pkCreate }).waitFor()
  await passkeys.getByRole('button', { name: ja.pkBack }).waitFor()
  await hp.context.close()
  await pending
})

test('behavior: a browser speaking Japanese signs in by an e-mail code mailed in Japanese and creates a wallet in Japanese', async () => {
  const ja = TABLES.ja
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  const hp = await h().open({ appId: app.id, contextOptions: { locale: 'ja-JP' } })
  const email = newEmail('ja')
  const login = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await submitEmail(hp.modal, email)
  const code = await waitEmailCode(h(), email)
  const mail = h().smtp.messages.find((message) => message.to === email)
  expect(mail?.subject).toBe(`${app.name} のログインコード: ${code}`)
  expect(mail?.body).toContain(`${app.name} のログインコードは ${code} です。`)

  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  const codeScreen = screen(hp.modal, 'AWAITING_PASSWORDLESS_CODE')
  await codeScreen.getByText(ja.m.codeTitle).waitFor()
  await codeScreen.getByRole('button', { name: ja.m.resend }).waitFor()
  await enterCode(hp.modal, code)
  expect(expectOk(await settle(login, 'login()')).user.email?.address).toBe(email)

  const pending = walletCall<WalletAccount>(hp.page, 'createWallet')
  await visit(hp, SCREENS.create)
  const create = screen(hp.modal, SCREENS.create)
  await create.getByRole('heading', { name: ja.m.setTitle }).waitFor()
  await create.getByText(ja.m.hint).waitFor()
  // A validation message in Japanese, held to axe there.
  await enterPasscode(hp.modal, 'ab#', { typed: true })
  await create.getByText(ja.e.passcode_invalid_characters).waitFor()
  await visit(hp, SCREENS.create)
  for (let i = 2; i >= 0; i--) await passcodeBoxes(hp.modal).nth(i).fill('')
  await enterPasscode(hp.modal, 'Tr4in9')
  await create.getByRole('button', { name: ja.m.setButton }).click()
  await screen(hp.modal, SCREENS.created).getByText(ja.m.ready).waitFor()
  expectInAppWallet(expectOk(await settle(pending, 'createWallet()')), 'user-passcode')

  // The wallet frame's key export page speaks Japanese too, and passes axe in it.
  const exported = latchCall<void>(hp.page, 'exportWallet' as never)
  await visit(hp, 'EMBEDDED_WALLET_KEY_EXPORT_SCREEN')
  const handle = await hp.modal.getByTestId('latch-export-frame').elementHandle()
  const page = await handle?.contentFrame()
  if (!page) throw new Error('the export frame is not in the modal')
  await page.getByRole('button', { name: ja.m.xReveal }).click({ timeout: 15_000 })
  await page.getByTestId('export-key').waitFor({ state: 'visible' })
  expect(await page.locator('#status').textContent()).toBe(ja.m.xShown)
  expect(await page.locator('#warning').textContent()).toBe(ja.m.xWarning)
  expect(await page.evaluate(() => document.documentElement.lang)).toBe('ja')
  const violations = await axeViolations(page)
  expect(violations, formatViolations('the export page in Japanese', violations)).toEqual([])
  const done = hp.modal.getByTestId('export-done')
  await expect.poll(() => done.isEnabled(), { timeout: 5000 }).toBe(true)
  await done.click()
  expect((await settle(exported, 'exportWallet()')).ok).toBe(true)
})
