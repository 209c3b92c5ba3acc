/**
 * The offer to recover an existing in-app wallet with the passkey link('passkey') just added
 * (passkey.ts, offerPasskeyRecovery): the rule, and the engine taking the flow to
 * PASSKEY_RECOVERY_SCREEN after 'Done'. The e2e spec (e2e/src/passkey-recovery.spec.ts) runs the
 * ceremony and the frame for real.
 */
import { LatchError, type PasskeyAccount, type RecoveryMethod, type User } from '@latch/shared'
import { act, cleanup, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { link } from '../flow/entries.ts'
import { preloadScreens } from '../screens/lazy.tsx'
import { mergeConfig } from '../startup/config.ts'
import { store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { jwt, serverConfig, user } from '../test/fixtures.ts'
import { renderModal } from '../test/harness.tsx'
import { walletAccount, walletFrameDouble } from '../test/wallet-frame-double.ts'
import { provideWalletFrame } from '../wallet/frame.ts'
import { finishManaging, offersPasskeyRecovery, rememberLinked } from './passkey.ts'

const ADDRESS = '0x1111111111111111111111111111111111111111'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
  // Every lazy screen's chunk, once: a first transform under load takes seconds.
  await preloadScreens()
}, 60_000)
afterAll(() => api.close())
afterEach(() => {
  cleanup()
  provideWalletFrame(null)
})

/** The user with the passkey this flow linked ('cred-1') and, unless null, an in-app wallet. */
const withWallet = (method: RecoveryMethod | null): User => {
  const plain = user()
  const passkey: PasskeyAccount = {
    type: 'passkey',
    credentialId: 'cred-1',
    name: 'Passkey 1',
    verifiedAt: '2026-01-01T00:00:00.000Z',
  }
  const wallet = method ? [walletAccount(ADDRESS, method)] : []
  return { ...plain, linkedAccounts: [...plain.linkedAccounts, passkey, ...wallet] }
}
const external: User = {
  ...withWallet(null),
  linkedAccounts: [
    ...withWallet(null).linkedAccounts,
    { ...walletAccount(ADDRESS, 'latch'), walletClient: 'unknown', recoveryMethod: null },
  ],
}

describe('the rule', () => {
  const app = (passkeyAuth: boolean) => mergeConfig(serverConfig({ passkeyAuth }), {})

  test.each([
    ['an automatic wallet (it never asks for a passkey)', false, withWallet('latch')],
    ['a passcode wallet', true, withWallet('user-passcode')],
    ['a passkey wallet', false, withWallet('passkey')],
    ['no wallet', false, withWallet(null)],
    ['an external wallet only', false, external],
  ] as const)('param: a user with %s: offered %s', (_, expected, who) => {
    expect(offersPasskeyRecovery(app(true), who, 'cred-1')).toBe(expected)
    // Not without a passkey linked in this flow, nor where the app has passkeys off.
    expect(offersPasskeyRecovery(app(true), who, null)).toBe(false)
    expect(offersPasskeyRecovery(app(false), who, 'cred-1')).toBe(false)
    // Nor for a passkey removed again before 'Done'.
    expect(offersPasskeyRecovery(app(true), who, 'cred-2')).toBe(false)
  })
})

describe('link(passkey), then Done', () => {
  /** link('passkey') for `who`; `linked` says whether this flow added a passkey. */
  function manage(who: User, linked: boolean): { linking: Promise<User> } {
    renderModal(api, { passkeyAuth: true })
    act(() => store.setState({ user: who }))
    let linking!: Promise<User>
    act(() => {
      linking = link('passkey')
    })
    if (linked) rememberLinked('cred-1')
    act(() => finishManaging())
    return { linking }
  }

  test('behavior: a passcode wallet without passkey recovery: the offer comes next, the host waits', async () => {
    const { linking } = manage(withWallet('user-passcode'), true)
    await waitFor(() => expect(store.getState().screen).toBe('PASSKEY_RECOVERY_SCREEN'))
    await screen.findByRole('button', { name: 'Use this passkey for recovery' })
    let settled = false
    void linking.then(() => {
      settled = true
    })
    await Promise.resolve()
    expect(settled).toBe(false)
    act(() => screen.getByRole('button', { name: 'Not now' }).click())
    expect((await linking).id).toBe(withWallet('user-passcode').id)
    expect(store.getState().open).toBe(false)
  })

  test('behavior: no offer for a passkey or automatic wallet, nor when this flow added no passkey', async () => {
    for (const [who, linked] of [
      [withWallet('passkey'), true],
      [withWallet('latch'), true],
      [withWallet('user-passcode'), false],
    ] as const) {
      const { linking } = manage(who, linked)
      // A passkey remembered by an earlier flow is not this one's.
      expect((await linking).id).toBe(who.id)
      expect(store.getState().screen).not.toBe('PASSKEY_RECOVERY_SCREEN')
      cleanup()
    }
  })
})

describe('PASSKEY_RECOVERY_SCREEN', () => {
  test('behavior: no PRF is said plainly and nothing changes; then the frame seals under the linked passkey and link() resolves', async () => {
    const who = withWallet('user-passcode')
    const double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'user-passcode') })
    double.device.add(ADDRESS)
    provideWalletFrame(double.frame)
    const harness = renderModal(api, { passkeyAuth: true })
    act(() => harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, who))
    let linking!: Promise<User>
    act(() => {
      linking = link('passkey')
    })
    rememberLinked('cred-1')
    act(() => finishManaging())
    const use = await screen.findByRole('button', { name: 'Use this passkey for recovery' })

    double.failNext('latch:wallet:add-passkey', LatchError.of('passkey_prf_unsupported'))
    act(() => use.click())
    expect((await screen.findByRole('alert')).textContent).toBe(
      'This passkey cannot protect your wallet. Your wallet keeps the recovery it has.',
    )
    expect(store.getState().screen).toBe('PASSKEY_RECOVERY_SCREEN')

    await waitFor(() => expect(use).toHaveProperty('disabled', false))
    act(() => use.click())
    await waitFor(() =>
      expect(screen.getByRole('status').textContent).toBe('Your passkey now protects your wallet'),
    )
    const adds = double.calls.filter((c) => c.method === 'latch:wallet:add-passkey')
    expect(adds.map((c) => [c.params.address, c.params.credentialId])).toEqual([
      [ADDRESS, 'cred-1'],
      [ADDRESS, 'cred-1'],
    ])
    expect((await linking).id).toBe(who.id)
  })
})
