/**
 * Keyboard only: a visitor who never touches a mouse signs in by e-mail code and by a social
 * provider, links a phone, and closes the modal; focus is visible, stays inside the dialog
 * while it is open, leaves an inline modal freely, and comes back to the button that opened it.
 * Every screen passed on the way is also held to axe (`visit`).
 */
import { type MockPerson, type MockProviders, startMockProviders } from '@latch/server/testing'
import { ERRORS, HOST_ELEMENT_IDS, OAUTH_RETURN_PARAM_NAMES, type User } from '@latch/shared'
import type { Frame, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { expectModalAccessible, modalFrame } from './axe.ts'
import {
  expectOk,
  latchCall,
  newEmail,
  newPhone,
  settle,
  signInByEmail,
  visit,
  waitEmailCode,
  waitSmsCode,
  wrongCode,
} from './flows.ts'
import { type HostPage, WAIT_MS, waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

/** The data-testid (or tag) of the focused element of a page or frame. */
const focused = (target: Page | Frame) =>
  target.evaluate(() => {
    const el = document.activeElement
    return el?.getAttribute('data-testid') ?? el?.tagName.toLowerCase() ?? null
  })

/** Focus inside the modal, as the page sees it: the frame holds it and the frame's element. */
async function modalFocus(hp: HostPage): Promise<string | null> {
  if ((await focused(hp.page)) !== HOST_ELEMENT_IDS.frame) return null
  return focused(await modalFrame(hp.page))
}

/** Presses Tab (at most `limit` times) until the modal's focus is on `testId`. */
async function tabTo(hp: HostPage, testId: string, limit = 12): Promise<void> {
  const seen: (string | null)[] = []
  for (let i = 0; i < limit; i++) {
    const now = await modalFocus(hp)
    if (now === testId) return
    seen.push(now)
    await hp.page.keyboard.press('Tab')
  }
  throw new Error(`Tab never reached ${testId}; focus went ${seen.join(' -> ')}`)
}

/**
 * The focused element inside the modal draws a ring: its own outline, or the outline of the
 * input row around a text field (the field itself hides its outline for the row's).
 */
async function focusRingShown(hp: HostPage): Promise<boolean> {
  const frame = await modalFrame(hp.page)
  return frame.evaluate(() => {
    const el = document.activeElement
    if (!el || el === document.body) return false
    const ring = (node: Element) => {
      const style = getComputedStyle(node)
      return style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 2
    }
    const row = el.closest('.latch-input-row')
    return ring(el) || (row !== null && ring(row))
  })
}

const announced = async (hp: HostPage) =>
  (await modalFrame(hp.page)).evaluate(
    () => document.querySelector('[data-latch-announcer]')?.textContent ?? '',
  )

const dialogOpen = (hp: HostPage) => hp.page.getByTestId(HOST_ELEMENT_IDS.dialog).isVisible()

/** From the top of the demo page: Tab to the Sign in button and press Enter. */
async function openByKeyboard(hp: HostPage): Promise<void> {
  await hp.page.keyboard.press('Tab')
  expect(await focused(hp.page)).toBe('sign-in')
  await hp.page.keyboard.press('Enter')
  await visit(hp, 'LANDING')
}

describe('keyboard only', () => {
  test('behavior: e-mail code sign-in: Tab, Enter, type, Enter, type; titles and errors are announced; focus returns', async () => {
    const hp = await h().open()
    await openByKeyboard(hp)
    await expect.poll(() => modalFocus(hp), { timeout: WAIT_MS }).toBe('email-input')
    expect(await focusRingShown(hp)).toBe(true)
    await expect.poll(() => announced(hp), { timeout: WAIT_MS }).toBe('Log in or sign up')

    const email = newEmail('keys')
    await hp.page.keyboard.type(email)
    await hp.page.keyboard.press('Enter')
    const code = await waitEmailCode(h(), email)
    await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
    await expect.poll(() => modalFocus(hp), { timeout: WAIT_MS }).toBe('code-input-0')
    expect(await focusRingShown(hp)).toBe(true)
    await expect.poll(() => announced(hp), { timeout: WAIT_MS }).toBe('Enter confirmation code')

    // The six boxes are one named group to assistive technology.
    const frame = await modalFrame(hp.page)
    const group = await frame.evaluate(() => {
      const box = document.querySelector('[data-testid="code-input-0"]')
      const fieldset = box?.closest('fieldset')
      return {
        name: fieldset?.querySelector('legend')?.textContent,
        boxes: [...(fieldset?.querySelectorAll('input') ?? [])].map((b) =>
          b.getAttribute('aria-label'),
        ),
      }
    })
    expect(group.name).toBe('Confirmation code')
    expect(group.boxes).toEqual([1, 2, 3, 4, 5, 6].map((n) => `Digit ${n} of 6`))

    // A wrong code: the message appears inside a live region, and the screen stays clean.
    await hp.page.keyboard.type(wrongCode(code))
    const error = hp.modal.getByText(ERRORS.invalid_verification_code.message)
    await error.waitFor({ state: 'visible' })
    const live = await error.evaluate(
      (el) => el.closest('[aria-live], [role="alert"], [role="status"]') !== null,
    )
    expect(live).toBe(true)
    await expectModalAccessible(hp.page, 'the code screen with a wrong code (keyboard)')

    // Backspace walks back through the boxes; the right code then signs in.
    for (let i = 0; i < 6; i++) await hp.page.keyboard.press('Backspace')
    await expect.poll(() => modalFocus(hp), { timeout: WAIT_MS }).toBe('code-input-0')
    await hp.page.keyboard.type(code)
    await hp.modal.getByText('Success!').waitFor({ state: 'visible' })
    await expect.poll(() => dialogOpen(hp), { timeout: WAIT_MS }).toBe(false)
    await expect.poll(() => focused(hp.page), { timeout: WAIT_MS }).toBe('sign-in')
  })

  test('behavior: Tab and Shift+Tab stay inside the open dialog; Escape closes it and focus returns', async () => {
    const hp = await h().open()
    await openByKeyboard(hp)
    await expect.poll(() => modalFocus(hp), { timeout: WAIT_MS }).toBe('email-input')
    // Around the dialog and back: every stop is inside the frame, with a ring.
    const stops: (string | null)[] = []
    for (let i = 0; i < 6; i++) {
      await hp.page.keyboard.press('Tab')
      stops.push(await modalFocus(hp))
      expect(await focusRingShown(hp), `focus ring on ${stops.at(-1)}`).toBe(true)
    }
    expect(stops).not.toContain(null)
    expect(stops).toContain('close-button')
    // Shift+Tab from the first control (Close) goes to the last, not out to the page.
    await tabTo(hp, 'close-button')
    await hp.page.keyboard.press('Shift+Tab')
    expect(await modalFocus(hp)).not.toBeNull()
    expect(await modalFocus(hp)).not.toBe('close-button')

    await hp.page.keyboard.press('Escape')
    await expect.poll(() => dialogOpen(hp), { timeout: WAIT_MS }).toBe(false)
    await expect.poll(() => focused(hp.page), { timeout: WAIT_MS }).toBe('sign-in')
  })

  test('behavior: the Close button by keyboard closes the modal and focus returns to the opener', async () => {
    const hp = await h().open()
    await openByKeyboard(hp)
    await expect.poll(() => modalFocus(hp), { timeout: WAIT_MS }).toBe('email-input')
    await tabTo(hp, 'close-button')
    await hp.page.keyboard.press('Enter')
    await expect.poll(() => dialogOpen(hp), { timeout: WAIT_MS }).toBe(false)
    await expect.poll(() => focused(hp.page), { timeout: WAIT_MS }).toBe('sign-in')
  })

  test('behavior: rendered inline, Tab leaves the modal for the rest of the page (no trap)', async () => {
    const hp = await h().open({ path: '/inline' })
    await hp.page.getByTestId('sign-in').focus()
    await hp.page.keyboard.press('Enter')
    await visit(hp, 'LANDING')
    await expect.poll(() => modalFocus(hp), { timeout: WAIT_MS }).toBe('email-input')
    const outside: (string | null)[] = []
    for (let i = 0; i < 8 && outside.length === 0; i++) {
      await hp.page.keyboard.press('Tab')
      const onPage = await focused(hp.page)
      if (onPage !== HOST_ELEMENT_IDS.frame) outside.push(onPage)
    }
    // Past the modal's last control, focus moves on to the host page (or the browser's own UI).
    expect(outside).toHaveLength(1)
  })

  test('behavior: linking a phone by keyboard from the page button; focus returns to it', async () => {
    const app = await h().createApp({ loginMethods: ['email', 'sms'] })
    const hp = await h().open({ appId: app.id })
    await signInByEmail(h(), hp, newEmail('keys-linker'))
    await expect.poll(() => dialogOpen(hp), { timeout: WAIT_MS }).toBe(false)

    // Tab from the Sign in button to Link phone, then Enter.
    await hp.page.getByTestId('sign-in').focus()
    await hp.page.keyboard.press('Tab')
    await hp.page.keyboard.press('Tab')
    expect(await focused(hp.page)).toBe('link-phone')
    await hp.page.keyboard.press('Enter')
    await visit(hp, 'LINK_PHONE_SCREEN')
    await expect.poll(() => modalFocus(hp), { timeout: WAIT_MS }).toBe('phone-input')
    expect(await focusRingShown(hp)).toBe(true)
    await expect.poll(() => announced(hp), { timeout: WAIT_MS }).toBe('Connect your phone')
    const phone = newPhone()
    await hp.page.keyboard.type(phone.typed)
    await hp.page.keyboard.press('Enter')
    const code = await waitSmsCode(h(), phone.e164)
    await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
    await expect.poll(() => modalFocus(hp), { timeout: WAIT_MS }).toBe('code-input-0')
    await hp.page.keyboard.type(code)
    await hp.modal.getByText('Success!').waitFor({ state: 'visible' })
    await expect.poll(() => dialogOpen(hp), { timeout: WAIT_MS }).toBe(false)
    await expect.poll(() => focused(hp.page), { timeout: WAIT_MS }).toBe('link-phone')
    const user = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))
    expect(user?.phone?.number).toBe(phone.e164)
  })
})

