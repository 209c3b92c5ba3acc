import { expect, test } from 'vitest'
import { demoUser, newPhone, signInBySms } from './flows.ts'
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
