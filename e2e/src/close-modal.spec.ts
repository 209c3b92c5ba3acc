import { ERRORS, HOST_ELEMENT_IDS, type LoginResult } from '@latch/shared'
import { expect, test } from 'vitest'
import {
  expectRejected,
  latchCall,
  newEmail,
  settle,
  signedInByCode,
  submitEmail,
  visit,
  waitEmailCode,
} from './flows.ts'
import type { HostPage } from './harness.ts'
import { WAIT_MS } from './harness.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

/** Calls login() and waits for the landing; answers the pending call (wrapped, not awaited). */
async function openLanding(hp: HostPage) {
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  return { pending }
}

const dialogVisible = (hp: HostPage) => hp.page.getByTestId(HOST_ELEMENT_IDS.dialog).isVisible()

test('behavior: Escape closes the dialog and rejects the pending login()', async () => {
  const hp = await h().open()
  const { pending } = await openLanding(hp)
  // Focus is inside the frame; the modal relays the key to the host.
  await hp.modal.getByTestId('email-input').click()
  await hp.page.keyboard.press('Escape')
  const error = expectRejected(await settle(pending, 'login()'))
  expect(error.code).toBe('login_exited')
  expect(error.message).toBe(ERRORS.login_exited.message)
  await expect.poll(() => dialogVisible(hp), { timeout: WAIT_MS }).toBe(false)

  // The preloaded frame opens again.
  const { pending: again } = await openLanding(hp)
  await hp.page.keyboard.press('Escape')
  expect(expectRejected(await settle(again, 'login()')).code).toBe('login_exited')
})

test('behavior: the close button rejects the pending login() and gives focus back', async () => {
  const hp = await h().open()
  const opener = hp.page.getByTestId('link-email')
  await opener.focus()
  const { pending } = await openLanding(hp)
  await hp.modal.getByTestId('close-button').click()
  const error = expectRejected(await settle(pending, 'login()'))
  expect(error.code).toBe('login_exited')
  await expect.poll(() => dialogVisible(hp), { timeout: WAIT_MS }).toBe(false)
  await expect
    .poll(() => hp.page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
    .toBe('link-email')
})

test('behavior: the SDK start, opening and closing reach /analytics_events and are accepted', async () => {
  const context = await h().browser.newContext()
  const events: { name: string; status: number }[] = []
  context.on('requestfinished', async (request) => {
    if (!request.url().endsWith('/api/v1/analytics_events')) return
    const body = request.postDataJSON() as { event_name?: string } | null
    const response = await request.response()
    events.push({ name: body?.event_name ?? '?', status: response?.status() ?? 0 })
  })
  try {
    const hp = await h().open({ context })
    const { pending } = await openLanding(hp)
    await hp.modal.getByTestId('close-button').click()
    expectRejected(await settle(pending, 'login()'))
    const names = () => events.map((e) => e.name)
    await expect
      .poll(names, { timeout: WAIT_MS })
      .toEqual(expect.arrayContaining(['sdk_initialize', 'modal_open', 'modal_closed']))
    for (const event of events) expect(event.status, event.name).toBeLessThan(300)
  } finally {
    await context.close()
  }
})

test('error: a screen whose code did not load shows the general error view; closing it rejects login() with modal_unreachable, the modal page reloads, and the next login() loads that screen and signs in', async () => {
  // The code screen's chunk fails once, as a dropped connection would fail it.
  const asked: string[] = []
  const hp = await h().open({
    prepare: async (context) => {
      await context.route(`${h().modalUrl}/assets/AwaitingPasswordlessCode-*.js`, (route) => {
        asked.push(route.request().url())
        return asked.length === 1 ? route.abort('connectionreset') : route.continue()
      })
    },
  })
  const first = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  const stranger = newEmail('chunk')
  await submitEmail(hp.modal, stranger)
  await waitEmailCode(h(), stranger)
  // In place of the code screen: 'Something went wrong' (visit holds it to axe).
  await visit(hp, 'error')
  expect(await hp.modal.getByRole('heading', { level: 1 }).textContent()).toBe(
    ERRORS.something_went_wrong.message,
  )
  const reloaded = hp.page.waitForEvent('framenavigated', {
    predicate: (frame) => frame.url().startsWith(h().modalUrl),
    timeout: WAIT_MS,
  })
  // Awaited below; kept from going unhandled when an assertion before fails.
  reloaded.catch(() => {})
  await hp.modal.getByTestId('error-close').click()
  // The modal failed, not the visitor: the caller hears so.
  const error = expectRejected(await settle(first, 'login()'))
  expect(error.code).toBe('modal_unreachable')
  await expect.poll(() => dialogVisible(hp), { timeout: WAIT_MS }).toBe(false)

  // The modal's page reloads (a call made before it has would end with it), and asks for the
  // chunk again: this time it arrives.
  await (await reloaded).waitForLoadState('load')
  const second = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  const email = newEmail('chunk-again')
  await submitEmail(hp.modal, email)
  const code = await waitEmailCode(h(), email)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  const { user } = await signedInByCode(hp, code, second)
  expect(user.email?.address).toBe(email)
  expect(asked.length).toBe(2)
})
