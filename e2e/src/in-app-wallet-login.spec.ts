/**
 * Creating the in-app wallet at sign-in, per app setting: 'off', 'users-without-wallets' (a user
 * with no wallet at all), 'all-users' (a user with no in-app wallet), and a user who already has
 * one. After the code, the success screen, then the creation screen; login() settles when the
 * whole flow has.
 */
import {
  type LoginResult,
  type ServerAppConfig,
  SUCCESS_CLOSE_DELAY_MS,
  type User,
  type WalletAccount,
} from '@latch/shared'
import { expect, test } from 'vitest'
import { authenticateWithAccount, linkAccount } from '../../server/src/accounts/service.ts'
import {
  enterCode,
  expectOk,
  latchCall,
  newEmail,
  type Outcome,
  runOutPause,
  settle,
  submitEmail,
  visit,
  waitEmailCode,
} from './flows.ts'
import type { HostPage } from './harness.ts'
import { useHarness } from './use-harness.ts'
import {
  enterPasscode,
  expectInAppWallet,
  passcodeAsked,
  recordScreens,
  runOutCreatedScreen,
  SCREENS,
  screensSeen,
  walletApp,
  walletCall,
} from './wallet-flows.ts'

const h = useHarness()

/**
 * Signs in by e-mail up to the code and past the success screen (its pause run out on the page
 * clock); answers the pending login() (not awaited).
 */
async function loginUpToCode(
  hp: HostPage,
  email: string,
): Promise<{ login: Promise<Outcome<LoginResult>> }> {
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await submitEmail(hp.modal, email)
  const code = await waitEmailCode(h(), email)
  await visit(hp, 'AWAITING_PASSWORDLESS_CODE')
  await enterCode(hp.modal, code)
  await runOutPause(hp.page, hp.modal.getByTestId('code-success'), SUCCESS_CLOSE_DELAY_MS, pending)
  return { login: pending }
}

const userOf = async (hp: HostPage) =>
  expectOk(await settle(walletCall<User>(hp.page, 'getUser'))) as User

/** A user of `app` who signed in before with an external wallet linked (what SIWE links). */
async function userWithExternalWallet(app: ServerAppConfig, email: string): Promise<string> {
  const { deps } = h().api
  const { user } = await authenticateWithAccount(deps, app.id, { type: 'email', address: email })
  await linkAccount(deps, app.id, user.id, {
    type: 'wallet',
    address: `0x${'ab'.repeat(19)}${String(Date.now() % 100).padStart(2, '0')}`,
    chainType: 'ethereum',
    chainId: 'eip155:1',
    walletClient: 'unknown',
    walletClientType: 'metamask',
    connectorType: 'injected',
    recoveryMethod: null,
  })
  return user.id
}

test("behavior: createOnLogin 'off' — sign-in closes without any wallet screen", async () => {
  const app = await walletApp(h(), { createOnLogin: 'off' })
  const hp = await h().open({ appId: app.id, prepare: recordScreens })
  const { login } = await loginUpToCode(hp, newEmail('login-off'))
  const result = expectOk(await settle(login))
  expect(result.user.wallet).toBeUndefined()
  expect((await screensSeen(hp.page)).filter((s) => s.startsWith('EMBEDDED_WALLET'))).toEqual([])
})

test("behavior: 'users-without-wallets' with a passcode — a new user gets the passcode screen after the success screen, then the wallet", async () => {
  const app = await walletApp(h(), {
    createOnLogin: 'users-without-wallets',
    requireUserPasswordOnCreate: true,
  })
  const hp = await h().open({ appId: app.id, prepare: recordScreens })
  const { login: pending } = await loginUpToCode(hp, newEmail('login-uww'))
  await visit(hp, SCREENS.create)
  await enterPasscode(hp.modal, 'L0g1nP')
  await hp.modal.getByRole('button', { name: 'Set passcode' }).click()
  const result = expectOk(await settle(pending, 'login()'))
  expect(result.isNewUser).toBe(true)
  const wallet = expectInAppWallet((await userOf(hp)).wallet, 'user-passcode')
  const seen = await screensSeen(hp.page)
  expect(seen.indexOf(SCREENS.create)).toBeGreaterThan(seen.indexOf('AWAITING_PASSWORDLESS_CODE'))
  expect(wallet.address).toMatch(/^0x/)
})

test("behavior: 'users-without-wallets' skips a user who has an external wallet; 'all-users' creates the in-app wallet for that user", async () => {
  const without = await walletApp(h(), { createOnLogin: 'users-without-wallets' })
  const email = newEmail('login-external')
  await userWithExternalWallet(without, email)
  const hp = await h().open({ appId: without.id, prepare: recordScreens })
  const result = expectOk(await settle((await loginUpToCode(hp, email)).login))
  expect(result.user.wallet?.walletClient).toBe('unknown')
  expect((await screensSeen(hp.page)).filter((s) => s.startsWith('EMBEDDED_WALLET'))).toEqual([])

  const all = await walletApp(h(), { createOnLogin: 'all-users' })
  const email2 = newEmail('login-all')
  await userWithExternalWallet(all, email2)
  const hp2 = await h().open({ appId: all.id, prepare: recordScreens })
  const { login: pending } = await loginUpToCode(hp2, email2)
  // Automatic creation: no passcode screen; the user is not new, so no created screen either.
  expectOk(await settle(pending, 'login()'))
  const user = await userOf(hp2)
  expectInAppWallet(user.wallet, 'latch')
  expect(user.linkedAccounts.filter((a) => a.type === 'wallet')).toHaveLength(2)
  expect(await passcodeAsked(hp2.page)).toBe(false)
})

test("behavior: 'all-users' — a new user gets the wallet at sign-in; signing in again (another device) creates nothing more", async () => {
  const app = await walletApp(h(), { createOnLogin: 'all-users' })
  const email = newEmail('login-again')
  const hp = await h().open({ appId: app.id, prepare: recordScreens })
  const { login: pending } = await loginUpToCode(hp, email)
  await visit(hp, SCREENS.created)
  await runOutCreatedScreen(hp, pending)
  expectOk(await settle(pending, 'login()'))
  const wallet = expectInAppWallet((await userOf(hp)).wallet, 'latch')

  const again = await h().open({ appId: app.id, prepare: recordScreens })
  const result = expectOk(await settle((await loginUpToCode(again, email)).login))
  expect(result.user.wallet?.address).toBe(wallet.address)
  expect((await screensSeen(again.page)).filter((s) => s.startsWith('EMBEDDED_WALLET'))).toEqual([])
  const rows = await h()
    .api.deps.db.selectFrom('wallets')
    .select('id')
    .where('user_id', '=', result.user.id)
    .execute()
  expect(rows).toHaveLength(1)
  // The wallet is usable on this new device after automatic recovery.
  const recovered = expectOk(
    await settle(walletCall<WalletAccount>(again.page, 'recoverWallet'), 'recoverWallet()'),
  )
  expect(recovered.address).toBe(wallet.address)
})
