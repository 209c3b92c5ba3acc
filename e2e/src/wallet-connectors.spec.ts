/**
 * The other external wallets in Chromium across the three origins: connect-only
 * (connectWallet()) as a
 * visitor and as a signed-in user with a browser wallet (B's injected double), Coinbase Wallet's
 * sign-in through its real SDK against a local stand-in of its keys page (coinbase-keys.ts, a
 * real key), and Phantom's interstitial on an emulated phone with its one-second switch. Every
 * screen reached is held to axe (visit()). No request leaves the machine: Phantom's link is
 * answered locally.
 */
import {
  type ConnectedWallet,
  type LoginResult,
  PHANTOM_STILL_HERE_DELAY_MS,
  type User,
} from '@latch/shared'
import { devices } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type CoinbaseKeysPage, coinbaseWalletFor, startCoinbaseKeysPage } from './coinbase-keys.ts'
import {
  expectOk,
  expectRejected,
  latchCall,
  newEmail,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import type { HostPage } from './harness.ts'
import { injectWallet } from './injected-wallet.ts'
import { useHarness } from './use-harness.ts'

// Started before the harness (hooks run in order), which gives its URL to the modal server.
let keys: CoinbaseKeysPage | undefined
beforeAll(async () => {
  keys = await startCoinbaseKeysPage()
})
afterAll(() => keys?.close())

const h = useHarness({
  get coinbaseKeysUrl() {
    return keys?.url
  },
})

const freshAccount = () => privateKeyToAccount(generatePrivateKey())

let walletApp: string | undefined
async function app(): Promise<string> {
  walletApp ??= (
    await h().createApp({
      loginMethods: ['wallet', 'email'],
      appearance: { showWalletLoginFirst: true },
    })
  ).id
  return walletApp
}

let emailApp: string | undefined
/** Wallet and e-mail login, e-mail first (its form open for signInByEmail). */
async function emailFirstApp(): Promise<string> {
  emailApp ??= (
    await h().createApp({
      loginMethods: ['wallet', 'email'],
      appearance: { showWalletLoginFirst: false },
    })
  ).id
  return emailApp
}

/** The Continue button Coinbase Wallet's connector frame draws on its interstitial. */
const coinbaseContinue = (hp: HostPage) =>
  hp.modal.frameLocator('[data-testid="coinbase-frame"]').getByTestId('coinbase-continue')

const step = (hp: HostPage, id: string, value: string) =>
  hp.modal.locator(`[data-testid="screen-${id}"][data-step="${value}"]`)

describe('connect-only', () => {
  test('behavior: a visitor connects their browser wallet: the list, the connection, the wallet answered; nothing signed, nobody signed in', async () => {
    const account = freshAccount()
    let wallet!: Awaited<ReturnType<typeof injectWallet>>
    const hp = await h().open({
      appId: await app(),
      prepare: async (context) => {
        wallet = await injectWallet(context, { account, name: 'Test Wallet', chainId: 10 })
      },
    })
    const pending = latchCall<ConnectedWallet>(hp.page, 'connectWallet')
    await visit(hp, 'CONNECT_ONLY_LANDING_SCREEN')
    const option = hp.modal.getByTestId('wallet-option').first()
    expect(await option.textContent()).toBe('Test Wallet')
    await option.click()
    await visit(hp, 'AWAITING_CONNECT_ONLY_CONNECTION')
    await step(hp, 'AWAITING_CONNECT_ONLY_CONNECTION', 'success').waitFor({ state: 'visible' })
    expect(await hp.modal.getByTestId('connection-title').textContent()).toBe(
      'Connected to Test Wallet',
    )
    expect(expectOk(await settle(pending, 'connectWallet()'))).toEqual({
      address: account.address,
      connectorType: 'injected',
      walletClientType: 'test_wallet',
      chainId: 10,
    })
    expect(wallet.requests.map((r) => r.method)).toEqual(['eth_requestAccounts', 'eth_chainId'])
    expect(expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))).toBeNull()
  })

  test('behavior: a signed-in user connects a wallet on CONNECT_ONLY_AUTHENTICATED_SCREEN and stays the same user, no wallet linked', async () => {
    const account = freshAccount()
    const hp = await h().open({
      appId: await emailFirstApp(),
      prepare: async (context) => {
        await injectWallet(context, { account, name: 'Test Wallet' })
      },
    })
    const { user } = await signInByEmail(h(), hp, newEmail('connect-only'))
    const pending = latchCall<ConnectedWallet>(hp.page, 'connectWallet')
    await visit(hp, 'CONNECT_ONLY_AUTHENTICATED_SCREEN')
    await hp.modal.getByTestId('wallet-option').first().click()
    await step(hp, 'AWAITING_CONNECT_ONLY_CONNECTION', 'success').waitFor({ state: 'visible' })
    expect(expectOk(await settle(pending, 'connectWallet()'))).toMatchObject({
      address: account.address,
      connectorType: 'injected',
    })
    const after = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))
    expect(after?.id).toBe(user.id)
    expect(after?.linkedAccounts.map((a) => a.type)).toEqual(['email'])
  })

  test('error: closing the list rejects with "User exited the modal before connecting a wallet"', async () => {
    const hp = await h().open({ appId: await app() })
    const pending = latchCall<ConnectedWallet>(hp.page, 'connectWallet')
    await visit(hp, 'CONNECT_ONLY_LANDING_SCREEN')
    await hp.page.keyboard.press('Escape')
    const error = expectRejected(await settle(pending, 'connectWallet()'))
    expect(error).toMatchObject({
      code: 'connect_exited',
      message: 'User exited the modal before connecting a wallet',
    })
  })
})

