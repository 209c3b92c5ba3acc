import { ERRORS, type LoginResult } from '@latch/shared'
import { expect, test } from 'vitest'
import { expectModalAccessible } from './axe.ts'
import {
  codeBoxValues,
  enterCode,
  expectOk,
  latchCall,
  newEmail,
  screen,
  settle,
  submitEmail,
  visit,
  waitEmailCode,
  wrongCode,
} from './flows.ts'
import { WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

async function toCodeScreen(email: string) {
  const hp = await h().open()
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await submitEmail(hp.modal, email)
  const code = await waitEmailCode(h(), email)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  return { hp, pending, code }
}

test('error: a wrong code shows the spec message and the right code still signs in', async () => {
  const email = newEmail('wrong')
  const { hp, pending, code } = await toCodeScreen(email)
  await enterCode(hp.modal, wrongCode(code))
  await hp.modal.getByText(ERRORS.invalid_verification_code.message).waitFor({ state: 'visible' })
  // SPEC's default error colour (#EC6351) borders the boxes.
  expect(
    await hp.modal
      .locator('.latch-code-box')
      .first()
      .evaluate((box) => getComputedStyle(box).borderTopColor),
  ).toBe('rgb(236, 99, 81)')
  await expectModalAccessible(hp.page, 'the code screen with a wrong code')
  await expect(screen(hp.modal, 'AWAITING_PASSWORDLESS_CODE').isVisible()).resolves.toBe(true)

  await enterCode(hp.modal, code)
  const result = expectOk(await settle(pending, 'login()'))
  expect(result.user.email?.address).toBe(email)
})

test('error: non-numeric input says so, sends nothing, and clears the boxes after 1400 ms', async () => {
  const email = newEmail('alpha')
  const { hp } = await toCodeScreen(email)
  const verifications: string[] = []
  hp.page.on('request', (request) => {
    if (request.url().includes('/passwordless/authenticate')) verifications.push(request.url())
  })

  await enterCode(hp.modal, '12a456')
  const message = hp.modal.getByText(ERRORS.code_not_numeric.message)
  await message.waitFor({ state: 'visible' })
  const shownAt = Date.now()
  await expectModalAccessible(hp.page, 'the code screen with a non-numeric code')
  // The boxes stay as typed for a while (CODE_ERROR_CLEAR_DELAY_MS), then clear.
  expect((await codeBoxValues(hp.modal)).join('')).not.toBe('')
  await expect
    .poll(() => codeBoxValues(hp.modal), { timeout: WAIT_MS, interval: 50 })
    .toEqual(['', '', '', '', '', ''])
  expect(Date.now() - shownAt).toBeGreaterThan(500)
  expect(verifications).toEqual([])
})

test('error: an expired code answers the spec message', async () => {
  const email = newEmail('expired')
  const { hp, code } = await toCodeScreen(email)
  // E-mail codes live 10 minutes; rather than wait, the stored expiry moves into the past.
  await h().expireCodes(email)
  await enterCode(hp.modal, code)
  await hp.modal.getByText(ERRORS.invalid_verification_code.message).waitFor({ state: 'visible' })
})

test('error: after a wrong code the next keystrokes are a fresh entry: typing the right code over it signs in with one more request', async () => {
  const email = newEmail('retype')
  const { hp, pending, code } = await toCodeScreen(email)
  const verifications: string[] = []
  hp.page.on('request', (request) => {
    if (request.url().includes('/passwordless/authenticate')) verifications.push(request.url())
  })
  // Differs from the right code in its first digit, as a slip of the finger does: typed over
  // the old digits, each keystroke would have completed (and sent) another six-digit code.
  const wrong = `${(Number(code.charAt(0)) + 1) % 10}${code.slice(1)}`
  await hp.modal.getByTestId('code-input-0').focus()
  await hp.page.keyboard.type(wrong, { delay: 20 })
  await hp.modal.getByText(ERRORS.invalid_verification_code.message).waitFor({ state: 'visible' })
  expect(await codeBoxValues(hp.modal)).toEqual(['', '', '', '', '', ''])
  await expect
    .poll(() => hp.modal.getByTestId('code-input-0').evaluate((b) => b === document.activeElement))
    .toBe(true)
  // Straight on, without clicking: the first box has the focus.
  await hp.page.keyboard.type(code, { delay: 20 })
  const result = expectOk(await settle(pending, 'login()'))
  expect(result.user.email?.address).toBe(email)
  expect(verifications).toHaveLength(2)
})

test('behavior: Resend code inside the server’s minute counts down the seconds left, never "Too many requests"', async () => {
  const email = newEmail('resend')
  const { hp } = await toCodeScreen(email)
  const resend = hp.modal.getByTestId('resend-code')
  await resend.click()
  await expect
    .poll(() => resend.textContent(), { timeout: WAIT_MS })
    .toMatch(/^Resend code in \d+ s$/)
  const seconds = Number((await resend.textContent())?.match(/\d+/)?.[0])
  expect(seconds).toBeGreaterThan(40)
  expect(seconds).toBeLessThanOrEqual(60)
  expect(await resend.getAttribute('aria-disabled')).toBe('true')
  expect(await hp.modal.getByText(ERRORS.too_many_requests.message).count()).toBe(0)
  await expectModalAccessible(hp.page, 'the code screen waiting to resend')
})
