import type { LoginResult } from '@latch/shared'
import { expect, test } from 'vitest'
import { expectModalAccessible } from './axe.ts'
import {
  demoUser,
  latchCall,
  newPhone,
  signedInByCode,
  signInBySms,
  submitPhone,
  visit,
  waitSmsCode,
} from './flows.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

test('behavior: a visitor signs in with an SMS code sent through the Twilio API', async () => {
  const app = await h().createApp({ loginMethods: ['sms'] })
  const phone = newPhone()
  const hp = await h().open({ appId: app.id })
  const result = await signInBySms(h(), hp, phone)
  expect(result.isNewUser).toBe(true)
  expect(result.user.linkedAccounts.map((a) => a.type)).toEqual(['phone'])
  const shown = await demoUser(hp.page, (u) => u?.phone?.number === phone.e164)
  expect(shown?.id).toBe(result.user.id)

  // Returning later on a fresh browser: the same user.
  await h().ageCodes(phone.e164)
  const again = await signInBySms(h(), await h().open({ appId: app.id }), phone)
  expect(again.isNewUser).toBe(false)
  expect(again.user.id).toBe(result.user.id)
})

test('behavior: a visitor signs in with a British number written nationally, on an app that sends SMS codes to the US and the UK; the country select is accessible', async () => {
  const app = await h().createApp({ loginMethods: ['sms'], smsCountries: ['US', 'GB'] })
  const hp = await h().open({ appId: app.id })
  const national = `07400 ${String(100_000 + (Date.now() % 900_000))}`
  const e164 = `+44${national.slice(1).replace(' ', '')}`
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  // Labelled, the app's first country chosen, each with its dialling code.
  const select = hp.modal.getByRole('combobox', { name: 'Country' })
  expect(await select.inputValue()).toBe('US')
  expect(await select.locator('option').allTextContents()).toEqual([
    'United States (+1)',
    'United Kingdom (+44)',
  ])
  await expectModalAccessible(hp.page, 'the landing with the phone country select')
  await select.selectOption('GB')
  await submitPhone(hp.modal, national)
  const code = await waitSmsCode(h(), e164)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  const result = await signedInByCode(hp, code, pending)
  expect(result.isNewUser).toBe(true)
  expect(result.user.phone?.number).toBe(e164)
})

test('attack: an SMS-pumping destination outside the app’s SMS countries shows the server’s reason; no SMS goes out', async () => {
  const app = await h().createApp({ loginMethods: ['sms'] })
  const hp = await h().open({ appId: app.id })
  // The modal stays open on the refusal; the call is left pending and the page closes with the test.
  void latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  // A Moldovan number, a favourite of SMS pumping; the app sends to the US only (the default).
  await submitPhone(hp.modal, '+373 60 123 456')
  await hp.modal
    .getByText('This app does not send SMS codes to that country')
    .waitFor({ state: 'visible' })
  expect(h().twilio.messages.map((m) => m.to)).not.toContain('+37360123456')
})
