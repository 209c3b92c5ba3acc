import type { WalletAccount } from '@latch/shared'
import { expect, test } from 'vitest'
import { describeBackends } from '../testing/test-server.ts'
import {
  accountIdentifier,
  authenticateWithAccount,
  linkAccount,
  linkInAppWallet,
  loadUser,
  type NewAccount,
  unlinkAccount,
} from './service.ts'

let n = 0
const address = () => `0x${(++n).toString(16).padStart(8, '0')}${'ab'.repeat(16)}` as `0x${string}`
const wallet = (
  addr: `0x${string}`,
  client: 'latch' | 'unknown' = 'unknown',
): NewAccount<WalletAccount> => ({
  type: 'wallet',
  address: addr,
  chainType: 'ethereum',
  chainId: 'eip155:1',
  walletClient: client,
  walletClientType: client === 'latch' ? 'latch' : 'metamask',
  connectorType: client === 'latch' ? 'embedded' : 'injected',
  recoveryMethod: client === 'latch' ? 'user-passcode' : null,
})

test('behavior: one identifier rule: e-mail and wallet addresses ignore case (and spaces around an e-mail), numbers and subjects are exact', () => {
  expect(accountIdentifier({ type: 'email', address: ' Ann@Example.COM ' })).toBe('ann@example.com')
  const upper = '0xABCDEF0000000000000000000000000000000001' as `0x${string}`
  expect(accountIdentifier(wallet(upper))).toBe(upper.toLowerCase())
  expect(accountIdentifier({ type: 'phone', number: '+14155550100' })).toBe('+14155550100')
  const github: NewAccount = {
    type: 'github_oauth',
    subject: 'AbC123',
    email: null,
    name: null,
    username: 'Ann',
  }
  expect(accountIdentifier(github)).toBe('AbC123')
})

