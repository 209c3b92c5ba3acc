import { KEY_EXPORT_MIN_DISPLAY_MS } from '@latch/shared'
import type { Frame, Page } from 'playwright-core'
import { privateKeyToAccount } from 'viem/accounts'
import { expect, test } from 'vitest'
import { axeViolations, formatViolations } from './axe.ts'
import {
  expectRejected,
  latchCall,
  newEmail,
  type Outcome,
  screen,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import { type HostPage, WAIT_MS, waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'
import {
  createWallet,
  createWithPasscode,
  enterPasscode,
  recordTraffic,
  SCREENS,
  sharedOnce,
  type Traffic,
  walletApp,
} from './wallet-flows.ts'

const h = useHarness()
const EXPORT_SCREEN = 'EMBEDDED_WALLET_KEY_EXPORT_SCREEN'
const EXITED = 'User exited before their wallet could be exported'
const NOT_ALLOWED = 'User must be authenticated and have a wallet before it can be exported'

const exportWallet = (page: Page) => latchCall<void>(page, 'exportWallet' as never)

/** The export page's frame inside the modal, once loaded. */
async function exportFrame(hp: HostPage): Promise<Frame> {
  await hp.modal.getByTestId('latch-export-frame').waitFor({ state: 'attached' })
  const handle = await hp.modal.getByTestId('latch-export-frame').elementHandle()
  const frame = await handle?.contentFrame()
  if (!frame) throw new Error('the export frame is not in the modal')
  return frame
}

/** Clicks Reveal inside the export page (a real click) and answers the key it then shows. */
async function revealedKey(hp: HostPage): Promise<{ key: string; frame: Frame }> {
  const frame = await exportFrame(hp)
  await frame.getByRole('button', { name: 'Reveal private key' }).click({ timeout: 15_000 })
  const box = frame.getByTestId('export-key')
  await box.waitFor({ state: 'visible' })
  return { key: (await box.textContent()) ?? '', frame }
}

/**
 * The user the first and third tests share: signed in on a page of its own whose traffic is
 * recorded from its start, with an in-app wallet created without a passcode.
 */
const exporter = sharedOnce(async () => {
  const app = await walletApp(h(), {})
  let traffic: Traffic | undefined
  const hp = await h().open({
    kept: true,
    appId: app.id,
    prepare: async (context) => {
      traffic = await recordTraffic(context, h().apiUrl)
    },
  })
  if (!traffic) throw new Error('no traffic recorded')
  await signInByEmail(h(), hp, newEmail('export'))
  const wallet = await createWallet(hp)
  return { hp, wallet, traffic }
})

/** The shared user, its dialog closed (as the test before left it). */
async function walletUser() {
  const user = await exporter()
  await user.hp.page.waitForFunction(
    () => document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === false,
    undefined,
    { timeout: WAIT_MS },
  )
  return user
}

test('behavior: exportWallet() shows no key until the visitor clicks Reveal inside the export page, then a key whose address is the wallet’s, held ≥ 1 s (Done, close and Escape do nothing until then), resolves on Done; the key is in no message or request of the host page or the modal; the export page passes axe', async () => {
  const { hp, wallet, traffic } = await walletUser()

  const pending = exportWallet(hp.page)
  await visit(hp, EXPORT_SCREEN)
  // Armed, not shown: the page offers Reveal and holds no key, however long the modal waits.
  // Longer than the minimum display, so the hold below can only count from the reveal.
  const armed = await exportFrame(hp)
  await armed.getByRole('button', { name: 'Reveal private key' }).waitFor({ timeout: 15_000 })
  // Reveal takes a click once it has been visible and unchanged for a moment (the export page's
  // arming, a timer of the page clock): armed before that clock stands still below.
  await expect
    .poll(
      () => armed.getByRole('button', { name: 'Reveal private key' }).getAttribute('aria-disabled'),
      {
        timeout: 15_000,
      },
    )
    .toBeNull()
  // The page clock (every frame's) runs 1.5 s on: a hold counted from anything before the
  // reveal would run out here.
  await hp.page.clock.fastForward(1500)
  expect(await armed.getByTestId('export-key').textContent()).toBe('')
  expect(await hp.modal.getByTestId('export-done').isDisabled()).toBe(true)
  // The page clock (every frame's) stands still from here: the hold is counted by the modal's
  // own timer alone, never cut short because this machine was slow between two reads.
  const now = await hp.page.evaluate(() => Date.now())
  await hp.page.clock.pauseAt(now + 1000)
  const { key, frame } = await revealedKey(hp)
  // Right when the key shows, the screen cannot be left (the 1 s counts from the reveal).
  const done = hp.modal.getByTestId('export-done')
  const close = hp.modal.getByTestId('close-button')
  expect(await done.isDisabled()).toBe(true)
  expect(await close.isDisabled()).toBe(true)
  await done.press('Escape').catch(() => {})
  expect(await screen(hp.modal, EXPORT_SCREEN).isVisible()).toBe(true)
  // SPEC's key export minimum display: 1 s from the reveal, not a millisecond less.
  await hp.page.clock.runFor(KEY_EXPORT_MIN_DISPLAY_MS - 1)
  expect(await done.isDisabled()).toBe(true)
  expect(await close.isDisabled()).toBe(true)
  await hp.page.clock.runFor(1)
  await hp.page.clock.resume()
  await expect.poll(() => done.isEnabled(), { timeout: 5000 }).toBe(true)

  expect(key).toMatch(/^0x[0-9a-f]{64}$/)
  expect(privateKeyToAccount(key as `0x${string}`).address).toBe(wallet.address)
  // With the clock running (axe's own timers run on it).
  const violations = await axeViolations(frame)
  expect(violations, formatViolations('the export page', violations)).toEqual([])

  // After the minimum display, Done ends the flow and exportWallet() resolves.
  await done.click()
  const outcome: Outcome<void> = await settle(pending, 'exportWallet()')
  expect(outcome.ok).toBe(true)

  // Nothing of the key outside the wallet origin: messages, requests and answers.
  const corpus = await traffic.corpus()
  expect(corpus.toLowerCase()).toContain(wallet.address.toLowerCase().slice(2))
  expect(traffic.messages.length).toBeGreaterThan(0)
  expect(corpus.toLowerCase()).not.toContain(key.slice(2))
  expect(corpus).not.toContain(Buffer.from(key.slice(2), 'hex').toString('base64'))
})

test('behavior: on a device without the share (cross-site, a reload) exportWallet() asks for the passcode first; closing the recovery screen rejects with the export exit text; after recovery the key shown is the wallet’s', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  const device = await h().open({ appId: app.id })
  await signInByEmail(h(), device, newEmail('export-device'))
  const wallet = await createWithPasscode(device, 'Exp0rt')
  // Cross-site the frame keeps its share in memory only: reloaded, the page has none.
  await device.page.reload({ waitUntil: 'load' })
  await waitReady(device)
  const leaving = exportWallet(device.page)
  await visit(device, SCREENS.recovery)
  await device.modal.getByTestId('close-button').click()
  expect(expectRejected(await settle(leaving, 'exportWallet()')).message).toBe(EXITED)

  const pending = exportWallet(device.page)
  await visit(device, SCREENS.recovery)
  await enterPasscode(device.modal, 'Exp0rt')
  await device.modal.getByRole('button', { name: 'Recover your account' }).click()
  await visit(device, EXPORT_SCREEN)
  const { key } = await revealedKey(device)
  expect(privateKeyToAccount(key as `0x${string}`).address).toBe(wallet.address)
  const done = device.modal.getByTestId('export-done')
  await expect.poll(() => done.isEnabled(), { timeout: 5000 }).toBe(true)
  await done.click()
  expect((await settle(pending, 'exportWallet()')).ok).toBe(true)
})

test('behavior: leaving the export screen before the reveal (Escape, the export page holding the focus) rejects with the export exit text; the key was never shown', async () => {
  const { hp } = await walletUser()
  const pending = exportWallet(hp.page)
  await visit(hp, EXPORT_SCREEN)
  const frame = await exportFrame(hp)
  await frame.getByRole('button', { name: 'Reveal private key' }).waitFor({ timeout: 15_000 })
  expect(await frame.getByTestId('export-key').textContent()).toBe('')
  // Not held: the minimum display counts from a reveal, and there was none.
  expect(await hp.modal.getByTestId('close-button').isEnabled()).toBe(true)
  // The page's own document hears the key: it tells the modal, which closes as its Escape does.
  await frame.getByRole('button', { name: 'Reveal private key' }).focus()
  await hp.page.keyboard.press('Escape')
  expect(expectRejected(await settle(pending, 'exportWallet()')).message).toBe(EXITED)
  // The screen took the page (and the token it held) with it.
  expect(await hp.modal.getByTestId('latch-export-frame').count()).toBe(0)
})

test('refusal: signed out, or signed in without an in-app wallet, exportWallet() rejects with the spec’s text and opens nothing', async () => {
  const app = await walletApp(h(), {})
  const hp = await h().open({ appId: app.id })
  expect(expectRejected(await settle(exportWallet(hp.page))).message).toBe(NOT_ALLOWED)
  await signInByEmail(h(), hp, newEmail('export-none'))
  expect(expectRejected(await settle(exportWallet(hp.page))).message).toBe(NOT_ALLOWED)
  expect(await hp.page.getByTestId('latch-dialog').isVisible()).toBe(false)
})