describe('Coinbase Wallet', () => {
  test('behavior: a visitor signs in with Coinbase Wallet: interstitial, the SDK popup at the configured keys page, encrypted requests, SIWE with its client and connector recorded', async () => {
    const account = freshAccount()
    let cb!: Awaited<ReturnType<typeof coinbaseWalletFor>>
    const hp = await h().open({
      appId: await app(),
      prepare: async (context) => {
        cb = await coinbaseWalletFor(context, account)
      },
    })
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    const coinbase = hp.modal.locator('[data-wallet-id="latch:coinbase-wallet-sdk"]')
    expect(await coinbase.textContent()).toBe('Coinbase Wallet')
    await coinbase.click()
    await visit(hp, 'COINBASE_INTERSTITIAL_SCREEN')
    const proceed = coinbaseContinue(hp)
    await expect.poll(() => proceed.isEnabled(), { timeout: 15_000 }).toBe(true)
    expect(await proceed.textContent()).toBe('Continue')
    const [popup] = await Promise.all([hp.context.waitForEvent('page'), proceed.click()])
    expect(new URL(popup.url()).origin).toBe(new URL(keys?.url ?? '').origin)
    // The SDK names the page that opened it: its connector frame, on the connector origin.
    expect(new URL(popup.url()).searchParams.get('origin')).toBe(h().connectorUrl)
    await step(hp, 'AWAITING_CONNECTION', 'success').waitFor({ state: 'visible' })
    const result = expectOk(await settle(pending, 'login()'))
    expect(result.isNewUser).toBe(true)
    expect(result.user.linkedAccounts).toMatchObject([
      {
        type: 'wallet',
        address: account.address,
        walletClientType: 'coinbase_wallet',
        connectorType: 'coinbase_wallet',
      },
    ])
    // The popup saw its configuration, the signer choice, the handshake, then personal_sign
    // only once decrypted: no request crossed in the clear.
    const clear = cb.received.filter((m) => !m.startsWith('{"decrypted"'))
    expect(clear.some((m) => m.includes('"selectSignerType"'))).toBe(true)
    expect(clear.some((m) => m.includes('"handshake"'))).toBe(true)
    expect(clear.some((m) => m.includes('personal_sign') || m.includes('Sign in'))).toBe(false)
    expect(cb.received).toContain('{"decrypted":"personal_sign"}')
  })

  test('behavior: connect-only through Coinbase Wallet answers its address with connector and client coinbase_wallet; nothing is signed', async () => {
    const account = freshAccount()
    let cb!: Awaited<ReturnType<typeof coinbaseWalletFor>>
    const hp = await h().open({
      appId: await app(),
      prepare: async (context) => {
        cb = await coinbaseWalletFor(context, account)
      },
    })
    const pending = latchCall<ConnectedWallet>(hp.page, 'connectWallet')
    await visit(hp, 'CONNECT_ONLY_LANDING_SCREEN')
    await hp.modal.locator('[data-wallet-id="latch:coinbase-wallet-sdk"]').click()
    const proceed = coinbaseContinue(hp)
    await expect.poll(() => proceed.isEnabled(), { timeout: 15_000 }).toBe(true)
    // The SDK opens its popup again, or reuses the one still open.
    await proceed.click()
    await step(hp, 'AWAITING_CONNECT_ONLY_CONNECTION', 'success').waitFor({ state: 'visible' })
    expect(expectOk(await settle(pending, 'connectWallet()'))).toEqual({
      address: account.address,
      connectorType: 'coinbase_wallet',
      walletClientType: 'coinbase_wallet',
      chainId: 1,
    })
    expect(cb.received.some((m) => m.includes('personal_sign'))).toBe(false)
    expect(expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))).toBeNull()
  })

  test('error: the wallet refusing in its popup reads "You rejected the request" with Retry, which goes back to the frame\'s Continue; its popup then connects', async () => {
    const account = freshAccount()
    let cb!: Awaited<ReturnType<typeof coinbaseWalletFor>>
    const hp = await h().open({
      appId: await app(),
      prepare: async (context) => {
        cb = await coinbaseWalletFor(context, account)
      },
    })
    cb.mode = 'reject'
    const pending = latchCall<ConnectedWallet>(hp.page, 'connectWallet')
    await visit(hp, 'CONNECT_ONLY_LANDING_SCREEN')
    await hp.modal.locator('[data-wallet-id="latch:coinbase-wallet-sdk"]').click()
    const proceed = coinbaseContinue(hp)
    await expect.poll(() => proceed.isEnabled(), { timeout: 15_000 }).toBe(true)
    await Promise.all([hp.context.waitForEvent('page'), proceed.click()])
    await step(hp, 'AWAITING_CONNECT_ONLY_CONNECTION', 'failed').waitFor({ state: 'visible' })
    await visit(hp, 'AWAITING_CONNECT_ONLY_CONNECTION')
    expect(await hp.modal.getByTestId('connection-title').textContent()).toBe(
      'You rejected the request',
    )
    // Retry: the popup opens only in a click in the frame, so its Continue is shown again.
    cb.mode = 'approve'
    await hp.modal.getByTestId('connection-retry').click()
    await visit(hp, 'COINBASE_INTERSTITIAL_SCREEN')
    await expect.poll(() => proceed.isEnabled(), { timeout: 15_000 }).toBe(true)
    // The SDK opens its popup again, or reuses the one still open.
    await proceed.click()
    await step(hp, 'AWAITING_CONNECT_ONLY_CONNECTION', 'success').waitFor({ state: 'visible' })
    await hp.page.keyboard.press('Escape')
    expect(expectOk(await settle(pending, 'connectWallet()'))).toMatchObject({
      address: account.address,
      connectorType: 'coinbase_wallet',
    })
  })
})

