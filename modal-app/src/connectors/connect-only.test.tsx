/**
 * Connect-only (connectWallet()), the wallets reached without the host page (Coinbase
 * Wallet's SDK entry, Phantom's deep link on a phone) and their interstitials. The extension
 * wallet is the one double (it lives outside the machine): an EIP-1193 wallet behind
 * HostMethods.wallets/request with a real key. The API is the HTTP double; the modal is real.
 */
import {
  type ConnectedWallet,
  type HostMethods,
  LatchError,
  SUCCESS_CLOSE_DELAY_MS,
  toLatchError,
} from '@latch/shared'
import { act, cleanup, fireEvent, screen } from '@testing-library/react'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest'
import { exitFlow } from '../flow/flow.ts'
import { runtime } from '../runtime.ts'
import { backTarget } from '../screens/registry.ts'
import { createModalMethods } from '../startup/methods.ts'
import { store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { serverConfig, user } from '../test/fixtures.ts'
import { type Harness, recordingHost, renderModal } from '../test/harness.tsx'
import { FAKE_TIMERS, until } from '../test/until.ts'
import { COINBASE_SDK_ID, coinbaseOverPort, connectorOrigin, setCoinbaseFrame } from './coinbase.ts'
import { serveCoinbaseFrame } from './frame/coinbase-serve.ts'
import { clearWalletConnections, walletConnections } from './history.ts'
import { createInjectedConnector } from './injected.ts'
import {
  isMobileDevice,
  PHANTOM_DEEP_LINK_ID,
  PHANTOM_INSTALL_ID,
  phantomBrowseLink,
} from './phantom.ts'
import { appConnectors } from './WalletSection.tsx'

const account = privateKeyToAccount(
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
)
const PAGE = 'https://shop.example/checkout?item=3#top'
/** Turns to wait for what crosses the connector frame's port and loads a screen's chunk. */
const SLOW = 200_000
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'

/** One extension wallet in the host page; `reject` makes it refuse eth_requestAccounts. */
function hostWithWallet(harness: Harness, wallet = { reject: false }): HostMethods {
  const base = recordingHost(harness.hostCalls)
  return new Proxy(base, {
    get(target, name) {
      if (name === 'wallets') {
        return async () => [{ id: 'uuid-mm', name: 'MetaMask', icon: '', rdns: 'io.metamask' }]
      }
      if (name === 'pageUrl') return async () => PAGE
      if (name === 'request') {
        return async (_id: string, method: string) => {
          harness.hostCalls.push({ method: 'request', args: [method] })
          if (wallet.reject) throw toLatchError({ code: 4001, message: 'User rejected.' })
          if (method === 'eth_requestAccounts') return [account.address.toLowerCase()]
          if (method === 'eth_chainId') return '0x89'
          throw toLatchError({ code: 4200, message: 'Unsupported' })
        }
      }
      return Reflect.get(target, name)
    },
  })
}

const methods = () =>
  createModalMethods({
    serverConfig: async () => serverConfig(),
    restoredUser: async () => null,
  })

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
beforeEach(() => clearWalletConnections())
afterEach(() => {
  api.requests.length = 0
})

async function openConnectOnly(wallet = { reject: false }) {
  const harness = renderModal(api)
  runtime().host = hostWithWallet(harness, wallet)
  let result!: Promise<ConnectedWallet>
  act(() => {
    result = methods().connectWallet()
  })
  result.catch(() => {})
  await screen.findAllByTestId('wallet-option')
  return { harness, result }
}

/** What the modal asked the API, analytics aside. */
const apiCalls = () =>
  api.requests.filter((r) => r.path !== '/analytics_events').map((r) => `${r.method} ${r.path}`)
const title = () => screen.getByTestId('connection-title').textContent
const awaiting = () => screen.queryByTestId('screen-AWAITING_CONNECT_ONLY_CONNECTION')

describe('connect-only', () => {
  test('behavior: a visitor connects a wallet: its list, waiting, connected, and the wallet delivered after 1400 ms; nothing signed, nobody signed in', async () => {
    const { harness, result } = await openConnectOnly()
    expect(screen.getByTestId('screen-CONNECT_ONLY_LANDING_SCREEN')).toBeTruthy()
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Connect a wallet')
    fireEvent.click(screen.getAllByTestId('wallet-option')[0] as HTMLElement)
    expect(store.getState().screen).toBe('AWAITING_CONNECT_ONLY_CONNECTION')
    expect(store.getState().externalWallet?.step).toBe('waiting')
    await screen.findByTestId('screen-AWAITING_CONNECT_ONLY_CONNECTION')
    vi.useFakeTimers(FAKE_TIMERS)
    await until(() => awaiting()?.dataset.step === 'success')
    expect(title()).toBe('Connected to MetaMask')
    expect(screen.getByTestId('connection-description').textContent).toBe(
      `${account.address.slice(0, 6)}…${account.address.slice(-4)}`,
    )
    act(() => vi.advanceTimersByTime(SUCCESS_CLOSE_DELAY_MS - 1))
    expect(store.getState().open).toBe(true)
    act(() => vi.advanceTimersByTime(1))
    await expect(result).resolves.toEqual({
      address: account.address,
      connectorType: 'injected',
      walletClientType: 'metamask',
      chainId: 137,
    })
    expect(store.getState().open).toBe(false)
    // No SIWE, no session: the API heard nothing, the wallet was asked nothing to sign.
    expect(apiCalls()).toEqual([])
    const asked = harness.hostCalls.filter((c) => c.method === 'request').map((c) => c.args[0])
    expect(asked).toEqual(['eth_requestAccounts', 'eth_chainId'])
    expect(harness.session.isAuthenticated()).toBe(false)
    expect(store.getState().user).toBeNull()
    expect(harness.emitted('login')).toEqual([])
    expect(harness.emitted('user')).toEqual([])
    // The history and the host's event.
    expect(walletConnections()[0]).toMatchObject({
      address: account.address,
      connectorType: 'injected',
      walletClientType: 'metamask',
    })
    expect(harness.emitted('wallet_connected')).toHaveLength(1)
  })

  test('behavior: a signed-in user gets CONNECT_ONLY_AUTHENTICATED_SCREEN and stays that user', async () => {
    const harness = renderModal(api)
    runtime().host = hostWithWallet(harness)
    const ada = user()
    act(() => store.setState({ user: ada }))
    let result!: Promise<ConnectedWallet>
    act(() => {
      result = methods().connectWallet()
    })
    await screen.findByTestId('screen-CONNECT_ONLY_AUTHENTICATED_SCREEN')
    expect(screen.getByTestId('connect-only-description').textContent).toBe(
      'You’re signed in to Acme. Connecting a wallet does not change your account.',
    )
    fireEvent.click((await screen.findAllByTestId('wallet-option'))[0] as HTMLElement)
    await until(() => awaiting()?.dataset.step === 'success')
    // The visitor closes the success screen: the wallet is delivered at once.
    act(() => exitFlow(true))
    await expect(result).resolves.toMatchObject({ address: account.address })
    expect(store.getState().user).toBe(ada)
    expect(apiCalls()).toEqual([])
    expect(harness.emitted('login')).toEqual([])
  })

  test('behavior: closing before a wallet connected rejects with connect_exited and records nothing', async () => {
    const { result } = await openConnectOnly()
    act(() => exitFlow(true))
    const error = await result.then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(LatchError)
    expect((error as LatchError).code).toBe('connect_exited')
    expect((error as LatchError).message).toBe('User exited the modal before connecting a wallet')
    expect(walletConnections()).toEqual([])
  })

  test('behavior: a refused connection reads "You rejected the request" with Retry; after two retries "Unable to connect wallet"', async () => {
    const { result } = await openConnectOnly({ reject: true })
    fireEvent.click(screen.getAllByTestId('wallet-option')[0] as HTMLElement)
    await until(() => awaiting()?.dataset.step === 'failed')
    expect(title()).toBe('You rejected the request')
    for (let i = 0; i < 2; i++) {
      fireEvent.click(screen.getByTestId('connection-retry'))
      await until(() => awaiting()?.dataset.step === 'failed')
    }
    expect(title()).toBe('Unable to connect wallet')
    expect(screen.getByTestId('connection-description').textContent).toBe(
      'You rejected the request',
    )
    expect(screen.queryByTestId('connection-retry')).toBeNull()
    expect(store.getState().open).toBe(true)
    act(() => exitFlow(true))
    await expect(result).rejects.toMatchObject({ code: 'connect_exited' })
  })

  test('behavior: back from the connection returns to the connect-only list, and a late answer delivers nothing', async () => {
    await openConnectOnly()
    expect(backTarget('AWAITING_CONNECT_ONLY_CONNECTION')).toBe('CONNECT_ONLY_LANDING_SCREEN')
    expect(backTarget('WALLET_EDUCATION')).toBe('CONNECT_ONLY_LANDING_SCREEN')
    act(() => store.setState({ user: user() }))
    expect(backTarget('AWAITING_CONNECT_ONLY_CONNECTION')).toBe('CONNECT_ONLY_AUTHENTICATED_SCREEN')
  })
})

describe('wallets reached without the host page', () => {
  const injected = (rdns: string, name: string) =>
    createInjectedConnector({ id: rdns, name, icon: '', rdns }, { host: () => null })

  test("behavior: Coinbase Wallet is offered unless its extension is there or no connector origin serves its frame; Phantom unless it is there: its deep link on a phone, its install guide's entry on a desktop", () => {
    const ids = (list: { id: string }[]) => list.map((c) => c.id)
    expect(ids(appConnectors([], false, true))).toEqual([COINBASE_SDK_ID, PHANTOM_INSTALL_ID])
    expect(ids(appConnectors([injected('app.phantom', 'Phantom')], false, true))).toEqual([
      COINBASE_SDK_ID,
    ])
    expect(ids(appConnectors([], true, true))).toEqual([COINBASE_SDK_ID, PHANTOM_DEEP_LINK_ID])
    expect(
      ids(appConnectors([injected('com.coinbase.wallet', 'Coinbase Wallet')], true, true)),
    ).toEqual([PHANTOM_DEEP_LINK_ID])
    expect(ids(appConnectors([injected('app.phantom', 'Phantom')], true, true))).toEqual([
      COINBASE_SDK_ID,
    ])
    // No connector origin: the SDK would have nowhere to run but the modal's origin.
    expect(ids(appConnectors([], false, false))).toEqual([PHANTOM_INSTALL_ID])
  })

  test('behavior: a phone is a mobile user agent or a screen under 440px', () => {
    expect(isMobileDevice(IPHONE, 1024)).toBe(true)
    expect(isMobileDevice('Mozilla/5.0 (X11; Linux x86_64) Chrome/130', 390)).toBe(true)
    expect(isMobileDevice('Mozilla/5.0 (X11; Linux x86_64) Chrome/130', 440)).toBe(false)
    expect(isMobileDevice('Mozilla/5.0 (X11; Linux x86_64) Chrome/130', 0)).toBe(false)
  })

  test("behavior: Phantom's link opens the host page (no fragment) in its browser; other schemes are refused", () => {
    expect(phantomBrowseLink(PAGE)).toBe(
      'https://phantom.app/ul/browse/https%3A%2F%2Fshop.example%2Fcheckout%3Fitem%3D3%26latch_connector%3Dinjected%26latch_wallet_client%3Dphantom?ref=https%3A%2F%2Fshop.example',
    )
    expect(() => phantomBrowseLink('javascript:alert(1)')).toThrow(LatchError)
  })

  test("behavior: the connector origin is the modal page's meta tag: an http(s) origin, never the modal's own", () => {
    const meta = (content: string) => {
      document.head.innerHTML = `<meta name="latch-connector-origin" content="${content}">`
      return connectorOrigin(document)
    }
    try {
      document.head.innerHTML = ''
      expect(connectorOrigin(document)).toBeNull()
      expect(meta('javascript:alert(1)')).toBeNull()
      expect(meta('https://connect.example/path')).toBeNull()
      expect(meta(window.location.origin)).toBeNull()
      expect(meta('https://connect.example')).toBe('https://connect.example')
    } finally {
      document.head.innerHTML = ''
    }
  })
})

describe('the interstitials', () => {
  test("behavior: Phantom's reads 'Redirecting to Phantom Mobile Wallet' with Continue; one second after the click 'Still here?' with 'Go to App Store'", async () => {
    const harness = renderModal(api)
    runtime().host = hostWithWallet(harness)
    act(() => {
      methods()
        .login()
        .catch(() => {})
      store.setState({ screen: 'PHANTOM_INTERSTITIAL_SCREEN' })
    })
    const link = await screen.findByTestId('phantom-continue')
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe(
      'Redirecting to Phantom Mobile Wallet',
    )
    expect(link.textContent).toBe('Continue')
    expect(link.getAttribute('href')).toBe(phantomBrowseLink(PAGE))
    expect(link.getAttribute('target')).toBe('_blank')
    vi.useFakeTimers(FAKE_TIMERS)
    fireEvent.click(link)
    // SPEC's Phantom 'still here' delay: 1 s.
    act(() => vi.advanceTimersByTime(999))
    expect(screen.queryByText('Still here?')).toBeNull()
    act(() => vi.advanceTimersByTime(1))
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Still here?')
    const store_ = screen.getByTestId('phantom-app-store')
    expect(store_.textContent).toBe('Go to App Store')
    expect(store_.getAttribute('href')).toBe(
      'https://play.google.com/store/apps/details?id=app.phantom',
    )
  })

  test('behavior: the Phantom entry on a phone leads to its interstitial, never to a connection', async () => {
    const harness = renderModal(api)
    runtime().host = hostWithWallet(harness)
    const spy = vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue(IPHONE)
    try {
      act(() => {
        methods()
          .login()
          .catch(() => {})
      })
      const phantom = (await screen.findAllByTestId('app-wallet-option')).find(
        (b) => b.dataset.walletId === PHANTOM_DEEP_LINK_ID,
      )
      expect(phantom?.textContent).toBe('Phantom')
      fireEvent.click(phantom as HTMLElement)
      expect(store.getState().screen).toBe('PHANTOM_INTERSTITIAL_SCREEN')
      expect(store.getState().externalWallet).toBeNull()
    } finally {
      spy.mockRestore()
    }
  })

  test("behavior: choosing Coinbase Wallet shows its interstitial with the connector frame's own Continue; a click there connects; a refusal's Retry goes back to that Continue", async () => {
    document.head.insertAdjacentHTML(
      'beforeend',
      '<meta name="latch-connector-origin" content="https://connect.example">',
    )
    // The connector frame served over a port in a document of its own, its SDK a double.
    const wallet = { reject: true, asked: [] as string[] }
    const frameDoc = document.implementation.createHTMLDocument('')
    const channel = new MessageChannel()
    serveCoinbaseFrame(channel.port2, {
      doc: frameDoc,
      trusted: () => true,
      load: async () => () => ({
        async request({ method }) {
          wallet.asked.push(method)
          if (wallet.reject) throw { code: 4001, message: 'User rejected.' }
          if (method === 'eth_requestAccounts') return [account.address.toLowerCase()]
          if (method === 'eth_chainId') return '0x1'
          throw { code: 4200, message: 'Unsupported' }
        },
        on: () => {},
      }),
    })
    const element = document.createElement('iframe')
    document.body.append(element)
    setCoinbaseFrame(Promise.resolve({ ...coinbaseOverPort(channel.port1), element }))
    try {
      const { result } = await openConnectOnly()
      const coinbase = (await screen.findAllByTestId('app-wallet-option')).find(
        (b) => b.dataset.walletId === COINBASE_SDK_ID,
      )
      expect(coinbase?.textContent).toBe('Coinbase Wallet')
      fireEvent.click(coinbase as HTMLElement)
      expect(store.getState().screen).toBe('COINBASE_INTERSTITIAL_SCREEN')
      // The screen's chunk may take a while to load on a busy machine: turns, not a clock.
      const interstitial = () => screen.queryByTestId('screen-COINBASE_INTERSTITIAL_SCREEN')
      await until(() => interstitial() !== null, SLOW)
      expect(interstitial()?.querySelector('h1')?.textContent).toBe('Continue with Coinbase Wallet')
      expect(backTarget('COINBASE_INTERSTITIAL_SCREEN')).toBe('CONNECT_ONLY_LANDING_SCREEN')
      // The frame draws the button, in the modal's words, once its SDK is built.
      const button = () => frameDoc.querySelector('button') as HTMLButtonElement
      await until(() => button()?.disabled === false, SLOW)
      expect(button().textContent).toBe('Continue')
      expect(frameDoc.documentElement.lang).toBe('en')
      // The modal places the frame over its slot once the frame answered cb.init.
      const slot = () => screen.getByTestId('coinbase-slot')
      await until(() => slot().getAttribute('aria-hidden') === 'true', SLOW)
      expect(element.title).toBe('Continue with Coinbase Wallet')
      // Its click asks the SDK (the popup opens in it), then the modal's attempt takes it.
      act(() => button().click())
      await until(() => awaiting()?.dataset.step === 'failed', SLOW)
      expect(title()).toBe('You rejected the request')
      expect(wallet.asked).toEqual(['eth_requestAccounts'])
      // Retry: back to the frame's Continue, the click the popup needs.
      wallet.reject = false
      fireEvent.click(screen.getByTestId('connection-retry'))
      expect(store.getState().screen).toBe('COINBASE_INTERSTITIAL_SCREEN')
      await until(() => button()?.disabled === false, SLOW)
      act(() => button().click())
      await until(() => awaiting()?.dataset.step === 'success', SLOW)
      expect(store.getState().externalWallet?.retries).toBe(1)
      expect(title()).toBe('Connected to Coinbase Wallet')
      act(() => exitFlow(true))
      await expect(result).resolves.toEqual({
        address: account.address,
        connectorType: 'coinbase_wallet',
        walletClientType: 'coinbase_wallet',
        chainId: 1,
      })
      expect(wallet.asked).toEqual(['eth_requestAccounts', 'eth_requestAccounts', 'eth_chainId'])
    } finally {
      setCoinbaseFrame(null)
      element.remove()
      channel.port1.close()
      for (const m of document.head.querySelectorAll('meta[name="latch-connector-origin"]')) {
        m.remove()
      }
    }
  })
})

describe('a Phantom client link (the page opened by Phantom’s link)', () => {
  /** A host page whose browser wallets are `wallets`; records that the modal asked. */
  function hostWith(harness: Harness, wallets: { name: string; rdns: string }[]) {
    const asked = { wallets: 0 }
    const base = recordingHost(harness.hostCalls)
    runtime().host = new Proxy(base, {
      get(target, name) {
        if (name === 'wallets') {
          return async () => {
            asked.wallets++
            return wallets.map((w, i) => ({ id: `uuid-${i}`, icon: '', ...w }))
          }
        }
        return Reflect.get(target, name)
      },
    })
    return asked
  }
  const opened = (harness: Harness) =>
    harness.hostCalls.filter((c) => c.method === 'setOpen' && c.args[0] === true)

  test('error: outside Phantom’s browser the modal opens on LOGIN_FAILED_SCREEN; Try again leads to the landing, Cancel closes', async () => {
    const harness = renderModal(api)
    hostWith(harness, [{ name: 'MetaMask', rdns: 'io.metamask' }])
    await methods().init({}, null, null, null, 'phantom')
    const failed = await screen.findByTestId('screen-LOGIN_FAILED_SCREEN')
    expect(failed.querySelector('h1')?.textContent).toBe('Could not connect with wallet')
    expect(failed.textContent).toContain(
      'Please check that Phantom multichain is enabled and try again.',
    )
    expect(opened(harness)).toHaveLength(1)
    // A login() the host calls now joins this flow instead of starting over.
    let joined = false
    void methods()
      .login()
      .then(
        () => {
          joined = true
        },
        () => {},
      )
    expect(store.getState().screen).toBe('LOGIN_FAILED_SCREEN')
    fireEvent.click(screen.getByTestId('login-failed-retry'))
    expect(store.getState().screen).toBe('LANDING')
    expect(store.getState().flow).toEqual({ kind: 'login' })
    exitFlow(true)
    expect(joined).toBe(false)

    cleanup()
    const again = renderModal(api)
    hostWith(again, [])
    await methods().init({}, null, null, null, 'phantom')
    await screen.findByTestId('screen-LOGIN_FAILED_SCREEN')
    fireEvent.click(screen.getByTestId('login-failed-cancel'))
    expect(store.getState().open).toBe(false)
  })

  test('behavior: in Phantom’s browser (its provider in the page), signed in, or without the link, nothing opens', async () => {
    const harness = renderModal(api)
    const asked = hostWith(harness, [{ name: 'Phantom', rdns: 'app.phantom' }])
    await methods().init({}, null, null, null, 'phantom')
    await until(() => asked.wallets === 1)
    // The check's own continuation runs after the list arrived.
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20))
    })
    expect(store.getState().open).toBe(false)

    cleanup()
    const other = renderModal(api)
    const none = hostWith(other, [])
    await methods().init({}, null, null, null, 'metamask')
    await methods().init({}, null, null, null, null)
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20))
    })
    expect(none.wallets).toBe(0)
    expect(opened(other)).toEqual([])

    cleanup()
    const signedIn = renderModal(api)
    const asked2 = hostWith(signedIn, [])
    const withUser = createModalMethods({
      serverConfig: async () => serverConfig(),
      restoredUser: async () => user(),
    })
    await withUser.init({}, null, null, null, 'phantom')
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20))
    })
    expect(asked2.wallets).toBe(0)
    expect(opened(signedIn)).toEqual([])
  })
})