describe('keyboard only, social', () => {
  let mock: MockProviders
  beforeAll(async () => {
    mock = await startMockProviders()
  })
  afterAll(async () => {
    await mock?.stop()
  })

  test('behavior: Tab to the Google button, Enter, and back signed in', async () => {
    const app = await h().createApp({ loginMethods: ['email', 'google'], oauth: mock.settings() })
    const n = `${process.pid}${Date.now() % 100_000}`
    const who: MockPerson = {
      sub: `google-${n}`,
      email: `google-${n}@example.com`,
      name: `Person ${n}`,
      username: `user${n}`,
    }
    mock.signIn('google', who)
    const hp = await h().open({ appId: app.id })
    await openByKeyboard(hp)
    await tabTo(hp, 'social-google')
    expect(await focusRingShown(hp)).toBe(true)

    const back = hp.page.waitForEvent('framenavigated', {
      predicate: (frame) =>
        frame === hp.page.mainFrame() && frame.url().includes(OAUTH_RETURN_PARAM_NAMES.code),
      timeout: WAIT_MS,
    })
    await hp.page.keyboard.press('Enter')
    await back
    await hp.page.waitForLoadState('load')
    await waitReady(hp)
    await hp.page.waitForFunction(() => (window.latchLogins?.length ?? 0) >= 1, null, {
      timeout: WAIT_MS,
    })
    const [login] = await hp.page.evaluate(() => window.latchLogins ?? [])
    expect(login?.user.google?.subject).toBe(who.sub)
  })
})
