/**
 * WalletConnect's session surviving a reload of the page and its modal (issue 13), in the
 * recommended deployment (host page, modal and API on subdomains of one site over HTTPS), where
 * the browser lets the modal frame keep the session in its storage. In a cross-site frame the
 * browser refuses that storage, the session lives in memory for the page's life, and a reload
 * pairs afresh (modal-app README, "WalletConnect"). Every piece is local: the relay of
 * wc-relay.ts and the real sign client as the phone wallet (wc-wallet.ts).
 */
import type { LoginResult } from '@latch/shared'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { expectOk, latchCall, settle, visit } from './flows.ts'
import { waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'
import { type LocalRelay, startLocalRelay } from './wc-relay.ts'
import { startWalletConnectWallet, type WalletConnectWallet } from './wc-wallet.ts'

const PROJECT_ID = 'e2e0c0ffee0c0ffee0c0ffee0c0ffee1'

let relay: LocalRelay | undefined
let wallet: WalletConnectWallet | undefined
const relayUp = () => {
  if (!relay) throw new Error('the local relay did not start')
  return relay
}
beforeAll(async () => {
  relay = await startLocalRelay()
})
afterAll(async () => {
  await wallet?.close()
  await relay?.close()
})
const h = useHarness({
  sameSite: true,
  get walletConnectRelayUrl() {
    return relayUp().url
  },
})

test('behavior: same-site — the WalletConnect session survives a reload: signing in again asks the wallet for a signature only, with no new pairing', async () => {
  wallet = await startWalletConnectWallet({
    relayUrl: relayUp().url,
    projectId: PROJECT_ID,
    account: privateKeyToAccount(generatePrivateKey()),
  })
  const { id } = await h().createApp({
    loginMethods: ['wallet', 'email'],
    appearance: { showWalletLoginFirst: false },
    walletConnectCloudProjectId: PROJECT_ID,
  })
  const hp = await h().open({ appId: id })

  const first = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await hp.modal.getByTestId('section-wallet-toggle').click()
  await hp.modal.getByTestId('walletconnect-option').click()
  const qr = hp.modal.getByTestId('walletconnect-qr')
  await qr.waitFor({ state: 'visible' })
  await wallet.pair((await qr.getAttribute('data-uri')) ?? '')
  expect(expectOk(await settle(first, 'login()')).isNewUser).toBe(true)
  expect(wallet.proposals).toBe(1)

  // A new page and modal: the session comes back from the modal frame's storage.
  await hp.page.reload({ waitUntil: 'load' })
  await waitReady(hp)
  expectOk(await settle(latchCall(hp.page, 'logout'), 'logout()'))
  const again = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await hp.modal.getByTestId('section-wallet-toggle').click()
  await hp.modal.getByTestId('walletconnect-option').click()
  const second = expectOk(await settle(again, 'login() after the reload'))
  expect(second.isNewUser).toBe(false)
  expect(second.user.linkedAccounts).toContainEqual(
    expect.objectContaining({
      type: 'wallet',
      address: wallet.address,
      connectorType: 'wallet_connect',
    }),
  )
  expect(await qr.count()).toBe(0)
  expect(wallet.proposals).toBe(1)
  expect(wallet.requests.map((r) => r.method)).toEqual(['personal_sign', 'personal_sign'])
})
