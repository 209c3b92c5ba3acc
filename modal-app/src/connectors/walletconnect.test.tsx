/**
 * The WalletConnect connector without a relay: the provider's options, the storage
 * it is given, the connector over a provider double (the one double: the provider stands for
 * the relay and the phone wallet behind it), the settings the option reads, and the pairing
 * screen. The whole way through a relay to a real sign client is e2e/src/walletconnect.spec.ts.
 */
import {
  CHAINS,
  type ConnectedWallet,
  DEFAULT_CHAIN_ID,
  type Hex,
  LatchError,
  type LoginResult,
  QR_DEFAULT_SIZE,
  QR_ERROR_CORRECTION,
} from '@latch/shared'
import { WALLET_APPS } from '@latch/shared/wallet-apps'
import { act, fireEvent, render, screen } from '@testing-library/react'
import { toString as qrSvg } from 'qrcode'
import { getAddress, verifyMessage } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { parseSiweMessage } from 'viem/siwe'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest'
import { exitFlow, login } from '../flow/flow.ts'
import { LOGOUT_HOOK_TIMEOUT_MS, logout } from '../session/account.ts'
import { createModalMethods } from '../startup/methods.ts'
import { store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { authAnswer, serverConfig, user } from '../test/fixtures.ts'
import { renderModal } from '../test/harness.tsx'
import { until } from '../test/until.ts'
import { serveConnectorFrame } from './frame/serve.ts'
import { frameOverPort, setConnectorFrame } from './frame-host.ts'
import { clearWalletConnections } from './history.ts'
import { WalletConnectPairing } from './WalletConnectPairing.tsx'
import {
  createWalletConnectConnector,
  forgetWalletConnectProviders,
  type Provider,
  type ProviderOptions,
  pairing,
  providerOptions,
  WalletConnectStorage,
  walletConnectPageStorage,
} from './walletconnect.ts'
import {
  DEFAULT_WALLETCONNECT_RELAY_URL,
  WALLETCONNECT_RELAY_META,
  walletConnectProjectId,
  walletConnectRelayUrl,
  walletConnectSettings,
} from './walletconnect-config.ts'
import { forgetStoredWalletConnect, WALLETCONNECT_STORAGE_PREFIX } from './walletconnect-storage.ts'

// anvil's third funded key: a known test key.
const account = privateKeyToAccount(
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
)
const PROJECT_ID = '0123456789abcdef0123456789abcdef'
const SETTINGS = { projectId: PROJECT_ID, relayUrl: 'ws://127.0.0.1:7070' }
const URI =
  'wc:7f6e504bfad60b485450578e05678ed3e8e8c4751d3c6160be17160d63ec90f9@2?relay-protocol=irn&symKey=587d5484ce2a2a6ee3ba1962fdd7e8588e06200c46823bd18fbd67def96ad303&expiryTimestamp=1705000000'
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'

type Handler = (payload: unknown) => void

/**
 * WalletConnect's provider module as the option loads it (the relay and the phone wallet stand
 * behind it): init records its options; connect() shows the pairing URI and waits until the
 * test settles the proposal; requests go to `wallet`.
 */
const wc = vi.hoisted(() => {
  type Listener = (payload: unknown) => void
  const state = {
    uri: 'wc:aa11@2?relay-protocol=irn&symKey=bb22',
    inits: [] as Record<string, unknown>[],
    providers: [] as FakeEthereumProvider[],
    /** The account and wallet name the approval answers. */
    approval: { account: '', peer: 'Rainbow', chainId: 1 },
    /** The proposal on the relay: approve() or reject(reason). */
    proposal: null as null | { approve: () => void; reject: (e: unknown) => void },
    wallet: async (_method: string, _params: unknown): Promise<unknown> => null,
  }
  class FakeEthereumProvider {
    session: { peer: { metadata: { name: string } } } | undefined = undefined
    accounts: string[] = []
    chainId = 1
    connects = 0
    readonly signer = {
      client: {
        core: {
          verify: {
            register: async (): Promise<string> => {
              throw new Error('Verify would wait 5 s for a frame the CSP refuses')
            },
          },
        },
      },
    }
    private readonly listeners = new Map<string, Set<Listener>>()
    connect(): Promise<void> {
      this.connects++
      this.emit('display_uri', `${state.uri}&n=${this.connects}`)
      return new Promise((resolve, reject) => {
        state.proposal = {
          approve: () => {
            this.session = { peer: { metadata: { name: state.approval.peer } } }
            this.accounts = [state.approval.account]
            this.chainId = state.approval.chainId
            resolve()
          },
          reject,
        }
      })
    }
    request(args: { method: string; params?: unknown }): Promise<unknown> {
      return state.wallet(args.method, args.params)
    }
    on(event: string, listener: Listener): this {
      const set = this.listeners.get(event) ?? new Set()
      set.add(listener)
      this.listeners.set(event, set)
      return this
    }
    removeListener(event: string, listener: Listener): this {
      this.listeners.get(event)?.delete(listener)
      return this
    }
    emit(event: string, payload: unknown): void {
      for (const listener of [...(this.listeners.get(event) ?? [])]) listener(payload)
    }
  }
  return { state, FakeEthereumProvider }
})
vi.mock('@walletconnect/ethereum-provider', () => ({
  EthereumProvider: {
    init: async (options: Record<string, unknown>) => {
      wc.state.inits.push(options)
      const provider = new wc.FakeEthereumProvider()
      wc.state.providers.push(provider)
      return provider
    },
  },
}))

/**
 * The provider as the relay and the phone wallet make it behave: connect() shows the pairing
 * URI and waits for the wallet (`onConnect`, approving by default); requests get `answer`.
 */
class ProviderDouble implements Provider {
  session: unknown = undefined
  accounts: string[] = []
  chainId = 1
  peerName: string | undefined = undefined
  connects = 0
  readonly requests: { method: string; params?: unknown }[] = []
  private readonly handlers = new Map<string, Set<Handler>>()
  onConnect: () => Promise<void> = async () => this.approve()
  answer: (method: string, params: unknown) => Promise<unknown> = async () => null

  /** The wallet approved the proposal: a session with its account (lower case) and chain. */
  approve(chainId = 1, accounts = [account.address.toLowerCase()], peerName = 'Rainbow') {
    this.session = { topic: 'session-topic' }
    this.accounts = accounts
    this.chainId = chainId
    this.peerName = peerName
  }

  async connect(): Promise<void> {
    this.connects++
    this.emit('display_uri', URI)
    await this.onConnect()
  }

  disconnects = 0
  async disconnect(): Promise<void> {
    this.disconnects++
    this.session = undefined
    this.accounts = []
  }

  async request(args: { method: string; params?: unknown }): Promise<unknown> {
    this.requests.push(args)
    return this.answer(args.method, args.params)
  }

  on(event: string, handler: Handler): void {
    const set = this.handlers.get(event) ?? new Set()
    set.add(handler)
    this.handlers.set(event, set)
  }

  removeListener(event: string, handler: Handler): void {
    this.handlers.get(event)?.delete(handler)
  }

  emit(event: string, payload: unknown): void {
    for (const handler of [...(this.handlers.get(event) ?? [])]) handler(payload)
  }

  listeners(event: string): number {
    return this.handlers.get(event)?.size ?? 0
  }
}

/** A promise and its settlers, for a wallet that answers when the test says so. */
function deferred() {
  let resolve: () => void = () => {}
  let reject: (e: unknown) => void = () => {}
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

const METADATA = { name: 'Shop', url: 'https://shop.example' }

/** A connector over `double`; `load` records the options the provider was built with. */
function connectorOver(double: ProviderDouble, timeoutMs = 1_000) {
  const load = vi.fn(async (_options: ProviderOptions): Promise<Provider> => double)
  const connector = createWalletConnectConnector(SETTINGS, {
    metadata: async () => METADATA,
    timeoutMs,
    load,
  })
  return { connector, load }
}

/** What a failed call threw. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (e) {
    return e
  }
  throw new Error('expected a failure')
}

/** The catalogue code of a LatchError, or what else was thrown. */
async function latchCode(promise: Promise<unknown>): Promise<string> {
  const e = await failure(promise)
  if (!(e instanceof LatchError)) throw new Error(`not a LatchError: ${String(e)}`)
  return e.code
}

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
beforeEach(() => {
  forgetWalletConnectProviders()
  clearWalletConnections()
  pairing.setState({ uri: null })
  wc.state.inits.length = 0
  wc.state.providers.length = 0
  wc.state.proposal = null
  wc.state.approval = { account: account.address.toLowerCase(), peer: 'Rainbow', chainId: 1 }
})
afterEach(() => {
  vi.restoreAllMocks()
  localStorage.clear()
  api.requests.length = 0
})

describe('providerOptions', () => {
  test('behavior: no QR modal, no telemetry, every supported chain optional with the default first, public nodes, the app and host page', () => {
    const options = providerOptions(SETTINGS, METADATA)
    expect(options.projectId).toBe(PROJECT_ID)
    expect(options.relayUrl).toBe('ws://127.0.0.1:7070')
    expect(options.showQrModal).toBe(false)
    expect(options.telemetryEnabled).toBe(false)
    expect(options.optionalChains[0]).toBe(DEFAULT_CHAIN_ID)
    expect([...options.optionalChains].sort((a, b) => a - b)).toEqual(
      CHAINS.map((c) => c.id).sort((a, b) => a - b),
    )
    expect(new Set(options.optionalChains).size).toBe(options.optionalChains.length)
    expect(Object.keys(options.rpcMap)).toHaveLength(CHAINS.length)
    for (const chain of CHAINS) expect(options.rpcMap[String(chain.id)]).toBe(chain.rpcUrl)
    expect(options.rpcMap['137']).toBe('https://polygon-rpc.com')
    // No RPC of WalletConnect's (which would carry the project id).
    expect(JSON.stringify(options.rpcMap)).not.toContain('walletconnect')
    expect(options.metadata).toEqual({
      name: 'Shop',
      description: '',
      url: 'https://shop.example',
      icons: [],
    })
  })

  test('edge: an app without a name is named Latch in the wallet', () => {
    expect(providerOptions(SETTINGS, { name: '', url: 'https://a.example' }).metadata.name).toBe(
      'Latch',
    )
  })
})

describe('WalletConnectStorage', () => {
  test('behavior: in localStorage under its prefix, JSON round trip; keys and entries are its own only', async () => {
    localStorage.setItem('someone-else', '"x"')
    const storage = new WalletConnectStorage()
    await storage.setItem('wc@2:core:0.3//keychain', { topic: 'abc', n: 2, list: [1, null] })
    await storage.setItem('flag', true)
    expect(localStorage.getItem('latch:wc:wc@2:core:0.3//keychain')).toBe(
      '{"topic":"abc","n":2,"list":[1,null]}',
    )
    expect(await storage.getItem('wc@2:core:0.3//keychain')).toEqual({
      topic: 'abc',
      n: 2,
      list: [1, null],
    })
    expect(await storage.getItem<boolean>('flag')).toBe(true)
    expect(await storage.getItem('missing')).toBeUndefined()
    expect((await storage.getKeys()).sort()).toEqual(['flag', 'wc@2:core:0.3//keychain'])
    expect(await storage.getEntries()).toEqual(
      expect.arrayContaining([
        ['flag', true],
        ['wc@2:core:0.3//keychain', { topic: 'abc', n: 2, list: [1, null] }],
      ]),
    )
    expect(await storage.getEntries()).toHaveLength(2)
    // A later page (a reload) finds what this one kept.
    expect(await new WalletConnectStorage().getItem<boolean>('flag')).toBe(true)
    await storage.removeItem('flag')
    expect(localStorage.getItem('latch:wc:flag')).toBeNull()
    expect(await storage.getKeys()).toEqual(['wc@2:core:0.3//keychain'])
    expect(localStorage.getItem('someone-else')).toBe('"x"')
  })

  test('behavior: where the frame is refused localStorage, memory for the page: nothing reaches localStorage', async () => {
    const own = Object.getOwnPropertyDescriptor(globalThis, 'localStorage')
    const real = localStorage
    Object.defineProperty(globalThis, 'localStorage', {
      configurable: true,
      get() {
        throw new DOMException('Access is denied for this document.', 'SecurityError')
      },
    })
    let storage: WalletConnectStorage
    try {
      expect(WalletConnectStorage.available()).toBeNull()
      storage = new WalletConnectStorage()
    } finally {
      if (own) Object.defineProperty(globalThis, 'localStorage', own)
    }
    await storage.setItem('session', { topic: 't' })
    expect(await storage.getItem('session')).toEqual({ topic: 't' })
    expect(await storage.getKeys()).toEqual(['session'])
    expect(await storage.getEntries()).toEqual([['session', { topic: 't' }]])
    expect(real.length).toBe(0)
    // Another page (a reload) starts empty.
    expect(await new WalletConnectStorage(null).getItem('session')).toBeUndefined()
    await storage.removeItem('session')
    expect(await storage.getKeys()).toEqual([])
  })

  test('edge: a localStorage that refuses writes (probe or full) — memory, and what it kept is still listed', async () => {
    const refuse = () => {
      throw new DOMException('Quota exceeded', 'QuotaExceededError')
    }
    const refusing: Storage = {
      length: 0,
      key: () => null,
      getItem: () => null,
      setItem: refuse,
      removeItem: () => {},
      clear: () => {},
    }
    vi.spyOn(Storage.prototype, 'setItem').mockImplementation(refuse)
    expect(WalletConnectStorage.available()).toBeNull()
    const storage = new WalletConnectStorage(refusing)
    await storage.setItem('pairing', ['p1'])
    expect(await storage.getItem('pairing')).toEqual(['p1'])
    expect(await storage.getKeys()).toEqual(['pairing'])
    expect(await storage.getEntries()).toEqual([['pairing', ['p1']]])
  })
})

describe('the connector', () => {
  test('behavior: connect shows the pairing URI while the wallet decides, then clears it; checksummed address and chain', async () => {
    const double = new ProviderDouble()
    const wallet = deferred()
    double.onConnect = async () => {
      await wallet.promise
      double.approve(137)
    }
    const { connector, load } = connectorOver(double)
    expect(connector.status).toBe('disconnected')
    const connection = connector.connect()
    await vi.waitFor(() => expect(pairing.getState().uri).toBe(URI))
    expect(connector.status).toBe('connecting')
    wallet.resolve()
    expect(await connection).toEqual({ address: getAddress(account.address), chainId: 137 })
    expect((await connection).address).toBe(account.address)
    expect(connector.status).toBe('connected')
    expect(pairing.getState().uri).toBeNull()
    expect(double.listeners('display_uri')).toBe(0)
    expect(double.connects).toBe(1)
    // Built with the settings and the metadata of the host page.
    expect(load).toHaveBeenCalledTimes(1)
    expect(load.mock.calls[0]?.[0]).toMatchObject({
      projectId: PROJECT_ID,
      relayUrl: 'ws://127.0.0.1:7070',
      metadata: { name: 'Shop', url: 'https://shop.example' },
    })
  })

  test('edge: a chain Latch does not support is answered as the default chain', async () => {
    const double = new ProviderDouble()
    double.onConnect = async () => double.approve(999_999)
    const { connector } = connectorOver(double)
    expect((await connector.connect()).chainId).toBe(DEFAULT_CHAIN_ID)
  })

  test('behavior: a session left by an earlier page is used without a new pairing; one provider per page', async () => {
    const double = new ProviderDouble()
    double.approve(10)
    const seen: (string | null)[] = []
    const unsubscribe = pairing.subscribe((s) => seen.push(s.uri))
    const first = connectorOver(double)
    try {
      expect(await first.connector.connect()).toEqual({ address: account.address, chainId: 10 })
    } finally {
      unsubscribe()
    }
    expect(double.connects).toBe(0)
    expect(seen.filter((uri) => uri !== null)).toEqual([])
    // Another connector of the same settings (the option clicked again) gets the same provider.
    const second = connectorOver(double)
    await second.connector.connect()
    expect(second.load).not.toHaveBeenCalled()
  })

  test("error: a turned-down proposal ('User rejected.', the code dropped by the provider) is 4001", async () => {
    for (const reason of ['User rejected.', 'User disapproved requested chains']) {
      forgetWalletConnectProviders()
      const double = new ProviderDouble()
      double.onConnect = async () => {
        throw new Error(reason)
      }
      const { connector } = connectorOver(double)
      expect(await failure(connector.connect())).toEqual({
        code: 4001,
        message: 'User rejected the request.',
      })
      expect(connector.status).toBe('disconnected')
      expect(pairing.getState().uri).toBeNull()
    }
  })

  test('error: WalletConnect 5000-5002 are 4001; other failures pass through as they are', async () => {
    for (const code of [5000, 5001, 5002]) {
      forgetWalletConnectProviders()
      const double = new ProviderDouble()
      double.onConnect = async () => {
        throw { code, message: 'Rejected' }
      }
      expect(await failure(connectorOver(double).connector.connect())).toMatchObject({
        code: 4001,
      })
    }
    forgetWalletConnectProviders()
    const relayDown = new Error('WebSocket connection closed abnormally with code: 3000')
    const double = new ProviderDouble()
    double.onConnect = async () => {
      throw relayDown
    }
    expect(await failure(connectorOver(double).connector.connect())).toBe(relayDown)
    forgetWalletConnectProviders()
    const other = new ProviderDouble()
    other.onConnect = async () => {
      throw { code: 5100, message: 'Unsupported chains' }
    }
    expect(await failure(connectorOver(other).connector.connect())).toEqual({
      code: 5100,
      message: 'Unsupported chains',
    })
  })

  test('error: a wallet that never answers times out; the pairing is cleared and a new attempt pairs again', async () => {
    const double = new ProviderDouble()
    double.onConnect = () => new Promise(() => {})
    const { connector } = connectorOver(double, 30)
    expect(await latchCode(connector.connect())).toBe('wallet_request_timeout')
    expect(connector.status).toBe('disconnected')
    expect(pairing.getState().uri).toBeNull()
    expect(double.listeners('display_uri')).toBe(0)
    double.onConnect = async () => double.approve()
    await connector.connect()
    expect(double.connects).toBe(2)
  })

  test('error: a session without a usable account is wallet_not_connected', async () => {
    for (const accounts of [[], ['not-an-address'], ['0x1234']]) {
      forgetWalletConnectProviders()
      const double = new ProviderDouble()
      double.onConnect = async () => double.approve(1, accounts)
      const { connector } = connectorOver(double)
      expect(await latchCode(connector.connect())).toBe('wallet_not_connected')
      expect(connector.status).toBe('disconnected')
    }
  })

  test('error: a provider that cannot be built is unable_to_build_connector; the next attempt builds afresh', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const double = new ProviderDouble()
    const load = vi
      .fn(async (_options: ProviderOptions): Promise<Provider> => double)
      .mockRejectedValueOnce(new Error('chunk failed to load'))
    const connector = createWalletConnectConnector(SETTINGS, {
      metadata: async () => METADATA,
      timeoutMs: 1_000,
      load,
    })
    const e = await failure(connector.connect())
    expect(e).toBeInstanceOf(LatchError)
    expect((e as LatchError).code).toBe('unable_to_build_connector')
    expect(((e as LatchError).cause as Error).message).toBe('chunk failed to load')
    expect(connector.status).toBe('disconnected')
    expect(logged).toHaveBeenCalled()
    expect(await connector.connect()).toEqual({ address: account.address, chainId: 1 })
    expect(load).toHaveBeenCalledTimes(2)
  })

  test('error: requests before a connection: connector_not_initialized, then wallet_not_connected after a disconnect', async () => {
    const double = new ProviderDouble()
    const { connector } = connectorOver(double)
    expect(await latchCode(connector.request('eth_accounts'))).toBe('connector_not_initialized')
    expect(double.requests).toEqual([])
    await connector.connect()
    double.emit('disconnect', { code: 6000, message: 'User disconnected.' })
    expect(connector.status).toBe('disconnected')
    expect(await latchCode(connector.request('personal_sign', ['0x00', account.address]))).toBe(
      'wallet_not_connected',
    )
    expect(double.requests).toEqual([])
  })

  test('behavior: requests go to the wallet with their params; 5000 is 4001; a silent wallet times out', async () => {
    const double = new ProviderDouble()
    const { connector } = connectorOver(double, 30)
    await connector.connect()
    double.answer = async (method) => (method === 'personal_sign' ? '0xsigned' : null)
    expect(await connector.request('personal_sign', ['0x6869', account.address])).toBe('0xsigned')
    expect(double.requests).toEqual([
      { method: 'personal_sign', params: ['0x6869', account.address] },
    ])
    double.answer = async () => {
      throw { code: 5000, message: 'User rejected.' }
    }
    expect(await failure(connector.request('personal_sign', ['0x6869', account.address]))).toEqual({
      code: 4001,
      message: 'User rejected the request.',
    })
    double.answer = async () => {
      throw { code: 4100, message: 'Unauthorized' }
    }
    expect(await failure(connector.request('eth_sign'))).toEqual({
      code: 4100,
      message: 'Unauthorized',
    })
    double.answer = () => new Promise(() => {})
    expect(await latchCode(connector.request('personal_sign', ['0x00', account.address]))).toBe(
      'wallet_request_timeout',
    )
  })

  test("behavior: the wallet's events reach the connector's listeners until unsubscribed", async () => {
    const double = new ProviderDouble()
    const { connector } = connectorOver(double)
    const accounts: unknown[] = []
    const chains: unknown[] = []
    const disconnects: unknown[] = []
    const stopAccounts = connector.on('accountsChanged', (a) => accounts.push(a))
    connector.on('chainChanged', (c) => chains.push(c))
    connector.on('disconnect', (d) => disconnects.push(d))
    await connector.connect()
    double.emit('accountsChanged', ['0xabc'])
    double.emit('chainChanged', 137)
    expect(accounts).toEqual([['0xabc']])
    expect(chains).toEqual([137])
    stopAccounts()
    double.emit('accountsChanged', ['0xdef'])
    expect(accounts).toEqual([['0xabc']])
    expect(connector.status).toBe('connected')
    double.emit('disconnect', { code: 6000 })
    expect(disconnects).toEqual([undefined])
    expect(connector.status).toBe('disconnected')
  })

  test('behavior: the connector that connected last listens to the page’s one provider; the one before stops (no pile-up)', async () => {
    const double = new ProviderDouble()
    const first = connectorOver(double).connector
    const second = connectorOver(double).connector
    const seen: string[] = []
    first.on('accountsChanged', () => seen.push('first'))
    second.on('accountsChanged', () => seen.push('second'))
    await first.connect()
    await second.connect()
    await second.connect()
    for (const event of ['accountsChanged', 'chainChanged', 'disconnect']) {
      expect(double.listeners(event)).toBe(1)
    }
    double.emit('accountsChanged', ['0xabc'])
    expect(seen).toEqual(['second'])
  })

  test("behavior: walletClientType is the peer wallet's name; wallet_connect before and for no name", async () => {
    const cases: [string | undefined, string][] = [
      ['Rainbow', 'rainbow'],
      ['Trust Wallet', 'trust_wallet'],
      ['MetaMask Wallet', 'metamask_wallet'],
      ['Latch', 'wallet_connect'],
      ['', 'wallet_connect'],
      [undefined, 'wallet_connect'],
    ]
    for (const [peer, expected] of cases) {
      forgetWalletConnectProviders()
      const double = new ProviderDouble()
      double.onConnect = async () => {
        double.approve()
        double.peerName = peer
      }
      const { connector } = connectorOver(double)
      expect(connector.walletClientType).toBe('wallet_connect')
      expect(connector.type).toBe('wallet_connect')
      await connector.connect()
      expect(connector.walletClientType).toBe(expected)
    }
  })
})

describe('logout', () => {
  test('behavior: logout ends the session this page built and removes the stored one; the next connection pairs afresh', async () => {
    const double = new ProviderDouble()
    const first = connectorOver(double)
    await first.connector.connect()
    expect(double.connects).toBe(1)
    localStorage.setItem(`${WALLETCONNECT_STORAGE_PREFIX}wc@2:client:0.3//session`, '[]')
    localStorage.setItem('latch:other', 'kept')
    renderModal(api)
    await logout()
    expect(double.disconnects).toBe(1)
    expect(
      localStorage.getItem(`${WALLETCONNECT_STORAGE_PREFIX}wc@2:client:0.3//session`),
    ).toBeNull()
    expect(localStorage.getItem('latch:other')).toBe('kept')
    // The provider is forgotten: the option clicked again builds one and pairs.
    const fresh = new ProviderDouble()
    const second = connectorOver(fresh)
    await second.connector.connect()
    expect(second.load).toHaveBeenCalledOnce()
    expect(fresh.connects).toBe(1)
  })

  test('edge: a wallet that never answers the disconnect does not hold logout past its limit; refused storage is no error', async () => {
    vi.useFakeTimers()
    try {
      const double = new ProviderDouble()
      double.approve()
      double.disconnect = () => new Promise<void>(() => {})
      const { connector } = connectorOver(double)
      await connector.connect()
      renderModal(api)
      let done = false
      void logout().then(() => {
        done = true
      })
      await vi.advanceTimersByTimeAsync(LOGOUT_HOOK_TIMEOUT_MS - 1)
      expect(done).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      expect(done).toBe(true)
    } finally {
      vi.useRealTimers()
    }
    expect(() =>
      forgetStoredWalletConnect(() => {
        throw new DOMException('refused', 'SecurityError')
      }),
    ).not.toThrow()
  })
})

describe('walletconnect-config', () => {
  /** A page whose relay meta tag says `content` (none for null). */
  function page(content: string | null): Document {
    const doc = document.implementation.createHTMLDocument('modal')
    if (content !== null) {
      const meta = doc.createElement('meta')
      meta.name = WALLETCONNECT_RELAY_META
      meta.content = content
      doc.head.append(meta)
    }
    return doc
  }

  test('behavior: a project id from the configuration is taken trimmed; none, or not a plain token, is refused', () => {
    expect(walletConnectProjectId({ walletConnectCloudProjectId: PROJECT_ID })).toBe(PROJECT_ID)
    expect(walletConnectProjectId({ walletConnectCloudProjectId: `  ${PROJECT_ID}\n` })).toBe(
      PROJECT_ID,
    )
    expect(walletConnectProjectId({ walletConnectCloudProjectId: 'a'.repeat(128) })).toBe(
      'a'.repeat(128),
    )
    for (const bad of ['', '   ', 'a'.repeat(129), 'id with space', '<script>', '../x', 'a?b=c']) {
      expect(walletConnectProjectId({ walletConnectCloudProjectId: bad })).toBeNull()
    }
    expect(walletConnectProjectId({ walletConnectCloudProjectId: null })).toBeNull()
    expect(walletConnectProjectId(null)).toBeNull()
    expect(walletConnectProjectId(undefined)).toBeNull()
  })

  test("behavior: the relay is the meta tag's ws(s) URL, trailing slash trimmed", () => {
    expect(walletConnectRelayUrl(page('ws://127.0.0.1:7070'))).toBe('ws://127.0.0.1:7070')
    expect(walletConnectRelayUrl(page('wss://relay.example.org/'))).toBe('wss://relay.example.org')
    expect(walletConnectRelayUrl(page('wss://relay.example.org/v2//'))).toBe(
      'wss://relay.example.org/v2',
    )
  })

  test('error: http(s), credentials, garbage, an empty or missing tag: the public relay', () => {
    for (const bad of [
      'https://relay.example.org',
      'http://127.0.0.1:7070',
      'wss://user:secret@relay.example.org',
      'wss://user@relay.example.org',
      'javascript:alert(1)',
      'not a url',
      '',
    ]) {
      expect(walletConnectRelayUrl(page(bad))).toBe(DEFAULT_WALLETCONNECT_RELAY_URL)
    }
    expect(walletConnectRelayUrl(page(null))).toBe(DEFAULT_WALLETCONNECT_RELAY_URL)
    expect(walletConnectRelayUrl(null)).toBe(DEFAULT_WALLETCONNECT_RELAY_URL)
    expect(DEFAULT_WALLETCONNECT_RELAY_URL).toBe('wss://relay.walletconnect.org')
  })

  test('behavior: both settings with a project id, null without', () => {
    const doc = page('wss://relay.example.org')
    expect(walletConnectSettings({ walletConnectCloudProjectId: PROJECT_ID }, doc)).toEqual({
      projectId: PROJECT_ID,
      relayUrl: 'wss://relay.example.org',
    })
    expect(walletConnectSettings({ walletConnectCloudProjectId: '' }, doc)).toBeNull()
  })
})

describe('the pairing screen', () => {
  const QR_NAME = 'QR code to scan with your wallet app'
  /** What `qrcode` draws for `text` at the modal's level and size, as the SVG itself. */
  const expectedSvg = (text: string) =>
    qrSvg(text, {
      type: 'svg',
      errorCorrectionLevel: QR_ERROR_CORRECTION,
      width: QR_DEFAULT_SIZE,
      margin: 1,
    })
  const svgOf = (img: HTMLElement) => {
    const src = img.getAttribute('src') ?? ''
    expect(src.startsWith('data:image/svg+xml;charset=utf-8,')).toBe(true)
    return decodeURIComponent(src.slice(src.indexOf(',') + 1))
  }

  test('behavior: the QR code of the pairing URI, named for screen readers; a new URI replaces it; none without', async () => {
    render(<WalletConnectPairing />)
    expect(screen.queryByTestId('walletconnect-pairing')).toBeNull()
    act(() => pairing.setState({ uri: URI }))
    const qr = await screen.findByRole('img', { name: QR_NAME })
    expect(qr.getAttribute('data-uri')).toBe(URI)
    expect(qr.getAttribute('width')).toBe('160')
    expect(svgOf(qr)).toBe(await expectedSvg(URI))
    // Not a phone: no wallet app links.
    expect(screen.queryByTestId('walletconnect-apps')).toBeNull()

    const next = URI.replace('7f6e504b', '00000000')
    act(() => pairing.setState({ uri: next }))
    // The old code never stands for the new URI.
    for (const img of screen.queryAllByRole('img', { name: QR_NAME })) {
      expect(img.getAttribute('data-uri')).toBe(next)
    }
    await vi.waitFor(() =>
      expect(screen.getByRole('img', { name: QR_NAME }).getAttribute('data-uri')).toBe(next),
    )
    const second = svgOf(screen.getByRole('img', { name: QR_NAME }))
    expect(second).toBe(await expectedSvg(next))
    expect(second).not.toBe(await expectedSvg(URI))

    act(() => pairing.setState({ uri: null }))
    expect(screen.queryByTestId('walletconnect-pairing')).toBeNull()
  })

  test("behavior: on a phone, every wallet app's link carries the encoded pairing URI", async () => {
    vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue(IPHONE)
    pairing.setState({ uri: URI })
    render(<WalletConnectPairing />)
    const links = screen.getAllByRole('link')
    expect(links).toHaveLength(WALLET_APPS.length)
    const encoded = encodeURIComponent(URI)
    for (const link of links) {
      const href = link.getAttribute('href') ?? ''
      expect(href.startsWith('https://')).toBe(true)
      expect(href.endsWith(`/wc?uri=${encoded}`)).toBe(true)
      expect(link.getAttribute('target')).toBe('_blank')
      expect(link.getAttribute('rel')).toContain('noopener')
    }
    expect(screen.getByRole('link', { name: 'Rainbow' }).getAttribute('href')).toBe(
      `https://rnbwapp.com/wc?uri=${encoded}`,
    )
    expect(screen.getByRole('link', { name: 'MetaMask' }).getAttribute('href')).toBe(
      `https://metamask.app.link/wc?uri=${encoded}`,
    )
    // The QR code is there too (another device may scan it).
    expect((await screen.findByRole('img', { name: QR_NAME })).getAttribute('data-uri')).toBe(URI)
  })
})

describe('in the modal (the provider module stands in for the relay and the phone wallet)', () => {
  // The connector frame's own code, served over a port in this document: the modal reaches the
  // provider only through the frame's calls, as in the browser (frame-host.ts).
  let channel: MessageChannel
  beforeEach(() => {
    channel = new MessageChannel()
    serveConnectorFrame(channel.port2, DEFAULT_WALLETCONNECT_RELAY_URL)
    setConnectorFrame(Promise.resolve(frameOverPort(channel.port1, walletConnectPageStorage())))
  })
  afterEach(() => {
    setConnectorFrame(null)
    channel.port1.close()
    channel.port2.close()
  })
  const QR_NAME = 'QR code to scan with your wallet app'
  const NONCE = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6'
  const qrUri = async () =>
    (await screen.findByRole('img', { name: QR_NAME })).getAttribute('data-uri')
  const step = (id: string) => screen.queryByTestId(`screen-${id}`)?.dataset.step
  /** The proposal, once the provider put it on the relay. */
  const proposal = async () => {
    await until(() => wc.state.proposal !== null)
    const settle = wc.state.proposal
    if (!settle) throw new Error('no proposal')
    wc.state.proposal = null
    return settle
  }

  test('error: without a project id the option is disabled and says why; nothing loads', async () => {
    renderModal(api)
    act(() => {
      createModalMethods({
        serverConfig: async () => serverConfig(),
        restoredUser: async () => null,
      })
        .connectWallet()
        .catch(() => {})
    })
    const option = (await screen.findByTestId('walletconnect-option')) as HTMLButtonElement
    expect(option.disabled).toBe(true)
    const why = document.getElementById(option.getAttribute('aria-describedby') ?? '')
    expect(why?.textContent).toBe('WalletConnect is not configured for this app')
    fireEvent.click(option)
    expect(store.getState().screen).toBe('CONNECT_ONLY_LANDING_SCREEN')
    expect(wc.state.inits).toEqual([])
  })

  test('behavior: connect-only through WalletConnect: the QR code while it waits, then the wallet delivered as wallet_connect with its name', async () => {
    renderModal(api, { walletConnectCloudProjectId: PROJECT_ID })
    let result!: Promise<ConnectedWallet>
    act(() => {
      result = createModalMethods({
        serverConfig: async () => serverConfig(),
        restoredUser: async () => null,
      }).connectWallet()
    })
    result.catch(() => {})
    const option = (await screen.findByTestId('walletconnect-option')) as HTMLButtonElement
    expect(option.disabled).toBe(false)
    expect(screen.queryByTestId('walletconnect-off')).toBeNull()
    fireEvent.click(option)
    expect(store.getState().screen).toBe('AWAITING_CONNECT_ONLY_CONNECTION')
    expect(await qrUri()).toBe(`${wc.state.uri}&n=1`)
    // Built in the frame as providerOptions says, with the storage the modal keeps for it;
    // Verify never asked.
    expect(wc.state.inits).toHaveLength(1)
    expect(wc.state.inits[0]).toMatchObject({
      projectId: PROJECT_ID,
      relayUrl: DEFAULT_WALLETCONNECT_RELAY_URL,
      showQrModal: false,
      telemetryEnabled: false,
      metadata: { name: 'Acme', url: 'http://localhost:5173' },
    })
    const frameStorage = wc.state.inits[0]?.storage as {
      setItem(key: string, value: unknown): Promise<void>
    }
    await frameStorage.setItem('wc@2:probe', { a: 1 })
    expect(localStorage.getItem(`${WALLETCONNECT_STORAGE_PREFIX}wc@2:probe`)).toBe('{"a":1}')
    await expect(wc.state.providers[0]?.signer.client.core.verify.register()).resolves.toBe('')

    wc.state.approval.chainId = 137
    ;(await proposal()).approve()
    await until(() => step('AWAITING_CONNECT_ONLY_CONNECTION') === 'success')
    expect(screen.queryByRole('img', { name: QR_NAME })).toBeNull()
    expect(pairing.getState().uri).toBeNull()
    act(() => exitFlow(true))
    await expect(result).resolves.toEqual({
      address: account.address,
      connectorType: 'wallet_connect',
      walletClientType: 'rainbow',
      chainId: 137,
    })
  })

  test('behavior: the real loader: requests keep their params; params neither a list nor an object never reach the wallet', async () => {
    const seen: { method: string; params: unknown }[] = []
    wc.state.wallet = async (method, params) => {
      seen.push({ method, params })
      return method === 'eth_chainId' ? '0x1' : '0xsigned'
    }
    const connector = createWalletConnectConnector(SETTINGS, { metadata: async () => METADATA })
    const connection = connector.connect()
    ;(await proposal()).approve()
    expect(await connection).toEqual({ address: account.address, chainId: 1 })
    expect(connector.walletClientType).toBe('rainbow')
    expect(await connector.request('eth_chainId')).toBe('0x1')
    expect(await connector.request('personal_sign', ['0x6869', account.address])).toBe('0xsigned')
    expect(await latchCode(connector.request('personal_sign', 'x'))).toBe('rpc_invalid_params')
    expect(seen).toEqual([
      { method: 'eth_chainId', params: undefined },
      { method: 'personal_sign', params: ['0x6869', account.address] },
    ])
  })

  test('behavior: sign-in through WalletConnect: QR code, the phone signs the SIWE message of the host page, recorded as wallet_connect', async () => {
    api.on('POST /siwe/init', { body: { nonce: NONCE } })
    api.on('POST /siwe/authenticate', authAnswer(user(), true))
    wc.state.wallet = async (method, params) => {
      if (method !== 'personal_sign') throw { code: 4200, message: 'Unsupported' }
      const [message] = params as [Hex, Hex]
      return account.signMessage({ message: { raw: message } })
    }
    renderModal(api, { walletConnectCloudProjectId: PROJECT_ID })
    let result!: Promise<LoginResult>
    act(() => {
      result = login()
    })
    result.catch(() => {})
    fireEvent.click(await screen.findByTestId('walletconnect-option'))
    expect(await qrUri()).toBe(`${wc.state.uri}&n=1`)
    ;(await proposal()).approve()
    await expect(result).resolves.toMatchObject({ isNewUser: true })
    const body = api.calls('POST /siwe/authenticate')[0]?.body as Record<string, string>
    expect(body.connectorType).toBe('wallet_connect')
    expect(body.walletClientType).toBe('rainbow')
    const message = parseSiweMessage(body.message ?? '')
    expect(message.address).toBe(account.address)
    expect(message.domain).toBe('localhost:5173')
    expect(message.nonce).toBe(NONCE)
    expect(
      await verifyMessage({
        address: account.address,
        message: body.message ?? '',
        signature: body.signature as Hex,
      }),
    ).toBe(true)
  })

  test("error: a turned-down proposal reads 'You rejected the request'; Retry pairs again with a new QR code", async () => {
    renderModal(api, { walletConnectCloudProjectId: PROJECT_ID })
    act(() => {
      login().catch(() => {})
    })
    fireEvent.click(await screen.findByTestId('walletconnect-option'))
    expect(await qrUri()).toBe(`${wc.state.uri}&n=1`)
    ;(await proposal()).reject(new Error('User rejected.'))
    await until(() => step('AWAITING_CONNECTION') === 'failed')
    expect(screen.getByTestId('connection-title').textContent).toBe('You rejected the request')
    expect(screen.queryByRole('img', { name: QR_NAME })).toBeNull()
    fireEvent.click(screen.getByTestId('connection-retry'))
    expect(await qrUri()).toBe(`${wc.state.uri}&n=2`)
    // One provider for the page: the retry pairs through the same one.
    expect(wc.state.inits).toHaveLength(1)
    act(() => exitFlow(true))
  })
})
