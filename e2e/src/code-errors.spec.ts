import { CODE_ERROR_CLEAR_DELAY_MS, ERRORS, type LoginResult } from '@latch/shared'
import type { Request } from 'playwright-core'
import { beforeAll, describe, expect, test } from 'vitest'
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

/** A page of its own at the code screen for `email`, login() pending (kept across tests if `kept`). */
async function toCodeScreen(email: string, kept = false) {
  const hp = await h().open({ kept })
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
  await enterCode(hp.modal, wrongCode(code), { typed: true })
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

  await enterCode(hp.modal, code, { typed: true })
  const result = expectOk(await settle(pending, 'login()'))
  expect(result.user.email?.address).toBe(email)
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

/**
 * The errors that end on the code screen, no sign-in completed there, share one: non-numeric
 * input (nothing sent), then Resend inside the minute (no code sent), then the code expired.
 * Each leaves the screen with its code unused, as the next one needs it.
 */
describe('on one code screen', () => {
  let shared: Awaited<ReturnType<typeof toCodeScreen>> & { email: string }
  beforeAll(async () => {
    const email = newEmail('code-screen')
    shared = { ...(await toCodeScreen(email, true)), email }
  })

  test('error: non-numeric input says so, sends nothing, and clears the boxes after 1400 ms', async () => {
    const { hp } = shared
    const verifications: string[] = []
    const watch = (request: Request) => {
      if (request.url().includes('/passwordless/authenticate')) verifications.push(request.url())
    }
    hp.page.on('request', watch)

    const message = hp.modal.getByText(ERRORS.code_not_numeric.message)
    const cleared = () =>
      expect
        .poll(() => codeBoxValues(hp.modal), { timeout: WAIT_MS, interval: 50 })
        .toEqual(['', '', '', '', '', ''])
    // The page's clock stands still while the boxes are read: they clear on the modal's timer
    // alone, never because the machine was slow between two reads.
    const now = await hp.page.evaluate(() => Date.now())
    await hp.page.clock.pauseAt(now + 1000)
    await enterCode(hp.modal, '12a456', { typed: true })
    await message.waitFor({ state: 'visible' })
    // The boxes stay as typed for CODE_ERROR_CLEAR_DELAY_MS, then clear, and the message goes.
    await hp.page.clock.runFor(CODE_ERROR_CLEAR_DELAY_MS - 1)
    expect(await codeBoxValues(hp.modal)).toEqual(['1', '2', 'a', '4', '5', '6'])
    expect(await message.isVisible()).toBe(true)
    await hp.page.clock.runFor(1)
    await hp.page.clock.resume()
    await cleared()
    expect(await message.count()).toBe(0)
    // Again with the clock running (axe's own timers run on it), held to axe with the message.
    await enterCode(hp.modal, '12a456', { typed: true })
    await message.waitFor({ state: 'visible' })
    await expectModalAccessible(hp.page, 'the code screen with a non-numeric code')
    await hp.page.clock.fastForward(CODE_ERROR_CLEAR_DELAY_MS)
    await cleared()
    expect(verifications).toEqual([])
    hp.page.off('request', watch)
  })

  test('behavior: Resend code inside the server’s minute counts down the seconds left, never "Too many requests"', async () => {
    const { hp } = shared
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

  test('error: an expired code answers the spec message', async () => {
    const { hp, code, email } = shared
    // E-mail codes live 10 minutes; rather than wait, the stored expiry moves into the past.
    await h().expireCodes(email)
    await enterCode(hp.modal, code, { typed: true })
    await hp.modal.getByText(ERRORS.invalid_verification_code.message).waitFor({ state: 'visible' })
  })
})
