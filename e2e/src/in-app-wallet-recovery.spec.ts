/**
 * Recovering the in-app wallet on a new device (another browser context) across three origins:
 * with the passcode, wrong passcodes and the lock after 5 (automatic recovery without a prompt
 * is proven in in-app-wallet-keys.spec.ts, beside its leak check). The default cross-site
 * deployment: the frame may not store its share, so a reload is a new device too.
 */
import type { WalletAccount } from '@latch/shared'
import { expect, test } from 'vitest'
import { expectModalAccessible } from './axe.ts'
import {
  expectOk,
  expectRejected,
  newEmail,
  screen,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import { WAIT_MS, waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'
import {
  createWithPasscode,
  enterPasscode,
  recordEvents,
  recoverWithPasscode,
  recoveryMessage,
  SCREENS,
  TEXTS,
  walletApp,
  walletCall,
} from './wallet-flows.ts'

const h = useHarness()

test('behavior: a new device recovers with the passcode; a wrong one shows the message and the host hears of it; a reload recovers again', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  const email = newEmail('recover')
  const first = await h().open({ appId: app.id })
  await signInByEmail(h(), first, email)
  const wallet = await createWithPasscode(first, 'N3wDev')

  const device = await h().open({ appId: app.id })
  await signInByEmail(h(), device, email)
  const analytics = await recordEvents(device.page, [
    'recovery_started',
    'recovery_completed',
    'wallet_recovery_failed',
  ])
  const pending = walletCall<WalletAccount>(device.page, 'recoverWallet')
  await visit(device, SCREENS.recovery)
  const recovery = screen(device.modal, SCREENS.recovery)
  await recovery.getByText('Load your account').waitFor()
  await recovery
    .getByText("We haven't seen this device yet. To continue, please enter your passcode.")
    .waitFor()
  await enterPasscode(device.modal, 'wr0ng1')
  await recovery.getByRole('button', { name: 'Recover your account' }).click()
  await recoveryMessage(device.modal, TEXTS.invalidPasscode).waitFor()
  await expectModalAccessible(device.page, 'the recovery screen with a wrong passcode')
  await enterPasscode(device.modal, 'N3wDev')
  await recovery.getByRole('button', { name: 'Recover your account' }).click()
  expect(expectOk(await settle(pending, 'recoverWallet()')).address).toBe(wallet.address)
  // One start per submit, the host told of the wrong passcode, one completion.
  expect(await analytics()).toEqual([
    'recovery_started',
    'wallet_recovery_failed',
    'recovery_started',
    'recovery_completed',
  ])
  // Usable now: a second call passes the gate at once.
  expect(
    expectOk(await settle(walletCall<WalletAccount>(device.page, 'recoverWallet'))).address,
  ).toBe(wallet.address)

  // Cross-site the frame may not keep the share: after a reload the device is new again and
  // the recovery screen is the normal path.
  await first.page.reload({ waitUntil: 'load' })
  await waitReady(first)
  expect((await recoverWithPasscode(first, 'N3wDev')).address).toBe(wallet.address)
})

test('error: wrong passcodes show the message; the fifth locks recovery, even for the right one; closing reports the exit', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  const email = newEmail('lockout')
  const device = await h().open({ appId: app.id })
  await signInByEmail(h(), device, email)
  await createWithPasscode(device, 'L0ckMe')
  // Reloaded, the page is a device without the share (the test above proves it).
  await device.page.reload({ waitUntil: 'load' })
  await waitReady(device)
  const pending = walletCall<WalletAccount>(device.page, 'recoverWallet')
  await visit(device, SCREENS.recovery)
  const submit = screen(device.modal, SCREENS.recovery).getByRole('button', {
    name: 'Recover your account',
  })
  const wallet = () =>
    h()
      .api.deps.db.selectFrom('wallets')
      .select(['failed_attempts', 'evaluated_at', 'locked_until'])
      .where('app_id', '=', app.id)
      .executeTakeFirstOrThrow()
  // Each guess is answered (counted, its evaluation spent) before the next is typed.
  const answered = (failures: number) =>
    expect
      .poll(
        async () => {
          const row = await wallet()
          return row.failed_attempts === failures && row.evaluated_at === null
        },
        { timeout: WAIT_MS },
      )
      .toBe(true)
  for (let n = 1; n <= 5; n++) {
    await enterPasscode(device.modal, `wrong${n}`)
    await submit.click()
    await answered(n)
    if (n < 5) await recoveryMessage(device.modal, TEXTS.invalidPasscode).waitFor()
  }
  // The fifth wrong one locks: its answer already says so.
  await recoveryMessage(device.modal, TEXTS.locked).waitFor()
  expect((await wallet()).locked_until).not.toBeNull()
  await expectModalAccessible(device.page, 'the recovery screen, locked')
  // Locked: even the right passcode cannot be sent while the wait lasts.
  await enterPasscode(device.modal, 'L0ckMe')
  await device.modal.getByTestId('passcode-input-5').press('Enter')
  expect(await submit.isDisabled()).toBe(true)
  expect((await wallet()).failed_attempts).toBe(5)
  await device.page.keyboard.press('Escape')
  expect(expectRejected(await settle(pending)).message).toBe(TEXTS.recoveryExited)
})