test("behavior: Coinbase Wallet's frame is a child of the dialog, titled, and Escape pressed on its Continue closes the modal as anywhere in it", async () => {
  const hp = await h().open({ appId: await app() })
  const pending = latchCall<LoginResult>(hp.page, 'login')
  await visit(hp, 'LANDING')
  await hp.modal.locator('[data-wallet-id="latch:coinbase-wallet-sdk"]').click()
  await visit(hp, 'COINBASE_INTERSTITIAL_SCREEN')
  const proceed = coinbaseContinue(hp)
  await expect.poll(() => proceed.isEnabled(), { timeout: 15_000 }).toBe(true)
  // The frame is the dialog's, so assistive technology and its Tab cycle see it.
  const inDialog = await hp.modal
    .locator('[data-testid="latch-modal"] > iframe[data-testid="coinbase-frame"]')
    .count()
  expect(inDialog).toBe(1)
  expect(await hp.modal.locator('[data-testid="coinbase-frame"]').getAttribute('title')).toBe(
    'Continue with Coinbase Wallet',
  )
  await proceed.focus()
  await hp.page.keyboard.press('Escape')
  expect(expectRejected(await settle(pending, 'login()')).code).toBe('login_exited')
})

describe('Phantom on a desktop', () => {
  test("behavior: Phantom's extension is a browser wallet: listed by the bridge, no deep-link entry, sign-in recorded as phantom/injected", async () => {
    const account = freshAccount()
    const hp = await h().open({
      appId: await app(),
      prepare: async (context) => {
        await injectWallet(context, { account, name: 'Phantom', rdns: 'app.phantom' })
      },
    })
    const pending = latchCall<LoginResult>(hp.page, 'login')
    await visit(hp, 'LANDING')
    const option = hp.modal.getByTestId('wallet-option').first()
    expect(await option.textContent()).toBe('Phantom')
    await hp.modal.getByTestId('app-wallet-list').waitFor({ state: 'visible' })
    expect(await hp.modal.locator('[data-wallet-id="latch:phantom-mobile"]').count()).toBe(0)
    await option.click()
    await step(hp, 'AWAITING_CONNECTION', 'success').waitFor({ state: 'visible' })
    const result = expectOk(await settle(pending, 'login()'))
    expect(result.user.linkedAccounts).toMatchObject([
      {
        type: 'wallet',
        address: account.address,
        walletClientType: 'phantom',
        connectorType: 'injected',
      },
    ])
  })
})

