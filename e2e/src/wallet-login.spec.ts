/**
 * Signing in and linking with a browser wallet across the three origins: the wallet
 * is injected into the host page (test double with a real key, e2e/src/injected-wallet.ts), the
 * modal reaches it through the host SDK's bridge, and the real API verifies the SIWE message.
 * Every screen reached is held to axe (visit()).
 */
import { API_PREFIX, type LoginResult, type User } from '@latch/shared'
import type { BrowserContext } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type RunningAnvil, startAnvil } from '../../server/src/testing/index.ts'
import {
  counterfactualContractWallet,
  deployedContractWallet,
  deployWalletFactory,
} from './contract-wallet.ts'
import {
  expectOk,
  latchCall,
  newEmail,
  openSection,
  screen,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import type { HostPage } from './harness.ts'
import {
  type InjectedWallet,
  injectWallet,
  type WalletAccount as WalletSigner,
} from './injected-wallet.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

const freshAccount = () => privateKeyToAccount(generatePrivateKey())

interface WalletPage extends HostPage {
  wallet: InjectedWallet
}

/** The host page of `appId` in a browser whose wallet holds `account`. */
async function openWithWallet(
  appId: string,
  account: WalletSigner = freshAccount(),
  before?: (context: BrowserContext) => Promise<void>,
  chainId?: number,
): Promise<WalletPage> {
  let wallet!: InjectedWallet
  const hp = await h().open({
    appId,
    prepare: async (context) => {
      await before?.(context)
      wallet = await injectWallet(context, { account, name: 'Test Wallet', chainId })
    },
  })
  return { ...hp, wallet }
}

const connection = (hp: HostPage) => screen(hp.modal, 'AWAITING_CONNECTION')

/** Waits for the connection screen's step, and answers its title and description. */
async function atStep(hp: HostPage, step: string): Promise<[string, string | null]> {
  const shown = hp.modal.locator(`[data-testid="screen-AWAITING_CONNECTION"][data-step="${step}"]`)
  await shown.waitFor({ state: 'visible' })
  const title = await hp.modal.getByTestId('connection-title').textContent()
  const description = hp.modal.getByTestId('connection-description')
  return [title ?? '', (await description.count()) ? await description.textContent() : null]
}

async function chooseWallet(hp: HostPage): Promise<void> {
  await hp.modal.getByTestId('wallet-option').first().click()
}

let walletApp: string | undefined
/** One app with wallet and e-mail login (e-mail first, so e-mail sign-ins see their form). */
async function app(): Promise<string> {
  walletApp ??= (
    await h().createApp({
      loginMethods: ['wallet', 'email'],
      appearance: { showWalletLoginFirst: false },
    })
  ).id
  return walletApp
}

async function openWalletSection(hp: HostPage): Promise<void> {
  await openSection(hp.modal, 'wallet')
  await hp.modal.getByTestId('wallet-option').first().waitFor({ state: 'visible' })
}

describe('sign-in with a browser wallet', () => {
  test('behavior: a new visitor signs in with their wallet (the wallet section second and closed: showWalletLoginFirst false), then, signed out, comes back as the same user', async () => {
    const account = freshAccount()
    const hp = await openWithWallet(await app(), account)
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    expect(await hp.modal.locator('h2.latch-section-title').allTextContents()).toEqual([
      'Email',
      'Connect Wallet',
    ])
    expect(await hp.modal.getByTestId('wallet-option').count()).toBe(0)
    await openWalletSection(hp)
    expect(await hp.modal.getByTestId('wallet-option').first().textContent()).toBe('Test Wallet')
    await chooseWallet(hp)
    await visit(hp, 'AWAITING_CONNECTION')
    expect(await atStep(hp, 'success')).toEqual(['Success!', 'You’re good to go!'])
    const first = expectOk(await settle(pending, 'login()'))
    expect(first.isNewUser).toBe(true)
    expect(first.user.linkedAccounts).toMatchObject([
      {
        type: 'wallet',
        address: account.address,
        chainType: 'ethereum',
        walletClientType: 'test_wallet',
        connectorType: 'injected',
      },
    ])
    // The wallet was asked by the host page's origin, for a message naming that page.
    const signed = hp.wallet.requests.find((r) => r.method === 'personal_sign')
    expect(signed?.origin).toBe(new URL(h().hostUrl).origin)

    expectOk(await settle(latchCall(hp.page, 'logout'), 'logout()'))
    const second = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    await openWalletSection(hp)
    await chooseWallet(hp)
    const result = expectOk(await settle(second, 'login()'))
    expect(result).toMatchObject({ isNewUser: false, user: { id: first.user.id } })
  })

  test('behavior: a rejected signature, then Retry, signs in', async () => {
    const hp = await openWithWallet(await app())
    hp.wallet.behave('reject', 'personal_sign')
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    await openWalletSection(hp)
    await chooseWallet(hp)
    expect(await atStep(hp, 'failed')).toEqual(['Signature rejected', 'Please try signing again.'])
    await visit(hp, 'AWAITING_CONNECTION')
    hp.wallet.behave('approve', 'personal_sign')
    await hp.modal.getByTestId('connection-retry').click()
    expect(expectOk(await settle(pending, 'login()')).isNewUser).toBe(true)
  })

  test('error: two failed retries, then "Unable to connect wallet" and no Retry', async () => {
    const hp = await openWithWallet(await app())
    hp.wallet.behave('reject', 'eth_requestAccounts')
    void latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    await openWalletSection(hp)
    await chooseWallet(hp)
    for (let retry = 0; retry < 2; retry++) {
      expect((await atStep(hp, 'failed'))[0]).toBe('You rejected the request')
      await hp.modal.getByTestId('connection-retry').click()
      await expect.poll(() => hp.wallet.requests.length, { timeout: 15_000 }).toBe(retry + 2)
    }
    await connection(hp).getByText('Unable to connect wallet').waitFor({ state: 'visible' })
    await visit(hp, 'AWAITING_CONNECTION')
    expect(await hp.modal.getByTestId('connection-retry').count()).toBe(0)
  })

  test('error: a wallet that never answers times out after 120 s (the page clock run forward)', async () => {
    const hp = await openWithWallet(await app(), freshAccount(), (context) =>
      context.clock.install(),
    )
    hp.wallet.behave('hang', 'eth_requestAccounts')
    void latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    await openWalletSection(hp)
    await chooseWallet(hp)
    await atStep(hp, 'waiting')
    await hp.page.clock.runFor(119_000)
    expect((await atStep(hp, 'waiting'))[0]).toBe('Waiting for Test Wallet')
    await hp.page.clock.runFor(1_000)
    expect(await atStep(hp, 'failed')).toEqual([
      'Wallet request timed out',
      'Please try connecting again.',
    ])
  })
})

test('error: a signed message replayed, with everything the browser sent, is refused', async () => {
  const hp = await openWithWallet(await app())
  const sent: { body: string; headers: Record<string, string> }[] = []
  hp.context.on('request', async (request) => {
    if (!request.url().endsWith('/siwe/authenticate') || request.method() !== 'POST') return
    sent.push({ body: request.postData() ?? '', headers: await request.allHeaders() })
  })
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await openWalletSection(hp)
  await chooseWallet(hp)
  expectOk(await settle(pending, 'login()'))
  await expect.poll(() => sent.length, { timeout: 15_000 }).toBe(1)
  const [first] = sent
  const headers = Object.fromEntries(
    Object.entries(first?.headers ?? {}).filter(([name]) => !name.startsWith(':')),
  )
  const replay = await fetch(`${h().apiDirectUrl}${API_PREFIX}/siwe/authenticate`, {
    method: 'POST',
    headers: { ...headers, origin: new URL(h().hostUrl).origin },
    body: first?.body,
  })
  expect(replay.status).toBe(400)
  expect(await replay.json()).toMatchObject({
    error: { message: 'Must initialize SIWE flow first.' },
  })
})

test('error: the wallet disconnecting while the signature is pending reads "Disconnected"', async () => {
  const hp = await openWithWallet(await app())
  hp.wallet.behave('hang', 'personal_sign')
  void latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await openWalletSection(hp)
  await chooseWallet(hp)
  await atStep(hp, 'signing')
  await hp.wallet.emit('disconnect', { code: 4900, message: 'The wallet went away' })
  expect((await atStep(hp, 'failed'))[0]).toBe('Disconnected')
  await visit(hp, 'AWAITING_CONNECTION')
})

describe('linking a wallet', () => {
  test('behavior: an e-mail user links their wallet; the same address is refused for a second user', async () => {
    const account = freshAccount()
    const hp = await openWithWallet(await app(), account)
    const { user } = await signInByEmail(h(), hp, newEmail('wallet-linker'))
    const linking = latchCall<User>(hp.page, 'link', 'wallet')
    await visit(hp, 'LINK_WALLET_SCREEN')
    await screen(hp.modal, 'LINK_WALLET_SCREEN')
      .getByText('Connect your wallet')
      .waitFor({ state: 'visible' })
    await hp.modal.getByTestId('wallet-option').first().click()
    const linked = expectOk(await settle(linking, "link('wallet')"))
    expect(linked.id).toBe(user.id)
    expect(linked.linkedAccounts.map((a) => a.type).sort()).toEqual(['email', 'wallet'])
    const unlinked = expectOk(
      await settle(
        latchCall<User>(hp.page, 'unlink', { type: 'wallet', address: account.address }),
        'unlink()',
      ),
    )
    expect(unlinked.linkedAccounts.map((a) => a.type)).toEqual(['email'])
    // Linked again, for the second user's attempt below.
    const relinking = latchCall<User>(hp.page, 'link', 'wallet')
    await visit(hp, 'LINK_WALLET_SCREEN')
    // This browser connected it before: the screen asks to reconnect it.
    await screen(hp.modal, 'LINK_WALLET_SCREEN')
      .getByText('Reconnect your wallet')
      .waitFor({ state: 'visible' })
    await hp.modal.getByTestId('wallet-option').first().click()
    expectOk(await settle(relinking, "link('wallet') again"))

    // A second user, signed in by e-mail in the same browser once the first signed out.
    expectOk(await settle(latchCall(hp.page, 'logout'), 'logout()'))
    const other = hp
    await signInByEmail(h(), other, newEmail('wallet-second'))
    void latchCall<User>(other.page, 'link', 'wallet')
    await visit(other, 'LINK_WALLET_SCREEN')
    await other.modal.getByTestId('wallet-option').first().click()
    expect(await atStep(other, 'failed')).toEqual([
      'User already exists for this address',
      'Try another address!',
    ])
    expect(await other.modal.getByTestId('connection-retry').count()).toBe(0)
  })
})

describe('the landing and the screens without a wallet', () => {
  test('param: showWalletLoginFirst puts the wallet section first and open (the default; false, second and closed, is the first sign-in test)', async () => {
    const first = await h().createApp({ loginMethods: ['wallet', 'email'] })
    const hp = await openWithWallet(first.id)
    void latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    const titles = () => hp.modal.locator('h2.latch-section-title').allTextContents()
    expect(await titles()).toEqual(['Connect Wallet', 'Email'])
    await hp.modal.getByTestId('wallet-option').first().waitFor({ state: 'visible' })
  })

  test('behavior: education → the install guides → "Done! I have my wallet" back to the landing; in Firefox without Phantom, the wallet list\'s Phantom leads to its guide and its Firefox add-on', async () => {
    // Firefox's user agent in every frame: the guides link Firefox's add-on pages.
    const firefox = async (context: BrowserContext) => {
      await context.addInitScript(() => {
        Object.defineProperty(Navigator.prototype, 'userAgent', {
          get: () => 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
        })
      })
    }
    const hp = await openWithWallet(await app(), freshAccount(), firefox)
    void latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    // SPEC's default accent (#676FFF) is the border of the focused e-mail field.
    await hp.modal.getByTestId('email-input').focus()
    expect(
      await hp.modal
        .locator('.latch-input-row')
        .first()
        .evaluate((row) => getComputedStyle(row).borderTopColor),
    ).toBe('rgb(103, 111, 255)')
    await openWalletSection(hp)
    await hp.modal.getByTestId('wallet-education-link').click()
    await visit(hp, 'WALLET_EDUCATION')
    // A full screen: SPEC's 620 px for the modal and the host's frame, 360 px wide.
    const modalBox = () =>
      hp.modal
        .getByTestId('latch-modal')
        .evaluate((m) => [getComputedStyle(m).height, getComputedStyle(m).width])
    await expect.poll(modalBox).toEqual(['620px', '360px'])
    await expect
      .poll(() =>
        hp.page
          .locator('[data-testid="latch-dialog"] iframe')
          .evaluate((f) => getComputedStyle(f).height),
      )
      .toBe('620px')
    const education = screen(hp.modal, 'WALLET_EDUCATION')
    await education.getByText('Get started with a new wallet').waitFor({ state: 'visible' })
    await education.getByText('Create a new wallet').waitFor({ state: 'visible' })
    await hp.modal.getByTestId('education-option').first().click()
    await visit(hp, 'INSTALL_METAMASK_SCREEN')
    expect(await hp.modal.getByTestId('install-link').getAttribute('href')).toMatch(
      /^https:\/\/addons\.mozilla\.org\//,
    )
    await hp.modal.getByTestId('back-button').click()
    await hp.modal.getByTestId('education-option').nth(1).click()
    await visit(hp, 'INSTALL_COINBASE_WALLET_SCREEN')
    await hp.modal.getByTestId('install-qr').waitFor({ state: 'visible' })
    // SPEC's QR code: default size 160.
    expect(
      await hp.modal.getByTestId('install-qr').evaluate((img) => {
        const { width, height } = img.getBoundingClientRect()
        return [width, height]
      }),
    ).toEqual([160, 160])
    const learn = hp.modal.getByTestId('learn-more')
    expect(await learn.textContent()).toBe('Still not sure? Learn more')
    await hp.modal.getByTestId('install-done').click()
    await visit(hp, 'LANDING')
    // The section the visitor opened before the guides is still the open one.
    const walletToggle = hp.modal.getByTestId('section-wallet-toggle')
    expect(await walletToggle.getAttribute('aria-expanded')).toBe('true')

    // The browser has a wallet, but not Phantom: the list offers Phantom's install guide.
    await openWalletSection(hp)
    const phantom = hp.modal.locator('[data-wallet-id="latch:phantom-install"]')
    expect(await phantom.textContent()).toBe('Phantom')
    await phantom.click()
    await visit(hp, 'INSTALL_PHANTOM_SCREEN')
    const guide = screen(hp.modal, 'INSTALL_PHANTOM_SCREEN')
    await guide.getByRole('heading', { name: 'Install Phantom' }).waitFor()
    const link = guide.getByTestId('install-link')
    expect(await link.textContent()).toBe('Install Phantom')
    expect(await link.getAttribute('href')).toBe(
      'https://addons.mozilla.org/firefox/addon/phantom-app/',
    )
    // Back returns to the landing's list it came from, not to the wallet education it never
    // showed.
    await hp.modal.getByTestId('back-button').click()
    await visit(hp, 'LANDING')
    expect(await walletToggle.getAttribute('aria-expanded')).toBe('true')
    await phantom.waitFor({ state: 'visible' })
  })
})

describe('smart-contract wallets (a local chain as Base Sepolia)', () => {
  const CHAIN = 84532
  let anvil: RunningAnvil
  beforeAll(async () => {
    anvil = await startAnvil({ chainId: CHAIN })
  })
  afterAll(async () => {
    await anvil?.stop()
  })

  async function signIn(account: WalletSigner) {
    const chainApp = await h().createApp({
      loginMethods: ['wallet', 'email'],
      rpcUrls: { [String(CHAIN)]: anvil.url },
    })
    const hp = await openWithWallet(chainApp.id, account, undefined, CHAIN)
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    await chooseWallet(hp)
    return expectOk(await settle(pending, 'login()'))
  }

  test('behavior: a deployed EIP-1271 wallet signs in, on the chain its wallet is on', async () => {
    const account = await deployedContractWallet(anvil, freshAccount())
    const { user, isNewUser } = await signIn(account)
    expect(isNewUser).toBe(true)
    expect(user.linkedAccounts).toMatchObject([
      { type: 'wallet', address: account.address, chainId: `eip155:${CHAIN}` },
    ])
  })

  test('behavior: a counterfactual EIP-6492 wallet signs in before it exists', async () => {
    const account = counterfactualContractWallet(await deployWalletFactory(anvil), freshAccount())
    expect(await anvil.rpc('eth_getCode', [account.address, 'latest'])).toBe('0x')
    const { user } = await signIn(account)
    expect(user.linkedAccounts).toMatchObject([{ type: 'wallet', address: account.address }])
  })
})
