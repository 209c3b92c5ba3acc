// @vitest-environment node
/**
 * The key export page in Chromium, served by the real API, framed by a stand-in modal page on
 * another origin that speaks the real protocol (penpal 7): the modal hands the token over, the
 * page offers Reveal, and only the visitor's trusted click (here Enter on the focused button)
 * rebuilds the key (the device share from the wallet frame's memory, as the browser refuses
 * storage here) and shows it; nothing the modal sends, and no script's synthetic click, does.
 * Nothing of the key reaches the modal or the host page.
 */
import type { AuthResponse } from '@latch/shared'
import type { Frame, Page } from 'playwright-core'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { axeViolations, formatViolations } from '../../e2e/src/axe.ts'
import { type Answer, startWalletHarness, type WalletHarness } from './test/harness.ts'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 })

let h: WalletHarness
let auth: AuthResponse

beforeAll(async () => {
  h = await startWalletHarness()
})

afterAll(async () => {
  await h?.close()
})

const exportCall = (page: Page | Frame, arg: unknown) =>
  page.evaluate(
    (a) => (window as unknown as { exportCall(a: unknown): Promise<Answer> }).exportCall(a),
    arg,
  )

/** The export page's frame inside the stand-in modal. */
async function exportFrame(target: Page | Frame): Promise<Frame> {
  const handle = await target.locator('#export').elementHandle()
  const frame = await handle?.contentFrame()
  if (!frame) throw new Error('no export frame')
  await frame.waitForLoadState('load', { timeout: 15_000 })
  return frame
}

/** Creates an automatic-recovery wallet in a fresh stand-in modal that also frames the export page. */
async function createdWallet(page: Page, base = h.modalOrigin): Promise<string> {
  // The export page is loaded for the address, so the wallet is made first in a plain modal.
  await page.goto(h.modalUrl(base, 15_000))
  auth = await h.signIn(page, `export.refusal.${Date.now()}@example.com`)
  const created = await h.call(page, 'latch:wallet:create', { accessToken: auth.token })
  const address = created.ok?.address
  if (!address) throw new Error(`create failed: ${JSON.stringify(created)}`)
  return address
}

const REVEAL_PROMPT = 'Your private key is hidden. Reveal it only where nobody can see your screen.'
const revealedCalls = (modal: Frame | Page) =>
  modal.evaluate(() => (window as unknown as { revealed: string[] }).revealed)