describeBackends('accounts', (get) => {
  test('race: parallel first sign-ins with one identifier create one user', async () => {
    const s = get()
    const app = await s.newApp()
    const account: NewAccount = {
      type: 'github_oauth',
      subject: `gh-${++n}`,
      username: 'octo',
      name: null,
      email: null,
    }
    const results = await Promise.all(
      Array.from({ length: 6 }, () => authenticateWithAccount(s.deps, app.id, account)),
    )
    expect(new Set(results.map((r) => r.user.id)).size).toBe(1)
    expect(results.filter((r) => r.isNewUser)).toHaveLength(1)
    const rows = await s.deps.db
      .selectFrom('users')
      .select('id')
      .where('app_id', '=', app.id)
      .execute()
    expect(rows).toHaveLength(1)
  })

  test('behavior: one identifier is one user per app, but separate across apps', async () => {
    const s = get()
    const a = await s.newApp()
    const b = await s.newApp()
    const email: NewAccount = { type: 'email', address: `same.${++n}@example.com` }
    const inA = await authenticateWithAccount(s.deps, a.id, email)
    const inB = await authenticateWithAccount(s.deps, b.id, email)
    expect(inA.user.id).not.toBe(inB.user.id)
    await expect(loadUser(s.deps, b.id, inA.user.id)).rejects.toMatchObject({
      code: 'not_found',
    })
  })

  test('behavior: wallets may be several, the in-app one is the active wallet and cannot be unlinked', async () => {
    const s = get()
    const app = await s.newApp()
    const { user } = await authenticateWithAccount(s.deps, app.id, wallet(address()))
    const embedded = address()
    await linkInAppWallet(s.deps, app.id, user.id, wallet(embedded, 'latch'))
    const withTwo = await linkAccount(s.deps, app.id, user.id, wallet(address()))
    expect(withTwo.linkedAccounts.filter((a) => a.type === 'wallet')).toHaveLength(3)
    expect(withTwo.wallet?.address).toBe(embedded)
    await expect(
      unlinkAccount(s.deps, app.id, user.id, {
        type: 'wallet',
        identifier: embedded.toUpperCase().replace('0X', '0x'),
      }),
    ).rejects.toMatchObject({
      code: 'embedded_wallet_unlink_forbidden',
      message: 'Cannot unlink an embedded wallet',
    })
  })

  test("refusal: sign-in and link refuse an in-app wallet: its address (any user's) or an account marked as one", async () => {
    const s = get()
    const app = await s.newApp()
    const { user } = await authenticateWithAccount(s.deps, app.id, wallet(address()))
    const embedded = address()
    await linkInAppWallet(s.deps, app.id, user.id, wallet(embedded, 'latch'))
    const forbidden = {
      code: 'embedded_wallet_link_forbidden',
      message: 'Cannot link or login with embedded wallet',
      status: 400,
    }
    await expect(authenticateWithAccount(s.deps, app.id, wallet(embedded))).rejects.toMatchObject(
      forbidden,
    )
    await expect(linkAccount(s.deps, app.id, user.id, wallet(embedded))).rejects.toMatchObject(
      forbidden,
    )
    await expect(
      linkAccount(s.deps, app.id, user.id, wallet(address(), 'latch')),
    ).rejects.toMatchObject(forbidden)
    expect((await loadUser(s.deps, app.id, user.id)).wallet?.walletClient).toBe('latch')
  })

  test('error: the last sign-in method stays; the in-app wallet does not count as one', async () => {
    const s = get()
    const app = await s.newApp()
    const first = address()
    const { user } = await authenticateWithAccount(s.deps, app.id, wallet(first))
    await linkInAppWallet(s.deps, app.id, user.id, wallet(address(), 'latch'))
    await expect(
      unlinkAccount(s.deps, app.id, user.id, { type: 'wallet', identifier: first }),
    ).rejects.toMatchObject({
      code: 'last_account_unlink_forbidden',
    })
    await expect(
      unlinkAccount(s.deps, app.id, user.id, {
        type: 'email',
        identifier: 'nobody@example.com',
      }),
    ).rejects.toMatchObject({ code: 'not_found' })
  })

  test('error: a second account of a single kind is refused; relinking your own is fine', async () => {
    const s = get()
    const app = await s.newApp()
    const google: NewAccount = {
      type: 'google_oauth',
      subject: `g-${++n}`,
      email: 'a@example.com',
      name: 'A',
    }
    const { user } = await authenticateWithAccount(s.deps, app.id, google)
    const again = await linkAccount(s.deps, app.id, user.id, { ...google, name: 'A. Person' })
    expect(again.google?.name).toBe('A. Person')
    await expect(
      linkAccount(s.deps, app.id, user.id, {
        type: 'google_oauth',
        subject: `g-${++n}`,
        email: null,
        name: null,
      }),
    ).rejects.toMatchObject({ code: 'invalid_data' })
  })

  test('race: two users linking one address: exactly one wins, the other hears linked_to_another_user', async () => {
    const s = get()
    const app = await s.newApp()
    const one = await authenticateWithAccount(s.deps, app.id, {
      type: 'email',
      address: `one.${++n}@example.com`,
    })
    const two = await authenticateWithAccount(s.deps, app.id, {
      type: 'email',
      address: `two.${++n}@example.com`,
    })
    const contested = wallet(address())
    const results = await Promise.allSettled([
      linkAccount(s.deps, app.id, one.user.id, contested),
      linkAccount(s.deps, app.id, two.user.id, contested),
    ])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
    expect(rejected.reason).toMatchObject({ code: 'linked_to_another_user' })
  })
})

describeBackends('cleanup', (get) => {
  test('behavior: the sweep deletes old rate-limit windows, dead codes and expired fork tokens only', async () => {
    const s = get()
    const { sweep } = await import('../sweep.ts')
    const { hit } = await import('../ratelimit.ts')
    const app = await s.newApp()
    await hit(s.deps.db, s.clock, `sweep-old-${app.id}`, { max: 5, windowMs: 1000 })
    await s.request('/passwordless/init', {
      appId: app.id,
      ip: `sweep-${app.id}`,
      body: { email: `sweep.${app.id}@example.com` },
    })
    s.clock.advance(2 * 60 * 60_000)
    await hit(s.deps.db, s.clock, `sweep-new-${app.id}`, { max: 5, windowMs: 1000 })
    await sweep(s.deps.db, s.clock)
    const keys = (await s.deps.db.selectFrom('rate_limits').select('key').execute()).map(
      (r) => r.key,
    )
    expect(keys).toContain(`sweep-new-${app.id}`)
    expect(keys).not.toContain(`sweep-old-${app.id}`)
    const codes = await s.deps.db
      .selectFrom('verification_codes')
      .select('identifier')
      .where('app_id', '=', app.id)
      .execute()
    expect(codes).toEqual([])
  })
})