describe('Phantom on a phone', () => {
  test("behavior: an iPhone gets 'Redirecting to Phantom Mobile Wallet' with Continue to Phantom's link; one second after the click 'Still here?' with 'Go to App Store'", async () => {
    const context = await h().browser.newContext({ ...devices['iPhone 13'] })
    try {
      // Phantom's site is answered here: nothing leaves the machine.
      const opened: string[] = []
      await context.route('https://phantom.app/**', (route) => {
        opened.push(route.request().url())
        return route.fulfill({ contentType: 'text/html', body: '<title>Phantom</title>' })
      })
      await context.clock.install()
      const hp = await h().open({ appId: await app(), context })
      const pending = latchCall<LoginResult>(hp.page, 'login')
      await visit(hp, 'LANDING')
      const phantom = hp.modal.locator('[data-wallet-id="latch:phantom-mobile"]')
      expect(await phantom.textContent()).toBe('Phantom')
      await phantom.click()
      await visit(hp, 'PHANTOM_INTERSTITIAL_SCREEN')
      expect(await hp.modal.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Redirecting to Phantom Mobile Wallet',
      )
      const proceed = hp.modal.getByTestId('phantom-continue')
      // The host page, marked as a Phantom client link (connector and wallet client).
      const page = new URL(hp.page.url())
      page.hash = ''
      page.searchParams.set('latch_connector', 'injected')
      page.searchParams.set('latch_wallet_client', 'phantom')
      expect(await proceed.getAttribute('href')).toBe(
        `https://phantom.app/ul/browse/${encodeURIComponent(page.href)}?ref=${encodeURIComponent(page.origin)}`,
      )
      // The clock stands still from here: only runFor moves it.
      await hp.page.clock.pauseAt((await hp.page.evaluate(() => Date.now())) + 1000)
      const [phantomPage] = await Promise.all([context.waitForEvent('page'), proceed.click()])
      await phantomPage.waitForLoadState()
      expect(opened[0]?.startsWith('https://phantom.app/ul/browse/')).toBe(true)
      await hp.page.clock.runFor(PHANTOM_STILL_HERE_DELAY_MS - 1)
      expect(await hp.modal.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Redirecting to Phantom Mobile Wallet',
      )
      await hp.page.clock.runFor(1)
      await hp.modal.getByText('Still here?').waitFor({ state: 'visible' })
      // axe runs on timers of its own.
      await hp.page.clock.resume()
      await visit(hp, 'PHANTOM_INTERSTITIAL_SCREEN')
      const store = hp.modal.getByTestId('phantom-app-store')
      expect(await store.textContent()).toBe('Go to App Store')
      expect(await store.getAttribute('href')).toBe(
        'https://apps.apple.com/app/phantom-crypto-wallet/id1598432977',
      )
      await hp.page.keyboard.press('Escape')
      await settle(pending, 'login()')
    } finally {
      await context.close()
    }
  })

  test('error: the Phantom client link opened in a browser without Phantom: LOGIN_FAILED_SCREEN with its texts, the parameters gone from the address bar; Try again leads to the landing, Cancel closes', async () => {
    const context = await h().browser.newContext({ ...devices['iPhone 13'] })
    try {
      const hp = await h().open({
        appId: await app(),
        context,
        path: '/?item=3&latch_connector=injected&latch_wallet_client=phantom',
      })
      await visit(hp, 'LOGIN_FAILED_SCREEN')
      expect(await hp.modal.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Could not connect with wallet',
      )
      await hp.modal
        .getByText('Please check that Phantom multichain is enabled and try again.')
        .waitFor({ state: 'visible' })
      const address = new URL(hp.page.url())
      expect(address.searchParams.get('item')).toBe('3')
      expect(address.searchParams.has('latch_connector')).toBe(false)
      expect(address.searchParams.has('latch_wallet_client')).toBe(false)
      // A login() the page calls joins the flow on screen.
      const pending = latchCall<LoginResult>(hp.page, 'login')
      await hp.modal.getByRole('button', { name: 'Try again' }).click()
      await visit(hp, 'LANDING')
      await hp.page.keyboard.press('Escape')
      expect(expectRejected(await settle(pending, 'login()')).message).toBe(
        'User exited the modal before logging in',
      )

      await hp.page.goto(`${hp.page.url()}&latch_wallet_client=phantom`)
      await visit(hp, 'LOGIN_FAILED_SCREEN')
      await hp.modal.getByRole('button', { name: 'Cancel' }).click()
      await hp.page.waitForFunction(
        () =>
          document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')?.open === false,
      )
    } finally {
      await context.close()
    }
  })
})