/** Lets anything that would wrongly reveal the key have its chance. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test('behavior: the export page shows the key of the wallet’s address (viem derives it) only on the visitor’s own reveal (keyboard), with Copy; the modal hears the address only; the key never reaches the modal or the host page; axe finds nothing', async () => {
  const page = await h.browser.newPage()
  // The host page frames the stand-in modal, which frames the wallet frame and the export page.
  const hostUrl = (address: string) =>
    `${h.hostOrigin}/host?modal=${encodeURIComponent(
      h.modalUrl(
        h.modalOrigin,
        15_000,
        h.appId,
        `address=${address}&width=320&background=%23ffffff&foreground=%231e1e1d&accent=%235F66EB&accentForeground=%23FFFFFF`,
      ),
    )}`
  // A wallet made in this host page's modal lives in that wallet frame's memory only (the
  // browser refuses the cross-site frame storage), so the same page must make and export it.
  await page.goto(
    `${h.hostOrigin}/host?modal=${encodeURIComponent(h.modalUrl(h.modalOrigin, 15_000))}`,
  )
  const firstModal = page.frames().find((f) => f.url().startsWith(h.modalOrigin))
  if (!firstModal) throw new Error('no modal frame')
  auth = await h.signIn(firstModal, `export.${Date.now()}@example.com`)
  const created = await h.call(firstModal, 'latch:wallet:create', { accessToken: auth.token })
  const address = created.ok?.address as string
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  // Now a modal with the export page, in the same tab and partition: a new wallet frame whose
  // memory is empty. Recover it (automatic), as the modal's gate does before the export screen.
  await page.goto(hostUrl(address))
  const modal = page.frames().find((f) => f.url().startsWith(h.modalOrigin))
  if (!modal) throw new Error('no modal frame')
  expect(
    (await h.call(modal, 'latch:wallet:recover', { address, accessToken: auth.token })).ok,
  ).toEqual({ address })
  const frame = await exportFrame(modal)
  await expect
    .poll(() => frame.locator('#status').textContent(), { timeout: 15_000 })
    .toBe('Loading your key…')
  expect(await frame.locator('[data-testid="export-key"]').isHidden()).toBe(true)

  // The modal's show arms the page: the Reveal button, no key.
  const armed = await exportCall(modal, { address, accessToken: auth.token })
  expect(armed).toEqual({ ok: { address } })
  const reveal = frame.locator('[data-testid="export-reveal"]')
  expect(await frame.locator('#status').textContent()).toBe(REVEAL_PROMPT)
  expect(await reveal.isVisible()).toBe(true)
  expect(await frame.getByRole('button', { name: 'Reveal private key' }).count()).toBe(1)
  let violations = await axeViolations(frame)
  expect(violations, formatViolations('the export page before the reveal', violations)).toEqual([])
  // Nothing the modal can send reveals it: show again, as often as it likes.
  for (let i = 0; i < 3; i++) {
    expect(await exportCall(modal, { address, accessToken: auth.token })).toEqual({
      ok: { address },
    })
  }
  // Nor a script's click inside the page (untrusted events: click(), dispatchEvent, Enter).
  await frame.evaluate(() => {
    const button = document.getElementById('reveal') as HTMLButtonElement
    button.click()
    button.dispatchEvent(new MouseEvent('click', { bubbles: true }))
    button.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }))
  })
  await pause(500)
  expect(await frame.locator('[data-testid="export-key"]').textContent()).toBe('')
  expect(await frame.locator('[data-testid="export-key"]').isHidden()).toBe(true)
  expect(await revealedCalls(modal)).toEqual([])

  // The visitor's own reveal, from the keyboard: focus the button, press Enter.
  await reveal.focus()
  await page.keyboard.press('Enter')
  const keyBox = frame.locator('[data-testid="export-key"]')
  await keyBox.waitFor({ state: 'visible', timeout: 15_000 })
  const key = (await keyBox.textContent()) ?? ''
  expect(key).toMatch(/^0x[0-9a-f]{64}$/)
  expect(privateKeyToAccount(key as `0x${string}`).address).toBe(address)
  expect(await frame.locator('[data-testid="export-copy"]').isVisible()).toBe(true)
  expect(await reveal.isHidden()).toBe(true)
  expect(await frame.locator('#status').textContent()).toBe(
    'Your private key is below. Keep it secret.',
  )
  // The focus moved from the vanished button to Copy; the modal heard the address only.
  expect(await frame.evaluate(() => document.activeElement?.id)).toBe('copy')
  await expect.poll(() => revealedCalls(modal)).toEqual([JSON.stringify({ address })])
  // Escape with the focus on the page is the modal's to act on: the page tells it, and the key
  // stays on screen (the modal holds closing for the key's minimum display).
  await page.keyboard.press('Escape')
  await expect
    .poll(() =>
      modal.evaluate(() => (window as unknown as { exportEscapes: number }).exportEscapes),
    )
    .toBe(1)
  expect(await keyBox.textContent()).toBe(key)

  // Copy writes the key to the clipboard (the page is allowed clipboard-write by its frame).
  await h.browser.contexts()[0]?.grantPermissions(['clipboard-read', 'clipboard-write'], {
    origin: h.apiOrigin,
  })
  await frame.locator('[data-testid="export-copy"]').click()
  await expect.poll(() => frame.locator('[data-testid="export-copy"]').textContent()).toBe('Copied')

  // Every message the modal and the host page received, in any form, lacks the key.
  const hex = key.slice(2)
  for (const target of [modal, page] as const) {
    const received = await target.evaluate(
      () => (window as unknown as { received: string[] }).received,
    )
    // The modal hears penpal's handshake and answers; the host page hears nothing at all.
    if (target === modal) expect(received.length).toBeGreaterThan(0)
    expect(received.some((m) => m.toLowerCase().includes(hex))).toBe(false)
  }
  violations = await axeViolations(frame)
  expect(violations, formatViolations('the export page', violations)).toEqual([])
  await page.close()
})

test('refusal: a page of another origin framing the export page gets no answer, no Reveal and no key; a wrong address or no token is refused; a reveal without the device share shows an error and no key', async () => {
  const page = await h.browser.newPage()
  const address = await createdWallet(page)
  // The stand-in "modal" served from the host origin: frame-ancestors lets it frame the page
  // (it is the app's origin), but the page answers the modal origin only.
  await page.goto(h.modalUrl(h.hostOrigin, 3_000, h.appId, `address=${address}`))
  const stranger = await exportCall(page, { address, accessToken: auth.token })
  expect(stranger.error?.code).toBe('CONNECTION_TIMEOUT')
  const frame = await exportFrame(page)
  expect(await frame.locator('[data-testid="export-key"]').textContent()).toBe('')
  expect(await frame.locator('[data-testid="export-reveal"]').isHidden()).toBe(true)

  // From the modal origin: the address must be the page's, and a token must come along.
  await page.goto(h.modalUrl(h.modalOrigin, 15_000, h.appId, `address=${address}`))
  const other = `0x${'12'.repeat(20)}`
  for (const arg of [
    { address: other, accessToken: auth.token },
    { address },
    { address, accessToken: '' },
    null,
  ]) {
    expect((await exportCall(page, arg)).error?.code, JSON.stringify(arg)).toBe(
      'invalid_request_arguments',
    )
  }
  // Refused arguments armed nothing.
  const shownFrame = await exportFrame(page)
  expect(await shownFrame.locator('[data-testid="export-reveal"]').isHidden()).toBe(true)
  // This modal's wallet frame is new and empty: no share anywhere, so the reveal fails, says
  // so, shows nothing and can be tried again; the modal hears of no reveal.
  expect((await exportCall(page, { address, accessToken: auth.token })).ok).toEqual({ address })
  await shownFrame.locator('[data-testid="export-reveal"]').click()
  await expect
    .poll(() => shownFrame.locator('#status').textContent(), { timeout: 15_000 })
    .toBe('Your key could not be loaded, please try again.')
  expect(await shownFrame.locator('[data-testid="export-key"]').textContent()).toBe('')
  expect(await shownFrame.locator('[data-testid="export-reveal"]').isEnabled()).toBe(true)
  expect(await revealedCalls(page)).toEqual([])
  await page.close()
})
