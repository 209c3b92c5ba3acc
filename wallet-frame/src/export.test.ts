// @vitest-environment node
/**
 * The key export page in Chromium, served by the real API, framed by a stand-in modal page on
 * another origin that speaks the real protocol (penpal 7): the modal hands the token over, the
 * page offers Reveal, and only the visitor's trusted click (here Enter on the focused button)
 * rebuilds the key (the device share from the wallet frame's memory, as the browser refuses
 * storage here) and shows it; nothing the modal sends, and no script's synthetic click, does.
 * Reveal and Copy take that click only once armed (arm.ts, as the approvals in frame.test.ts):
 * the host page fading the modal or laying a decoy over it, or a button just shown, leaves the
 * visitor's own click without effect. Nothing of the key reaches the modal or the host page.
 */
import type { AuthResponse } from '@latch/shared'
import type { Frame, Page } from 'playwright-core'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, expect, test, vi } from 'vitest'
import { axeViolations, formatViolations } from '../../e2e/src/axe.ts'
import { ARM_MS } from './arm.ts'
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

/**
 * Sizes the export page's frame in `modal` so the whole page, Copy below the shown key too, is
 * in view: a button arms only once it is entirely visible (arm.ts), and an iframe's default
 * 300×150 crops it.
 */
const exportInView = (modal: Page | Frame) =>
  modal.evaluate(() => {
    const iframe = document.getElementById('export') as HTMLIFrameElement
    iframe.style.cssText = 'display:block;width:360px;height:460px;border:0'
  })

/** The host page's styling of the modal's frame (the host page's own right). */
const styleModalFrame = (page: Page, css: string) =>
  page.evaluate((c) => {
    const iframe = document.querySelector('iframe') as HTMLIFrameElement
    iframe.style.cssText = `width:420px;height:520px;border:0;${c}`
  }, css)

/**
 * A host page framing the stand-in modal, which frames the wallet frame and the export page of
 * an automatic-recovery wallet it holds (made and recovered in this tab), all in view.
 */
async function hostedExport(page: Page): Promise<{ modal: Frame; frame: Frame; address: string }> {
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
  await styleModalFrame(page, '')
  await exportInView(modal)
  return { modal, frame, address }
}

