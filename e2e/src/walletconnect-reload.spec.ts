/**
 * WalletConnect's session surviving a reload of the page and its modal, and ending
 * with logout, in the recommended deployment (host page, modal and API on subdomains of one site over HTTPS), where
 * the browser lets the modal frame keep the session in its storage. In a cross-site frame the
 * browser refuses that storage, the session lives in memory for the page's life, and a reload
 * pairs afresh (docs/architecture.md, "WalletConnect"). Every piece is local: the relay of
 * wc-relay.ts and the real sign client as the phone wallet (wc-wallet.ts).
 */
import type { ConnectedWallet, LoginResult } from '@latch/shared'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, expect, test } from 'vitest'
import { expectOk, latchCall, openSection, settle, visit } from './flows.ts'
import { waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'
import { useLocalRelay } from './wc-relay.ts'
import { startWalletConnectWallet, type WalletConnectWallet } from './wc-wallet.ts'

const PROJECT_ID = 'e2e0c0ffee0c0ffee0c0ffee0c0ffee1'

// Before the harness: the modal server is told the relay's URL at its start.
const relayUp = useLocalRelay()
let wallet: WalletConnectWallet | undefined
afterAll(async () => {
  await wallet?.close()
})
const h = useHarness({
  sameSite: true,
  get walletConnectRelayUrl() {
    return relayUp().url
  },
})

test('behavior: same-site — the WalletConnect session survives a reload (the wallet is connected again with no new pairing); logout ends it, and the next connection pairs afresh', async () => {
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
  const qr = hp.modal.getByTestId('walletconnect-qr')

  const first = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await openSection(hp.modal, 'wallet')
  await hp.modal.getByTestId('walletconnect-option').click()
  await qr.waitFor({ state: 'visible' })
  await wallet.pair((await qr.getAttribute('data-uri')) ?? '')
  const signedIn = expectOk(await settle(first, 'login()'))
  expect(signedIn.isNewUser).toBe(true)
  expect(wallet.proposals).toBe(1)

  // A new page and modal: the session comes back from the modal frame's storage, so the
  // wallet connects again without a QR code and without asking the phone anything.
  await hp.page.reload({ waitUntil: 'load' })
  await waitReady(hp)
  const again = latchCall<ConnectedWallet>(hp.page, 'connectWallet')
  await visit(hp, 'CONNECT_ONLY_AUTHENTICATED_SCREEN')
  await hp.modal.getByTestId('walletconnect-option').click()
  expect(expectOk(await settle(again, 'connectWallet() after the reload'))).toMatchObject({
    address: wallet.address,
    connectorType: 'wallet_connect',
  })
  expect(wallet.proposals).toBe(1)
  expect(wallet.requests.map((r) => r.method)).toEqual(['personal_sign'])

  // Logout ends it: the next visitor of this browser pairs their own wallet.
  expectOk(await settle(latchCall(hp.page, 'logout'), 'logout()'))
  await hp.page.reload({ waitUntil: 'load' })
  await waitReady(hp)
  const next = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await openSection(hp.modal, 'wallet')
  await hp.modal.getByTestId('walletconnect-option').click()
  await qr.waitFor({ state: 'visible' })
  await hp.page.keyboard.press('Escape')
  await settle(next, 'login()')
  expect(wallet.proposals).toBe(1)
})
