import { ERRORS, type User } from '@latch/shared'
import { expect, test } from 'vitest'
import { expectModalAccessible } from './axe.ts'
import {
  demoUser,
  enterCode,
  expectOk,
  expectRejected,
  latchCall,
  newEmail,
  newPhone,
  screen,
  settle,
  signInByEmail,
  submitEmail,
  submitPhone,
  visit,
  waitEmailCode,
  waitSmsCode,
} from './flows.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

test('behavior: a signed-in user links a phone, unlinks the e-mail, then links another e-mail', async () => {
  const app = await h().createApp({ loginMethods: ['email', 'sms'] })
  const email = newEmail('linker')
  const phone = newPhone()
  const hp = await h().open({ appId: app.id })
  const { user } = await signInByEmail(h(), hp, email)

  // Link a phone.
  const linkingPhone = latchCall<User>(hp.page, 'link', 'phone')
  await visit(hp, 'LINK_PHONE_SCREEN')
  const linkPhone = screen(hp.modal, 'LINK_PHONE_SCREEN')
  await linkPhone.getByText('Connect your phone').waitFor({ state: 'visible' })
  await submitPhone(hp.modal, phone.typed)
  const smsCode = await waitSmsCode(h(), phone.e164)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  await enterCode(hp.modal, smsCode)
  const withPhone = expectOk(await settle(linkingPhone, "link('phone')"))
  expect(withPhone.id).toBe(user.id)
  expect(withPhone.phone?.number).toBe(phone.e164)
  expect(withPhone.email?.address).toBe(email)
  await demoUser(hp.page, (u) => u?.phone?.number === phone.e164)

  // Unlink the e-mail: the phone still signs this user in.
  const withoutEmail = expectOk(
    await settle(latchCall<User>(hp.page, 'unlink', { type: 'email', address: email })),
  )
  expect(withoutEmail.email).toBeUndefined()
  expect(withoutEmail.linkedAccounts.map((a) => a.type)).toEqual(['phone'])
  const current = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))
  expect(current?.linkedAccounts.map((a) => a.type)).toEqual(['phone'])

  // Link another e-mail.
  const second = newEmail('second')
  const linkingEmail = latchCall<User>(hp.page, 'link', 'email')
  await visit(hp, 'LINK_EMAIL_SCREEN')
  const linkEmail = screen(hp.modal, 'LINK_EMAIL_SCREEN')
  await linkEmail.getByText('Connect your email').waitFor({ state: 'visible' })
  // Linking is a medium screen: SPEC's minimum height of 480 px, the frame at least as tall.
  const modal = hp.modal.getByTestId('latch-modal')
  expect(await modal.evaluate((m) => getComputedStyle(m).minHeight)).toBe('480px')
  await expect
    .poll(() =>
      hp.page
        .locator('[data-testid="latch-dialog"] iframe')
        .evaluate((f) => Number.parseFloat(getComputedStyle(f).height)),
    )
    .toBeGreaterThanOrEqual(480)
  await submitEmail(hp.modal, second)
  const mailCode = await waitEmailCode(h(), second)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  await enterCode(hp.modal, mailCode)
  const withEmail = expectOk(await settle(linkingEmail, "link('email')"))
  expect(withEmail.id).toBe(user.id)
  expect(withEmail.email?.address).toBe(second)
  expect(withEmail.phone?.number).toBe(phone.e164)

  // The unlinked address is free again: later, it signs in as a new user.
  await h().ageCodes(email)
  const fresh = await signInByEmail(h(), await h().open({ appId: app.id }), email)
  expect(fresh.isNewUser).toBe(true)
  expect(fresh.user.id).not.toBe(user.id)
})

test('error: linking an e-mail that another user holds is refused and changes nothing', async () => {
  const app = await h().createApp({ loginMethods: ['email', 'sms'] })
  const taken = newEmail('taken')
  await signInByEmail(h(), await h().open({ appId: app.id }), taken)

  const hp = await h().open({ appId: app.id })
  const { user } = await signInByEmail(h(), hp, newEmail('other'))
  const linking = latchCall<User>(hp.page, 'link', 'email')
  await visit(hp, 'LINK_EMAIL_SCREEN')
  await h().ageCodes(taken)
  await submitEmail(hp.modal, taken)
  const code = await waitEmailCode(h(), taken)
  const answer = hp.page.waitForResponse((r) => r.url().endsWith('/api/v1/passwordless/link'))
  await enterCode(hp.modal, code)
  const response = await answer
  expect(response.status()).toBe(400)
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
    'linked_to_another_user',
  )
  // The code was right; the refusal (linked_to_another_user) is not a 422: 'Issue verifying code'.
  await hp.modal.getByText(ERRORS.code_verification_failed.message).waitFor({ state: 'visible' })
  await expectModalAccessible(hp.page, 'the code screen with a refused link')
  await hp.page.keyboard.press('Escape')
  const error = expectRejected(await settle(linking, "link('email')"))
  expect(error.code).not.toBeNull()
  const after = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))
  expect(after?.linkedAccounts).toEqual(user.linkedAccounts)
})

test('error: unlinking without a session rejects', async () => {
  const hp = await h().open()
  const outcome = await settle(
    latchCall<User>(hp.page, 'unlink', { type: 'email', address: newEmail('nobody') }),
  )
  expect(outcome.ok).toBe(false)
})