test('behavior: the export page shows the key of the wallet’s address (viem derives it) only on the visitor’s own reveal (keyboard), with Copy; the modal hears the address only; the key never reaches the modal or the host page; axe finds nothing', async () => {
  const page = await h.browser.newPage()
  // The host page frames the stand-in modal, which frames the wallet frame and the export page.
  const { modal, frame, address } = await hostedExport(page)
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

  // The visitor's own reveal, from the keyboard, once Reveal armed (visible and unchanged for
  // ARM_MS): focus the button, press Enter.
  await expect.poll(() => reveal.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
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
  // The focus moved from the vanished button to the heading above the key, not to Copy (a key
  // press the host page lures must not copy the key); the modal heard the address only.
  expect(await frame.evaluate(() => document.activeElement?.id)).toBe('key-label')
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
  const copy = frame.locator('[data-testid="export-copy"]')
  await expect.poll(() => copy.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
  await copy.click()
  await expect.poll(() => copy.textContent()).toBe('Copied')

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
  await exportInView(page)
  expect(await shownFrame.locator('[data-testid="export-reveal"]').isHidden()).toBe(true)
  // This modal's wallet frame is new and empty: no share anywhere, so the reveal fails, says
  // so, shows nothing and can be tried again; the modal hears of no reveal.
  expect((await exportCall(page, { address, accessToken: auth.token })).ok).toEqual({ address })
  const shownReveal = shownFrame.locator('[data-testid="export-reveal"]')
  await expect.poll(() => shownReveal.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
  await shownReveal.click()
  await expect
    .poll(() => shownFrame.locator('#status').textContent(), { timeout: 15_000 })
    .toBe('Your key could not be loaded, please try again.')
  expect(await shownFrame.locator('[data-testid="export-key"]').textContent()).toBe('')
  expect(await shownFrame.locator('[data-testid="export-reveal"]').isEnabled()).toBe(true)
  expect(await revealedCalls(page)).toEqual([])
  await page.close()
})

test('refusal: the host page fades the modal or lays a decoy over it: the visitor’s own click or Enter on Reveal reveals nothing and asks nothing until Reveal has been visible and unchanged for ARM_MS; then it reveals, the focus is not on Copy (a lured Space copies nothing), and Copy copies nothing until it is armed', async () => {
  const page = await h.browser.newPage()
  // The page clock in every frame, running with real time until paused below: paused, it holds
  // the arming's ARM_MS still, so "just shown" is a moment the test clicks in, not a race.
  await page.context().clock.install()
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], {
    origin: h.apiOrigin,
  })
  const { modal, frame, address } = await hostedExport(page)
  const reveal = frame.locator('[data-testid="export-reveal"]')
  const copy = frame.locator('[data-testid="export-copy"]')
  const keyBox = frame.locator('[data-testid="export-key"]')
  // Every request the export page makes, and every text it writes to the clipboard.
  const requests: string[] = []
  page.on('request', (req) => {
    if (req.frame().url().includes('/embedded-wallets/export')) requests.push(req.url())
  })
  await frame.evaluate(() => {
    const w = window as unknown as { copied: string[] }
    w.copied = []
    const write = navigator.clipboard.writeText.bind(navigator.clipboard)
    navigator.clipboard.writeText = (text: string) => {
      w.copied.push(text)
      return write(text)
    }
  })
  const copied = () => frame.evaluate(() => (window as unknown as { copied: string[] }).copied)
  /** The visitor's own click on Reveal (forced: Playwright waits for an armed one), then Enter. */
  const clickReveal = async () => {
    await reveal.click({ force: true })
    await reveal.focus()
    await page.keyboard.press('Enter')
  }
  const nothingRevealed = async (when: string) => {
    await pause(300)
    expect(await keyBox.textContent(), when).toBe('')
    expect(await keyBox.isHidden(), when).toBe(true)
    expect(await reveal.isVisible(), when).toBe(true)
    expect(requests, when).toEqual([])
    expect(await revealedCalls(modal), when).toEqual([])
  }

  // The host page makes the modal transparent over its decoy, then the modal shows the page:
  // Reveal never arms, and the click that lands on it does nothing.
  await styleModalFrame(page, 'opacity:0')
  expect(await exportCall(modal, { address, accessToken: auth.token })).toEqual({
    ok: { address },
  })
  await pause(ARM_MS + 500)
  expect(await reveal.getAttribute('aria-disabled')).toBe('true')
  await clickReveal()
  await nothingRevealed('in a transparent frame')

  // Opaque, under a decoy the pointer goes through: still unarmed, still nothing.
  await styleModalFrame(page, '')
  await page.evaluate(() => {
    const decoy = document.createElement('div')
    decoy.id = 'decoy'
    decoy.textContent = 'Click here to claim your prize'
    decoy.style.cssText = 'position:fixed;inset:0;background:#fff;pointer-events:none'
    document.body.append(decoy)
  })
  await pause(ARM_MS + 500)
  expect(await reveal.getAttribute('aria-disabled')).toBe('true')
  await clickReveal()
  await nothingRevealed('under a decoy')

  // The decoy goes and the clock stands still: Reveal is visible but not yet for ARM_MS.
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1000)
  await page.evaluate(() => document.getElementById('decoy')?.remove())
  await pause(ARM_MS + 500)
  expect(await reveal.getAttribute('aria-disabled')).toBe('true')
  await clickReveal()
  await nothingRevealed('just uncovered')
  await page.clock.runFor(ARM_MS - 1)
  expect(await reveal.getAttribute('aria-disabled')).toBe('true')
  await clickReveal()
  await nothingRevealed(`visible for ${ARM_MS - 1} ms`)

  // Visible and unchanged for ARM_MS: armed, and the visitor's Enter reveals as before.
  await page.clock.runFor(1)
  await expect.poll(() => reveal.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
  await reveal.focus()
  await page.keyboard.press('Enter')
  await keyBox.waitFor({ state: 'visible', timeout: 15_000 })
  const key = (await keyBox.textContent()) ?? ''
  expect(privateKeyToAccount(key as `0x${string}`).address).toBe(address)
  await expect.poll(() => revealedCalls(modal)).toEqual([JSON.stringify({ address })])
  // The record sees the reveal's own request (the auth share): its silence before meant none.
  expect(requests.length).toBeGreaterThan(0)
  // The focus is on the heading, not on Copy, which is shown but not armed yet (the clock holds
  // its ARM_MS, counted from when the browser reports it visible: given the time to).
  expect(await frame.evaluate(() => document.activeElement?.id)).toBe('key-label')
  await pause(ARM_MS + 500)
  expect(await copy.getAttribute('aria-disabled')).toBe('true')

  // Copy armed, the focus where the reveal left it: the Space (or Enter) a host page lures
  // copies nothing.
  await page.clock.runFor(ARM_MS)
  await expect.poll(() => copy.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
  await page.keyboard.press('Space')
  await page.keyboard.press('Enter')
  await pause(300)
  expect(await copied()).toEqual([])

  // Copy unarmed: in a transparent frame, then just shown again. The visitor's click and keys
  // on it copy nothing.
  const copyRefused = async (when: string) => {
    expect(await copy.getAttribute('aria-disabled'), when).toBe('true')
    await copy.click({ force: true })
    await copy.focus()
    await page.keyboard.press('Space')
    await page.keyboard.press('Enter')
    await pause(300)
    expect(await copied(), when).toEqual([])
    expect(await copy.textContent(), when).toBe('Copy')
  }
  await styleModalFrame(page, 'opacity:0')
  await expect.poll(() => copy.getAttribute('aria-disabled'), { timeout: 5000 }).toBe('true')
  await copyRefused('in a transparent frame')
  await styleModalFrame(page, '')
  await pause(ARM_MS + 500)
  await copyRefused('just shown again')

  // Armed again: the visitor's click copies the key.
  await page.clock.resume()
  await expect.poll(() => copy.getAttribute('aria-disabled'), { timeout: 5000 }).toBeNull()
  await copy.click()
  // The label says 'Copied' only for COPIED_LABEL_MS (the first test reads it): what was written
  // is the check here, and that the write succeeded.
  await expect.poll(copied, { timeout: 5000 }).toEqual([key])
  expect(await frame.locator('#status').textContent()).toBe(
    'Your private key is below. Keep it secret.',
  )
  await page.close()
})
