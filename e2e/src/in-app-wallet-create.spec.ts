/**
 * Creating the in-app wallet across three origins (cross-site: the browser refuses the wallet
 * frame storage): with a typed passcode, with a generated one copied and later used on a new
 * device, automatically when the app asks for no passcode; one wallet per user.
 */
import type { User, WalletAccount } from '@latch/shared'
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
  enterPasscode,
  expectInAppWallet,
  passcodeAsked,
  passcodeBoxes,
  recordEvents,
  recordScreens,
  recordUserEvents,
  recoverWithPasscode,
  runOutCreatedScreen,
  SCREENS,
  screensSeen,
  sharedOnce,
  TEXTS,
  walletApp,
  walletCall,
} from './wallet-flows.ts'

const h = useHarness()

/**
 * The visitor the first two tests share, on an app that asks for a passcode: a page of its own,
 * signed out until signedIn() (the first test proves the refusals before it); the second test
 * creates its wallet.
 */
const visitor = sharedOnce(async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  return {
    hp: await h().open({ appId: app.id, kept: true }),
    signIn: undefined as Promise<unknown> | undefined,
  }
})

/** The shared visitor, signed in (once) as a new user. */
async function signedIn() {
  const v = await visitor()
  v.signIn ??= signInByEmail(h(), v.hp, newEmail('create-passcode'))
  await v.signIn
  return v.hp
}

test('error: signed out, both calls refuse with the SPEC texts; without a wallet recovery is refused; leaving the create screen rejects with the exit', async () => {
  const { hp } = await visitor()
  expect(expectRejected(await settle(walletCall(hp.page, 'createWallet'))).message).toBe(
    TEXTS.createSignedOut,
  )
  expect(expectRejected(await settle(walletCall(hp.page, 'recoverWallet'))).message).toBe(
    TEXTS.recoverNotAllowed,
  )
  await signedIn()
  expect(expectRejected(await settle(walletCall(hp.page, 'recoverWallet'))).message).toBe(
    TEXTS.recoverNotAllowed,
  )
  const pending = walletCall<WalletAccount>(hp.page, 'createWallet')
  await visit(hp, SCREENS.create)
  await hp.page.keyboard.press('Escape')
  const exited = expectRejected(await settle(pending, 'createWallet()'))
  expect(exited).toMatchObject({ code: 'create_exited', message: TEXTS.createExited })
  // Nothing was created: the next call opens the screen again.
  const again = walletCall<WalletAccount>(hp.page, 'createWallet')
  await visit(hp, SCREENS.create)
  await hp.page.keyboard.press('Escape')
  expect(expectRejected(await settle(again)).message).toBe(TEXTS.createExited)
})

test('behavior: create with a passcode — validation, the button, the user event with user.wallet; a second create is refused', async () => {
  // The user the test before signed in, still without a wallet (it left both creations).
  const hp = await signedIn()
  const userEvents = await recordUserEvents(hp.page)
  const analytics = await recordEvents(hp.page, [
    'embedded_wallet_creation_started',
    'embedded_wallet_creation_completed',
  ])

  const pending = walletCall<WalletAccount>(hp.page, 'createWallet')
  await visit(hp, SCREENS.create)
  const create = screen(hp.modal, SCREENS.create)
  await create.getByText('Set your passcode').waitFor()
  await create.getByText('Passcode can be letters and numbers').waitFor()
  await create.getByText('Why am I doing this?').waitFor()
  const submit = create.getByRole('button', { name: 'Set passcode' })
  expect(await passcodeBoxes(hp.modal).count()).toBe(6)
  expect(await submit.isDisabled()).toBe(true)
  await enterPasscode(hp.modal, 'ab#', { typed: true })
  await create.getByText('Passcode can only be letters and numbers').waitFor()
  await expectModalAccessible(hp.page, 'the create screen with its validation message')
  expect(await submit.isDisabled()).toBe(true)
  // Too short, once the boxes are left.
  for (let i = 2; i >= 0; i--) await passcodeBoxes(hp.modal).nth(i).fill('')
  await enterPasscode(hp.modal, 'ab', { typed: true })
  await create.getByRole('button', { name: 'Why am I doing this?' }).focus()
  await create.getByText('Passcode must be exactly 6 letters and numbers').waitFor()
  expect(await submit.isDisabled()).toBe(true)
  // A common weak passcode is refused as it is completed, with the reason beside the other two.
  await enterPasscode(hp.modal, 'qwerty', { typed: true })
  await create.getByText('This passcode is too easy to guess, please choose another').waitFor()
  await expectModalAccessible(hp.page, 'the create screen refusing a weak passcode')
  expect(await submit.isDisabled()).toBe(true)
  await enterPasscode(hp.modal, 'Tr4in9', { typed: true })
  await expect.poll(() => submit.isDisabled(), { timeout: WAIT_MS }).toBe(false)
  await submit.click()
  const wallet = expectInAppWallet(
    expectOk(await settle(pending, 'createWallet()')),
    'user-passcode',
  )

  // The host learns of the new wallet from the 'user' event and from getUser().
  await expect
    .poll(async () => (await userEvents()).some((u) => u?.wallet?.address === wallet.address), {
      timeout: WAIT_MS,
    })
    .toBe(true)
  expect(await analytics()).toEqual([
    'embedded_wallet_creation_started',
    'embedded_wallet_creation_completed',
  ])
  const user = expectOk(await settle(walletCall<User>(hp.page, 'getUser')))
  expect(user.wallet?.address).toBe(wallet.address)
  expect(user.linkedAccounts.filter((a) => a.type === 'wallet')).toHaveLength(1)

  // One wallet per user.
  const again = expectRejected(await settle(walletCall(hp.page, 'createWallet')))
  expect(again.message).toBe(TEXTS.oneWallet)
  const rows = await h()
    .api.deps.db.selectFrom('wallets')
    .select('address')
    .where('user_id', '=', user.id)
    .execute()
  expect(rows).toHaveLength(1)
})

