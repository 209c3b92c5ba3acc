import { HOST_ELEMENT_IDS, type LatchClient } from '@latch/shared'
import { expect, test } from 'vitest'
import {
  demoUser,
  enterCode,
  expectRejected,
  latchCall,
  newEmail,
  screen,
  signInByEmail,
  submitEmail,
  visit,
  waitEmailCode,
} from './flows.ts'
import { WAIT_MS } from './harness.ts'
import { INLINE_PARENT_ID } from './host-server.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

test('behavior: the modal renders inside the parent element and signs in there', async () => {
  const hp = await h().open({ path: '/inline' })
  const frame = hp.page.locator(`#${INLINE_PARENT_ID} [data-testid="${HOST_ELEMENT_IDS.frame}"]`)
  await expect(frame.count()).resolves.toBe(1)

  const email = newEmail('inline')
  const signingIn = signInByEmail(h(), hp, email)
  await screen(hp.modal, 'LANDING').waitFor({ state: 'visible' })
  // No dialog: the frame sits in the page flow, inside the parent, at the modal's width.
  await expect(hp.page.locator('dialog[open]').count()).resolves.toBe(0)
  const frameBox = await frame.boundingBox()
  const parentBox = await hp.page.locator(`#${INLINE_PARENT_ID}`).boundingBox()
  expect(frameBox && parentBox).toBeTruthy()
  if (frameBox && parentBox) {
    expect(frameBox.height).toBeGreaterThan(100)
    expect(frameBox.width).toBeLessThanOrEqual(parentBox.width + 1)
    expect(frameBox.y).toBeGreaterThanOrEqual(parentBox.y - 1)
    expect(frameBox.y + frameBox.height).toBeLessThanOrEqual(parentBox.y + parentBox.height + 1)
  }
  // The frame's height follows the modal's content: the whole landing fits without scrolling.
  const content = await hp.modal.locator('body').evaluate((b) => b.scrollHeight)
  expect(Math.abs((frameBox?.height ?? 0) - content)).toBeLessThanOrEqual(2)

  const result = await signingIn
  expect(result.isNewUser).toBe(true)
})

test('behavior: on the inline page a person signs in from the button; the frame follows each screen', async () => {
  const hp = await h().open({ path: '/inline' })
  const frame = hp.page.locator(`#${INLINE_PARENT_ID} [data-testid="${HOST_ELEMENT_IDS.frame}"]`)
  const fits = async () => {
    const box = await frame.boundingBox()
    const content = await hp.modal.locator('body').evaluate((b) => b.scrollHeight)
    return Math.abs((box?.height ?? 0) - content) <= 2
  }
  await hp.page.getByTestId('sign-in').click()
  await visit(hp, 'LANDING')
  await expect.poll(fits).toBe(true)
  const email = newEmail('inline-person')
  await submitEmail(hp.modal, email)
  const code = await waitEmailCode(h(), email)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  await expect.poll(fits).toBe(true)
  await enterCode(hp.modal, code)
  await demoUser(hp.page, (u) => u?.email?.address === email)
})

test("behavior: render { inDialog: false } naming no parent element stays a dialog on both sides: the host SDK's <dialog>, the modal's aria-modal and Escape; the host hears why", async () => {
  const hp = await h().open({
    path: '/no-parent',
    prepare: (context) =>
      // The warning comes with init, before a listener added after the page loads.
      context
        .addInitScript(() => {
          const w = window as unknown as { warnings: string[] }
          w.warnings = []
          let client: LatchClient | undefined
          Object.defineProperty(window, 'latch', {
            configurable: true,
            get: () => client,
            set(value: LatchClient | undefined) {
              client = value
              value?.on('warning', (message) => w.warnings.push(String(message)))
            },
          })
        })
        .then(() => {}),
  })
  await expect
    .poll(() => hp.page.evaluate(() => (window as unknown as { warnings: string[] }).warnings))
    .toEqual([
      'render.inDialog is false but no render.inParentNodeId is given; the modal opens as a dialog.',
    ])
  const dialog = hp.page.locator(`dialog[data-testid="${HOST_ELEMENT_IDS.dialog}"]`)
  await expect(dialog.locator(`[data-testid="${HOST_ELEMENT_IDS.frame}"]`).count()).resolves.toBe(1)
  const login = latchCall(hp.page, 'login')
  await visit(hp, 'LANDING')
  await expect(dialog.evaluate((d: HTMLDialogElement) => d.open)).resolves.toBe(true)
  await expect(hp.modal.getByTestId('latch-modal').getAttribute('aria-modal')).resolves.toBe('true')
  // A dialog: Escape inside the modal closes it and ends the flow.
  await hp.modal.getByTestId('email-input').press('Escape')
  expect(expectRejected(await login).code).toBe('login_exited')
  await expect
    .poll(() => dialog.evaluate((d: HTMLDialogElement) => d.open), { timeout: WAIT_MS })
    .toBe(false)
})
