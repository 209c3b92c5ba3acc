/**
 * WalletConnect end to end across the three origins, with every piece on this
 * machine: the modal's real WalletConnect provider on the local relay (wc-relay.ts), the real
 * sign client as the phone wallet (wc-wallet.ts) with a real key, the real API verifying the
 * SIWE message. The wallet pairs from the URI of the QR code the modal shows. Any request of
 * the browser to another host is answered locally (and recorded: none is expected).
 */
import type { LoginResult, User } from '@latch/shared'
import type { BrowserContext } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, test } from 'vitest'
import {
  expectOk,
  latchCall,
  newEmail,
  openSection,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import type { HostPage } from './harness.ts'
import { useHarness } from './use-harness.ts'
import { useLocalRelay } from './wc-relay.ts'
import { startWalletConnectWallet, type WalletConnectWallet } from './wc-wallet.ts'

/** A Cloud project id of the usual shape; the local relay accepts any. */
const PROJECT_ID = 'e2e0c0ffee0c0ffee0c0ffee0c0ffee0'

// Before the harness's own beforeAll: the modal server is told the relay's URL at its start.
const relayUp = useLocalRelay()
const h = useHarness({
  get walletConnectRelayUrl() {
    return relayUp().url
  },
})

const wallets: WalletConnectWallet[] = []
afterEach(async () => {
  await Promise.all(wallets.splice(0).map((w) => w.close()))
})

async function phoneWallet(): Promise<WalletConnectWallet> {
  const wallet = await startWalletConnectWallet({
    relayUrl: relayUp().url,
    projectId: PROJECT_ID,
    account: privateKeyToAccount(generatePrivateKey()),
  })
  wallets.push(wallet)
  return wallet
}

let wcApp: string | undefined
/** An app with wallet and e-mail login and a WalletConnect project. */
async function app(): Promise<string> {
  wcApp ??= (
    await h().createApp({
      loginMethods: ['wallet', 'email'],
      appearance: { showWalletLoginFirst: false },
      walletConnectCloudProjectId: PROJECT_ID,
    })
  ).id
  return wcApp
}

/** Every request of the browser to a host other than this machine, answered here. */
async function keepLocal(context: BrowserContext, outside: string[]): Promise<void> {
  await context.route(
    (url) => !['127.0.0.1', 'localhost'].includes(url.hostname),
    (route) => {
      outside.push(route.request().url())
      return route.fulfill({ status: 204, body: '' })
    },
  )
}

interface WcPage extends HostPage {
  outside: string[]
}

async function openPage(appId: string, context?: BrowserContext): Promise<WcPage> {
  const outside: string[] = []
  const hp = await h().open({
    appId,
    ...(context ? { context } : { prepare: (c) => keepLocal(c, outside) }),
  })
  return { ...hp, outside }
}

/** Landing → wallet section → WalletConnect; answers the pairing URI of the QR code. */
async function chooseWalletConnect(hp: HostPage): Promise<string> {
  await openSection(hp.modal, 'wallet')
  await hp.modal.getByTestId('walletconnect-option').click()
  const qr = hp.modal.getByTestId('walletconnect-qr')
  await qr.waitFor({ state: 'visible' })
  const uri = await qr.getAttribute('data-uri')
  expect(uri).toMatch(/^wc:[0-9a-f]{64}@2\?/)
  return uri ?? ''
}

async function atStep(hp: HostPage, step: string): Promise<[string, string | null]> {
  await hp.modal
    .locator(`[data-testid="screen-AWAITING_CONNECTION"][data-step="${step}"]`)
    .waitFor({ state: 'visible' })
  const title = await hp.modal.getByTestId('connection-title').textContent()
  const description = hp.modal.getByTestId('connection-description')
  return [title ?? '', (await description.count()) ? await description.textContent() : null]
}

describe('WalletConnect', () => {
  test('behavior: a phone wallet pairs from the QR code and signs in, and nothing leaves the machine', async () => {
    const wallet = await phoneWallet()
    const hp = await openPage(await app())
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    const uri = await chooseWalletConnect(hp)
    await visit(hp, 'AWAITING_CONNECTION')
    await wallet.pair(uri)
    const first = expectOk(await settle(pending, 'login()'))
    expect(first.isNewUser).toBe(true)
    expect(first.user.linkedAccounts).toMatchObject([
      {
        type: 'wallet',
        address: wallet.address,
        connectorType: 'wallet_connect',
        walletClientType: 'test_phone_wallet',
      },
    ])
    expect(wallet.requests.map((r) => r.method)).toEqual(['personal_sign'])

    expect(hp.outside).toEqual([])
  })

  test('error: a rejected proposal, then a rejected signature, each shown; Retry signs in', async () => {
    const wallet = await phoneWallet()
    const hp = await openPage(await app())
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    wallet.behave('reject', 'proposal')
    await wallet.pair(await chooseWalletConnect(hp))
    expect(await atStep(hp, 'failed')).toEqual(['You rejected the request', null])

    wallet.behave('approve', 'proposal')
    wallet.behave('reject', 'personal_sign')
    await hp.modal.getByTestId('connection-retry').click()
    const qr = hp.modal.getByTestId('walletconnect-qr')
    await qr.waitFor({ state: 'visible' })
    await wallet.pair((await qr.getAttribute('data-uri')) ?? '')
    expect(await atStep(hp, 'failed')).toEqual(['Signature rejected', 'Please try signing again.'])
    await visit(hp, 'AWAITING_CONNECTION')

    wallet.behave('approve', 'personal_sign')
    await hp.modal.getByTestId('connection-retry').click()
    expect(expectOk(await settle(pending, 'login()')).isNewUser).toBe(true)
    expect(hp.outside).toEqual([])
  })

  test('behavior: a signed-in e-mail user links a phone wallet', async () => {
    const wallet = await phoneWallet()
    const hp = await openPage(await app())
    await signInByEmail(h(), hp, newEmail('wc-link'))
    const pending = latchCall<User>(hp.page, 'link', 'wallet')
    await visit(hp, 'LINK_WALLET_SCREEN')
    await hp.modal.getByTestId('walletconnect-option').click()
    const qr = hp.modal.getByTestId('walletconnect-qr')
    await qr.waitFor({ state: 'visible' })
    await wallet.pair((await qr.getAttribute('data-uri')) ?? '')
    const user = expectOk(await settle(pending, 'link(wallet)'))
    expect(user.linkedAccounts).toContainEqual(
      expect.objectContaining({ type: 'wallet', address: wallet.address }),
    )
  })

  test('error: an app without a project id shows WalletConnect as not configured', async () => {
    const { id } = await h().createApp({ loginMethods: ['wallet', 'email'] })
    const hp = await openPage(id)
    void latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    await openSection(hp.modal, 'wallet')
    await expect.poll(() => hp.modal.getByTestId('walletconnect-option').isDisabled()).toBe(true)
    expect(await hp.modal.getByTestId('walletconnect-off').textContent()).toBe(
      'WalletConnect is not configured for this app',
    )
    expect(relayUp().refused).toBe(0)
  })
})
