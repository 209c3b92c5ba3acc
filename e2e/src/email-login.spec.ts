import { ERRORS, HOST_ELEMENT_IDS, type LoginResult } from '@latch/shared'
import { describe, expect, test } from 'vitest'
import { expectModalAccessible } from './axe.ts'
import {
  demoUser,
  enterCode,
  expectOk,
  latchCall,
  newEmail,
  settle,
  signInByEmail,
  submitEmail,
  visit,
  waitEmailCode,
} from './flows.ts'
import { WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

describe('e-mail sign-in', () => {
  test('behavior: a new visitor signs in from the Sign in button, then returns as the same user', async () => {
    const email = newEmail('new')
    const first = await h().open()
    await first.page.evaluate(() => {
      window.logins = []
      window.latch?.on('login', (result) => window.logins?.push(result))
    })

    // The one-line script wires any [data-latch-login] element to login().
    await first.page.getByTestId('sign-in').click()
    const dialog = first.page.getByTestId(HOST_ELEMENT_IDS.dialog)
    await expect.poll(() => dialog.isVisible(), { timeout: WAIT_MS }).toBe(true)
    await visit(first, 'LANDING')
    await submitEmail(first.modal, email)
    const code = await waitEmailCode(h(), email)
    expect(code).toMatch(/^\d{6}$/)
    await visit(first, 'AWAITING_PASSWORDLESS_CODE')
    await enterCode(first.modal, code, { typed: true })
    await first.modal.getByText('Success!').waitFor({ state: 'visible' })
    await expectModalAccessible(first.page, 'the code screen after Success!')

    await first.page.waitForFunction(() => (window.logins?.length ?? 0) > 0, null, {
      timeout: WAIT_MS,
    })
    const [login] = (await first.page.evaluate(() => window.logins)) as LoginResult[]
    expect(login?.isNewUser).toBe(true)
    expect(login?.user.email?.address).toBe(email)
    expect(login?.user.linkedAccounts.map((a) => a.type)).toEqual(['email'])

    // 'Success!', then the modal closes by itself and the page shows the user.
    await expect.poll(() => dialog.isVisible(), { timeout: WAIT_MS }).toBe(false)
    const shown = await demoUser(first.page, (u) => u?.email?.address === email)
    expect(shown?.id).toBe(login?.user.id)

    // Later, on a fresh browser (no session): the same address is a returning user.
    await h().ageCodes(email)
    const second = await h().open()
    const again = await signInByEmail(h(), second, email)
    expect(again.isNewUser).toBe(false)
    expect(again.user.id).toBe(login?.user.id)
  })

  test('behavior: the address is trimmed and lowercased, and the code works once; signing in again right after a sign-in is not a resend and gets a code', async () => {
    const email = newEmail('case')
    const hp = await h().open()
    const first = await signInByEmail(h(), hp, email)
    expect(first.isNewUser).toBe(true)

    // At once, on a fresh browser, typed with spaces and capitals. The 60 s resend interval is
    // about asking for another code while one is pending; a code already used does not make
    // the next sign-in wait.
    const other = await h().open()
    const pending = latchCall<LoginResult>(other.page, 'login')
    await visit(other, 'LANDING')
    const init = other.page.waitForResponse((r) => r.url().endsWith('/api/v1/passwordless/init'))
    await submitEmail(other.modal, `  ${email.toUpperCase()}  `)
    const answer = await init
    expect(answer.status(), `init answered ${await answer.text()}`).toBe(200)
    const code = await waitEmailCode(h(), email)
    await enterCode(other.modal, code)
    const result = expectOk(await settle(pending, 'login()'))
    expect(result.user.id).toBe(first.user.id)
    expect(result.isNewUser).toBe(false)
  })
})

test('error: a malformed address says why after a pause or Enter, spoken from the field’s description, axe-clean; a valid one clears it', async () => {
  const hp = await h().open()
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  const input = hp.modal.getByTestId('email-input')
  const problem = hp.modal.getByTestId('email-problem')
  await input.pressSequentially('ada@example', { delay: 20 })
  // Said once the visitor pauses (1 s): the page clock runs it out.
  await hp.page.clock.fastForward(1100)
  await expect
    .poll(() => problem.textContent(), { timeout: WAIT_MS })
    .toBe(ERRORS.invalid_email.message)
  expect(await input.getAttribute('aria-invalid')).toBe('true')
  const describedBy = (await input.getAttribute('aria-describedby')) ?? ''
  expect(describedBy.split(' ')).toContain(await problem.getAttribute('id'))
  await expectModalAccessible(hp.page, 'the landing with a malformed address')
  await input.pressSequentially('.com', { delay: 20 })
  await expect.poll(() => problem.textContent(), { timeout: WAIT_MS }).toBe('')
  expect(await input.getAttribute('aria-invalid')).toBeNull()
  // Enter on a malformed one says why at once.
  await input.fill('not-an-address')
  await input.press('Enter')
  await expect
    .poll(() => problem.textContent(), { timeout: WAIT_MS })
    .toBe(ERRORS.invalid_email.message)
  void pending
})