test('behavior: create with a generated passcode, copied; a new device recovers with what was copied', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: true })
  const email = newEmail('create-generated')
  const hp = await h().open({
    appId: app.id,
    prepare: async (context) => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'])
      await recordScreens(context)
    },
  })
  await signInByEmail(h(), hp, email)
  const pending = walletCall<WalletAccount>(hp.page, 'createWallet')
  await visit(hp, SCREENS.create)
  await hp.modal.getByRole('button', { name: 'Generate passcode' }).click()
  await hp.modal.getByRole('heading', { name: 'Secure your passcode' }).waitFor()
  await expectModalAccessible(hp.page, 'the generated passcode')
  const generatedBoxes = hp.modal.locator('input[data-testid^="generated-passcode-"]')
  const shown = (
    await generatedBoxes.evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))
  ).join('')
  expect(shown).toMatch(/^[A-Za-z0-9]{6}$/)
  expect(
    await generatedBoxes.evaluateAll((boxes) =>
      boxes.every((b) => (b as HTMLInputElement).readOnly),
    ),
  ).toBe(true)
  await hp.modal.getByRole('button', { name: 'Copy' }).click()
  await hp.modal.getByText('Copied').waitFor()
  // The modal's frame may write the clipboard only; the page reads what it wrote.
  const copied = await hp.page.evaluate(() => navigator.clipboard.readText())
  expect(copied).toBe(shown)
  await hp.modal.getByRole('button', { name: 'I have saved my passcode' }).click()
  await visit(hp, SCREENS.created)
  await runOutCreatedScreen(hp, pending)
  const wallet = expectInAppWallet(
    expectOk(await settle(pending, 'createWallet()')),
    'user-passcode',
  )

  // Another browser context is another device: the copied passcode recovers the same wallet.
  const device = await h().open({ appId: app.id })
  await signInByEmail(h(), device, email)
  const recovered = await recoverWithPasscode(device, copied)
  expect(recovered.address).toBe(wallet.address)
})

test('behavior: automatic creation when the app asks for no passcode — no passcode screen, the created screen, then it completes by itself', async () => {
  const app = await walletApp(h(), { requireUserPasswordOnCreate: false })
  const hp = await h().open({ appId: app.id, prepare: recordScreens })
  const { isNewUser } = await signInByEmail(h(), hp, newEmail('create-auto'))
  expect(isNewUser).toBe(true)
  const pending = walletCall<WalletAccount>(hp.page, 'createWallet')
  await visit(hp, SCREENS.created)
  // Its pause run out on the page clock: nothing but the modal's own timer ends it.
  await runOutCreatedScreen(hp, pending)
  const wallet = expectInAppWallet(expectOk(await settle(pending, 'createWallet()')), 'latch')
  expect(await passcodeAsked(hp.page)).toBe(false)
  // Cross-site the device share lived in the frame's memory only: after a reload, automatic
  // recovery makes the wallet usable again without any prompt.
  await hp.page.reload({ waitUntil: 'load' })
  await waitReady(hp)
  const again = expectOk(await settle(walletCall<WalletAccount>(hp.page, 'recoverWallet')))
  expect(again.address).toBe(wallet.address)
  expect(await screensSeen(hp.page)).not.toContain(SCREENS.recovery)
  expect(await passcodeAsked(hp.page)).toBe(false)
})
