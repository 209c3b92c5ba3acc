/**
 * External wallets in the modal: the injected connector over the host's bridge, the
 * wallet section of the landing, AWAITING_CONNECTION's steps, retries, the error texts, the SIWE
 * message, linking, history. The extension wallet is the one double (it lives outside the
 * machine): an EIP-1193 wallet behind HostMethods.wallets/request, signing with a real key.
 * The API is the HTTP double; everything of the modal is real.
 */
import { createHash } from 'node:crypto'
import {
  ERRORS,
  type Hex,
  type HostMethods,
  type InjectedWalletInfo,
  LatchError,
  type LoginResult,
  SIWE_HASH_HEADER,
  SIWE_SECRET_HEADER,
  SIWE_STATEMENT,
  toLatchError,
  type User,
  WALLET_CONNECT_RETRIES,
  WALLET_REQUEST_TIMEOUT_MS,
  type WalletAccount,
} from '@latch/shared'
import { act, fireEvent, screen } from '@testing-library/react'
import { getAddress, hexToString, verifyMessage } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { parseSiweMessage } from 'viem/siwe'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest'
import { link } from '../flow/entries.ts'
import { exitFlow, login } from '../flow/flow.ts'
import { runtime } from '../runtime.ts'
import { store } from '../store.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { authAnswer, user } from '../test/fixtures.ts'
import { type Harness, recordingHost, renderModal } from '../test/harness.tsx'
import { FAKE_TIMERS, until } from '../test/until.ts'
// The in-app wallet's create-on-login rule, as methods.ts loads it in the modal.
import '../wallet/index.ts'
import { walletError } from './errors.ts'
import { dispatchWalletEvent } from './events.ts'
import { clearWalletConnections, HISTORY_LIMIT, walletConnections } from './history.ts'
import { createInjectedConnector, walletClientType, withTimeout } from './injected.ts'
import { SIWE_MESSAGE_LIFETIME_MS } from './siwe.ts'

// anvil's third funded key: a known test key.
const account = privateKeyToAccount(
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
)
const PAGE = 'http://localhost:5173/shop?x=1#latch-frag'
const NONCE = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6'
const ICON = 'data:image/svg+xml;base64,PHN2Zy8+'

type Behaviour = 'approve' | 'reject' | 'pending' | 'locked' | 'hang'

/** An extension wallet as the host page's bridge exposes it. */
function walletDouble(info: Partial<InjectedWalletInfo> = {}) {
  const behaviours = new Map<string, Behaviour>()
  const requests: { method: string; params: unknown }[] = []
  let chainId = '0x1'
  const wallet = {
    info: { id: 'uuid-metamask', name: 'MetaMask', icon: ICON, rdns: 'io.metamask', ...info },
    requests,
    behave(behaviour: Behaviour, method = '*') {
      behaviours.set(method, behaviour)
    },
    setChain(id: string) {
      chainId = id
    },
    async request(method: string, params: unknown): Promise<unknown> {
      requests.push({ method, params })
      const behaviour = behaviours.get(method) ?? behaviours.get('*') ?? 'approve'
      // Errors arrive as the bridge hands them over: LatchErrors with the wallet's code.
      if (behaviour === 'reject') throw toLatchError({ code: 4001, message: 'User rejected.' })
      if (behaviour === 'pending') {
        throw toLatchError({
          code: -32002,
          message: `Request of type '${method}' already pending for origin. Please wait.`,
        })
      }
      if (behaviour === 'locked') throw toLatchError({ code: -32002, message: 'Wallet is locked.' })
      if (behaviour === 'hang') return new Promise(() => {})
      if (method === 'eth_requestAccounts') return [account.address.toLowerCase()]
      if (method === 'eth_chainId') return chainId
      if (method === 'wallet_switchEthereumChain') {
        chainId = (params as [{ chainId: string }])[0].chainId
        return null
      }
      if (method === 'personal_sign') {
        const [message] = params as [Hex, Hex]
        return account.signMessage({ message: { raw: message } })
      }
      throw toLatchError({ code: 4200, message: 'Unsupported' })
    },
  }
  return wallet
}
type WalletDouble = ReturnType<typeof walletDouble>

/** The harness's recording host, with the bridge's wallet methods answered by `wallets`. */
function hostWith(harness: Harness, wallets: WalletDouble[] | (() => never)): HostMethods {
  const base = recordingHost(harness.hostCalls)
  return new Proxy(base, {
    get(target, name) {
      if (name === 'wallets') {
        return async () => {
          harness.hostCalls.push({ method: 'wallets', args: [] })
          return typeof wallets === 'function' ? wallets() : wallets.map((w) => w.info)
        }
      }
      if (name === 'pageUrl') return async () => PAGE
      if (name === 'request') {
        return (id: string, method: string, params: unknown) => {
          const wallet = Array.isArray(wallets) ? wallets.find((w) => w.info.id === id) : null
          if (!wallet) return Promise.reject(LatchError.of('rpc_disconnected'))
          return wallet.request(method, params)
        }
      }
      return Reflect.get(target, name)
    },
  })
}

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
beforeEach(() => {
  clearWalletConnections()
  api.on('POST /siwe/init', { body: { nonce: NONCE } })
})
afterEach(() => {
  api.requests.length = 0
})

const walletUser = (): User => ({
  id: 'did:latch:wallet1',
  createdAt: '2026-01-01T00:00:00.000Z',
  linkedAccounts: [
    {
      type: 'wallet',
      address: account.address,
      chainType: 'ethereum',
      chainId: 'eip155:1',
      walletClient: 'unknown',
      walletClientType: 'metamask',
      connectorType: 'injected',
      verifiedAt: '2026-01-01T00:00:00.000Z',
    } as unknown as WalletAccount,
  ],
})

interface Opened {
  harness: Harness
  wallet: WalletDouble
  result: Promise<LoginResult>
}

/** Renders the modal with one wallet in the host page and opens login. */
async function openWithWallet(
  server: Parameters<typeof renderModal>[1] = {},
  wallet = walletDouble(),
): Promise<Opened> {
  const harness = renderModal(api, server)
  runtime().host = hostWith(harness, [wallet])
  let result!: Promise<LoginResult>
  act(() => {
    result = login()
  })
  result.catch(() => {})
  await screen.findAllByTestId('wallet-option')
  return { harness, wallet, result }
}

const step = () => screen.getByTestId('screen-AWAITING_CONNECTION').getAttribute('data-step')
const title = () => screen.getByTestId('connection-title').textContent
const description = () => screen.queryByTestId('connection-description')?.textContent ?? null

async function untilStep(expected: string): Promise<void> {
  await until(() => screen.queryByTestId('screen-AWAITING_CONNECTION')?.dataset.step === expected)
}

function chooseWallet(): void {
  fireEvent.click(screen.getAllByTestId('wallet-option')[0] as HTMLElement)
}

describe('the wallet section', () => {
  test('behavior: lists the host page wallets with their names and data: icons; no other icon', async () => {
    const harness = renderModal(api)
    const other = walletDouble({ id: 'uuid-x', name: 'Evil', icon: 'https://evil.example/i.png' })
    runtime().host = hostWith(harness, [walletDouble(), other])
    act(() => {
      login().catch(() => {})
    })
    const options = await screen.findAllByTestId('wallet-option')
    expect(options.map((o) => o.textContent)).toEqual(['MetaMask', 'Evil'])
    const icons = [...document.querySelectorAll('[data-testid=wallet-option] img')]
    expect(icons.map((i) => [i.getAttribute('src'), i.getAttribute('alt')])).toEqual([[ICON, '']])
  })

  test('behavior: a wallet-only app shows the one section open, without a toggle, compact', async () => {
    const harness = renderModal(api, { emailAuth: false })
    runtime().host = hostWith(harness, [walletDouble()])
    act(() => {
      login().catch(() => {})
    })
    expect(screen.getByRole('heading', { level: 2 }).textContent).toBe('Connect Wallet')
    expect(screen.queryByTestId('section-wallet-toggle')).toBeNull()
    expect(screen.getByTestId('latch-modal').getAttribute('data-size')).toBe('compact')
    expect(await screen.findAllByTestId('wallet-option')).toHaveLength(1)
  })

  test('behavior: the host page is asked for its wallets only once the modal opens', async () => {
    const harness = renderModal(api)
    runtime().host = hostWith(harness, [walletDouble()])
    await act(() => new Promise((resolve) => setTimeout(resolve, 20)))
    expect(harness.hostCalls.some((c) => c.method === 'wallets')).toBe(false)
    expect(screen.queryByTestId('wallet-list')).toBeNull()
    act(() => {
      login().catch(() => {})
    })
    expect(await screen.findAllByTestId('wallet-option')).toHaveLength(1)
    expect(harness.hostCalls.filter((c) => c.method === 'wallets')).toHaveLength(1)
  })

  test('error: a host that cannot list wallets shows "Unable to connect to wallet."', async () => {
    const harness = renderModal(api)
    runtime().host = hostWith(harness, () => {
      throw new Error('bridge failed to load')
    })
    act(() => {
      login().catch(() => {})
    })
    expect((await screen.findByTestId('wallet-list-error')).textContent).toBe(
      'Unable to connect to wallet.',
    )
    expect(ERRORS.unable_to_build_connector.message).toBe('Unable to connect to wallet.')
  })

  test('behavior: no wallet in the page says so and offers the education screen', async () => {
    const harness = renderModal(api)
    runtime().host = hostWith(harness, [])
    act(() => {
      login().catch(() => {})
    })
    expect((await screen.findByTestId('wallet-list-empty')).textContent).toBe(
      'No wallet found in this browser.',
    )
    fireEvent.click(screen.getByTestId('wallet-education-link'))
    await screen.findByTestId('screen-WALLET_EDUCATION')
  })
})

describe('sign-in with a wallet', () => {
  test('behavior: the steps: waiting for the wallet, then sign to verify (nonce asked without a token)', async () => {
    const { wallet } = await openWithWallet()
    wallet.behave('hang', 'eth_requestAccounts')
    chooseWallet()
    await untilStep('waiting')
    expect(title()).toBe('Waiting for MetaMask')
    expect(screen.getByTestId('screen-AWAITING_CONNECTION').dataset.status).toBe('connecting')
    expect(screen.getByTestId('latch-modal').getAttribute('data-size')).toBe('compact')
    act(() => exitFlow(false))

    wallet.behave('approve', 'eth_requestAccounts')
    wallet.behave('hang', 'personal_sign')
    act(() => {
      login().catch(() => {})
    })
    await screen.findAllByTestId('wallet-option')
    chooseWallet()
    await untilStep('signing')
    expect(title()).toBe('Sign to verify')
    expect(screen.getByTestId('screen-AWAITING_CONNECTION').dataset.status).toBe('connected')
    const init = api.calls('POST /siwe/init')
    expect(init.at(-1)?.body).toEqual({ address: account.address })
    expect(init.at(-1)?.headers.authorization).toBeUndefined()
  })

  test('behavior: Success!, the SIWE message for the host page, close after 1400 ms', async () => {
    const who = walletUser()
    api.on('POST /siwe/authenticate', authAnswer(who, true))
    const { harness, wallet, result: signIn } = await openWithWallet()
    vi.useFakeTimers(FAKE_TIMERS)
    const before = Date.now()
    chooseWallet()
    await untilStep('success')
    expect(title()).toBe('Success!')
    expect(description()).toBe('You’re good to go!')

    const body = api.calls('POST /siwe/authenticate')[0]?.body as Record<string, string>
    expect(body).toMatchObject({
      chainId: '1',
      walletClientType: 'metamask',
      connectorType: 'injected',
    })
    const message = parseSiweMessage(body.message as string)
    expect(message).toMatchObject({
      domain: 'localhost:5173',
      address: account.address,
      statement: SIWE_STATEMENT,
      uri: 'http://localhost:5173/shop?x=1',
      version: '1',
      chainId: 1,
      nonce: NONCE,
    })
    const issuedAt = message.issuedAt?.getTime() ?? 0
    expect(issuedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
    expect(message.expirationTime?.getTime()).toBe(issuedAt + SIWE_MESSAGE_LIFETIME_MS)
    expect(
      await verifyMessage({
        address: account.address,
        message: body.message as string,
        signature: body.signature as Hex,
      }),
    ).toBe(true)
    // What the wallet was asked to sign is that very text.
    const signed = wallet.requests.filter((r) => r.method === 'personal_sign')
    expect(signed.map((r) => hexToString((r.params as [Hex])[0]))).toEqual([body.message])
    // The nonce is bound to this modal: init sent a hash, authenticate the secret behind it.
    const hash = api.calls('POST /siwe/init').at(-1)?.headers[SIWE_HASH_HEADER]
    const secret = api.calls('POST /siwe/authenticate')[0]?.headers[SIWE_SECRET_HEADER]
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(createHash('sha256').update(String(secret)).digest('base64url')).toBe(hash)

    act(() => {
      vi.advanceTimersByTime(1399)
    })
    expect(store.getState().open).toBe(true)
    act(() => {
      vi.advanceTimersByTime(1)
    })
    expect(store.getState().open).toBe(false)
    await expect(signIn).resolves.toEqual({ user: who, isNewUser: true })
    const connection = { address: account.address, connectorType: 'injected' }
    expect(harness.emitted('wallet_connected')).toMatchObject([connection])
    expect(walletConnections()).toMatchObject([{ ...connection, walletClientType: 'metamask' }])
  })

  test('behavior: a wallet on an unsupported chain is asked to switch to the default chain', async () => {
    api.on('POST /siwe/authenticate', authAnswer(walletUser(), false))
    const { wallet } = await openWithWallet()
    wallet.setChain('0x7a69')
    chooseWallet()
    await untilStep('success')
    expect(wallet.requests.map((r) => r.method)).toContain('wallet_switchEthereumChain')
    const body = api.calls('POST /siwe/authenticate')[0]?.body as Record<string, string>
    expect(parseSiweMessage(body.message as string).chainId).toBe(1)
  })

  test('behavior: the wallet counts for create on login: users-without-wallets closes after 1400 ms', async () => {
    api.on('POST /siwe/authenticate', authAnswer(walletUser(), true))
    await openWithWallet({
      embeddedWalletConfig: {
        createOnLogin: 'users-without-wallets',
        requireUserPasswordOnCreate: false,
      },
    })
    vi.useFakeTimers(FAKE_TIMERS)
    chooseWallet()
    await untilStep('success')
    act(() => {
      vi.advanceTimersByTime(1400)
    })
    expect(store.getState().open).toBe(false)
    expect(screen.queryByTestId('screen-EMBEDDED_WALLET_SCREEN')).toBeNull()
  })
})

test('behavior: an app creating in-app wallets for all users moves on after 500 ms, not 1400', async () => {
  api.on('POST /siwe/authenticate', authAnswer(walletUser(), true))
  await openWithWallet({
    embeddedWalletConfig: { createOnLogin: 'all-users', requireUserPasswordOnCreate: false },
  })
  vi.useFakeTimers(FAKE_TIMERS)
  chooseWallet()
  await untilStep('success')
  act(() => {
    vi.advanceTimersByTime(499)
  })
  expect(store.getState().screen).toBe('AWAITING_CONNECTION')
  act(() => {
    vi.advanceTimersByTime(1)
  })
  expect(store.getState().screen).toBe('EMBEDDED_WALLET_SCREEN')
  expect(store.getState().open).toBe(true)
})

describe('failures and retries', () => {
  test('behavior: a rejected connection, then Retry, signs in', async () => {
    api.on('POST /siwe/authenticate', authAnswer(walletUser(), false))
    const { wallet, result } = await openWithWallet()
    wallet.behave('reject', 'eth_requestAccounts')
    chooseWallet()
    await untilStep('failed')
    expect(title()).toBe('You rejected the request')
    expect(screen.getByTestId('screen-AWAITING_CONNECTION').dataset.status).toBe('disconnected')
    wallet.behave('approve', 'eth_requestAccounts')
    fireEvent.click(screen.getByTestId('connection-retry'))
    await untilStep('success')
    expect(store.getState().externalWallet?.retries).toBe(1)
    act(() => exitFlow(false))
    await expect(result).resolves.toMatchObject({ isNewUser: false })
  })

  test('behavior: a rejected signature reads "Signature rejected" / "Please try signing again."', async () => {
    const { wallet } = await openWithWallet()
    wallet.behave('reject', 'personal_sign')
    chooseWallet()
    await untilStep('failed')
    expect(title()).toBe('Signature rejected')
    expect(description()).toBe('Please try signing again.')
    expect(screen.getByTestId('connection-retry')).toBeTruthy()
  })

  test(`behavior: after ${WALLET_CONNECT_RETRIES} failed retries, "Unable to connect wallet" and no Retry`, async () => {
    const { wallet } = await openWithWallet()
    wallet.behave('reject')
    chooseWallet()
    for (let retry = 1; retry <= WALLET_CONNECT_RETRIES; retry++) {
      await untilStep('failed')
      expect(title()).toBe('You rejected the request')
      fireEvent.click(screen.getByTestId('connection-retry'))
      await until(() => wallet.requests.length === retry + 1)
    }
    await untilStep('failed')
    expect(title()).toBe('Unable to connect wallet')
    expect(description()).toBe('You rejected the request')
    expect(screen.queryByTestId('connection-retry')).toBeNull()
    expect(wallet.requests.map((r) => r.method)).toEqual(Array(3).fill('eth_requestAccounts'))
  })

  test.each([
    ['pending', 'eth_requestAccounts', 'Connection request already pending'],
    ['locked', 'eth_requestAccounts', 'Wallet is locked'],
    ['pending', 'personal_sign', 'Request already pending'],
  ] as const)('param: -32002 (%s on %s) reads "%s" with the hint', async (how, method, text) => {
    const { wallet } = await openWithWallet()
    wallet.behave(how, method)
    chooseWallet()
    await untilStep('failed')
    expect([title(), description()]).toEqual([
      text,
      'Don’t see your wallet modal? Check your other browser windows.',
    ])
    expect(screen.getByTestId('connection-retry')).toBeTruthy()
  })

  test(`behavior: a wallet that never answers times out after ${WALLET_REQUEST_TIMEOUT_MS} ms`, async () => {
    expect(WALLET_REQUEST_TIMEOUT_MS).toBe(120_000)
    const { wallet } = await openWithWallet()
    wallet.behave('hang', 'eth_requestAccounts')
    vi.useFakeTimers(FAKE_TIMERS)
    chooseWallet()
    await untilStep('waiting')
    await act(async () => {
      vi.advanceTimersByTime(WALLET_REQUEST_TIMEOUT_MS - 1)
    })
    expect(step()).toBe('waiting')
    await act(async () => {
      vi.advanceTimersByTime(1)
    })
    await untilStep('failed')
    expect([title(), description()]).toEqual([
      'Wallet request timed out',
      'Please try connecting again.',
    ])
    expect(screen.getByTestId('connection-retry')).toBeTruthy()
  })

  test('error: an address another user holds: "User already exists for this address", no Retry', async () => {
    // As the server answers it: the message, no details.
    api.on(
      'POST /siwe/authenticate',
      apiError(400, 'linked_to_another_user', 'User already exists for this address'),
    )
    const { result } = await openWithWallet()
    chooseWallet()
    await untilStep('failed')
    expect([title(), description()]).toEqual([
      'User already exists for this address',
      'Try another address!',
    ])
    expect(screen.queryByTestId('connection-retry')).toBeNull()
    act(() => exitFlow(false))
    await expect(result).rejects.toMatchObject({ code: 'login_exited' })
  })

  test('error: a refused message reads "Could not log in with wallet" with Retry', async () => {
    api.on(
      'POST /siwe/authenticate',
      apiError(401, 'wallet_login_failed', 'Could not log in with wallet'),
    )
    await openWithWallet()
    chooseWallet()
    await untilStep('failed')
    expect(title()).toBe('Could not log in with wallet')
    expect(screen.getByTestId('connection-retry')).toBeTruthy()
  })

  test('behavior: an address off the allowlist goes to the allowlist screen', async () => {
    api.on('POST /siwe/init', apiError(403, 'allowlist_rejected', 'x'))
    await openWithWallet()
    chooseWallet()
    await screen.findByTestId('screen-ALLOWLIST_REJECTION_SCREEN')
    expect(api.calls('POST /siwe/authenticate')).toHaveLength(0)
  })

  test('behavior: leaving the screen abandons the attempt: a late signature signs nobody in', async () => {
    const { wallet } = await openWithWallet()
    let sign!: () => void
    const original = wallet.request.bind(wallet)
    wallet.request = async (method, params) => {
      if (method !== 'personal_sign') return original(method, params)
      await new Promise<void>((resolve) => {
        sign = resolve
      })
      return original(method, params)
    }
    chooseWallet()
    await untilStep('signing')
    fireEvent.click(screen.getByTestId('back-button'))
    expect(store.getState().screen).toBe('LANDING')
    sign()
    await new Promise((r) => setTimeout(r, 50))
    expect(api.calls('POST /siwe/authenticate')).toHaveLength(0)
  })
})

describe('the error texts (errors.ts)', () => {
  const cases: [number, string, string, boolean][] = [
    [4001, 'connect', 'You rejected the request', true],
    [4001, 'sign', 'Signature rejected', true],
    [4100, 'sign', ERRORS.rpc_unauthorized.message, true],
    [4200, 'sign', ERRORS.rpc_unsupported_method.message, false],
    [4900, 'sign', 'Disconnected', true],
    [4901, 'sign', ERRORS.rpc_chain_disconnected.message, true],
    [-32700, 'sign', 'Invalid JSON', false],
    [-32600, 'sign', 'JSON is not a valid request object', false],
    [-32601, 'sign', 'Method does not exist', false],
    [-32602, 'sign', 'Invalid method parameters', false],
    [-32603, 'sign', 'Internal JSON-RPC error', true],
    [-32000, 'sign', 'Missing or invalid parameters', false],
    [-32001, 'sign', 'Requested resource not found', true],
    [-32003, 'sign', 'Transaction creation failed', false],
    [-32004, 'sign', 'Method is not implemented', false],
    [-32005, 'sign', 'Request exceeds defined limit', true],
    [-32006, 'sign', 'Version of JSON-RPC protocol is not supported', false],
  ]
  test.each(cases)(
    'param: code %i at %s reads %s (retryable %s)',
    (code, stage, message, retry) => {
      // The wallet's own text is never shown; a raw EIP-1193 error and the bridge's agree.
      for (const e of [{ code, message: 'whatever the wallet says' }, toLatchError({ code })]) {
        const error = walletError(e, stage as 'connect' | 'sign')
        expect([error.message, error.retryable]).toEqual([message, retry])
      }
    },
  )

  test('behavior: our own and the API errors pass as they are', () => {
    for (const code of [
      'wallet_request_timeout',
      'wallet_not_connected',
      'wallet_not_currently_connected',
      'connector_not_initialized',
      'wallet_login_failed',
    ] as const) {
      expect(walletError(LatchError.of(code), 'sign').code).toBe(code)
    }
    expect(walletError(new Error('boom'), 'sign').message).toBe('Could not log in with wallet')
  })
})

describe('the injected connector', () => {
  function connectorWith(wallet: WalletDouble, timeoutMs?: number) {
    return createInjectedConnector(wallet.info, {
      host: () =>
        ({ request: (_id: string, m: string, p: unknown) => wallet.request(m, p) }) as HostMethods,
      timeoutMs,
    })
  }

  test('error: a request before connect() is "Connector not initialized"', async () => {
    const connector = connectorWith(walletDouble())
    expect(connector.status).toBe('disconnected')
    await expect(connector.request('eth_chainId')).rejects.toMatchObject({
      message: 'Connector not initialized',
    })
  })

  test('behavior: connect answers the EIP-55 address and chain; disconnected, then connecting, then connected', async () => {
    const wallet = walletDouble()
    const connector = connectorWith(wallet)
    const connecting = connector.connect()
    expect(connector.status).toBe('connecting')
    expect(await connecting).toEqual({ address: getAddress(account.address), chainId: 1 })
    expect(connector.status).toBe('connected')
  })

  test('behavior: a disconnect ends a pending request with "Disconnected"; then "Wallet is not connected"', async () => {
    const wallet = walletDouble({ id: 'uuid-disconnect' })
    const connector = connectorWith(wallet)
    await connector.connect()
    wallet.behave('hang', 'personal_sign')
    const pending = connector.request('personal_sign', ['0x00', account.address])
    dispatchWalletEvent('uuid-disconnect', 'disconnect', { code: 4900, message: 'gone' })
    await expect(pending).rejects.toMatchObject({ message: 'Disconnected', rpcCode: 4900 })
    expect(connector.status).toBe('disconnected')
    await expect(connector.request('eth_chainId')).rejects.toMatchObject({
      message: 'Wallet is not connected',
    })
  })

  test('behavior: switching to another account mid-request is "Wallet is not currently connected."', async () => {
    const wallet = walletDouble({ id: 'uuid-switch' })
    const connector = connectorWith(wallet)
    await connector.connect()
    wallet.behave('hang', 'personal_sign')
    const events: unknown[] = []
    connector.on('accountsChanged', (p) => events.push(p))
    const pending = connector.request('personal_sign', ['0x00', account.address])
    const other = `0x${'ab'.repeat(20)}`
    dispatchWalletEvent('uuid-switch', 'accountsChanged', [other])
    await expect(pending).rejects.toMatchObject({ message: 'Wallet is not currently connected.' })
    expect(events).toEqual([[other]])
  })

  test('behavior: withTimeout rejects at the deadline only (fake clock)', async () => {
    vi.useFakeTimers(FAKE_TIMERS)
    let settled: unknown = null
    const late = withTimeout(new Promise(() => {}), 1000).catch((e: unknown) => {
      settled = e
    })
    await vi.advanceTimersByTimeAsync(999)
    expect(settled).toBeNull()
    await vi.advanceTimersByTimeAsync(1)
    await late
    expect(settled).toMatchObject({ code: 'wallet_request_timeout' })
  })

  test('param: wallet client types from rdns, else the name; never "latch"', () => {
    expect(walletClientType({ rdns: 'io.metamask', name: 'x' })).toBe('metamask')
    expect(walletClientType({ rdns: 'com.coinbase.wallet', name: 'x' })).toBe('coinbase_wallet')
    expect(walletClientType({ rdns: '', name: 'My Wallet!' })).toBe('my_wallet')
    expect(walletClientType({ rdns: '', name: 'Latch' })).toBe('unknown')
    expect(walletClientType({ rdns: '', name: '' })).toBe('unknown')
  })
})

describe('linking a wallet', () => {
  test('behavior: link(wallet) → "Connect your wallet" → /siwe/link with the token → the updated user', async () => {
    const signedIn = user()
    const updated: User = {
      ...signedIn,
      linkedAccounts: [...signedIn.linkedAccounts, ...walletUser().linkedAccounts],
    }
    api.on('POST /siwe/link', { body: updated })
    const harness = renderModal(api)
    runtime().host = hostWith(harness, [walletDouble()])
    harness.session.start({ token: authAnswer(signedIn, false).body.token }, signedIn)
    let linked!: Promise<User>
    act(() => {
      linked = link('wallet')
    })
    await screen.findByTestId('screen-LINK_WALLET_SCREEN')
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Connect your wallet')
    expect(screen.getByTestId('link-description').textContent).toBe(
      'Add a wallet to your Acme account',
    )
    expect(screen.getByTestId('latch-modal').getAttribute('data-size')).toBe('medium')
    fireEvent.click((await screen.findAllByTestId('wallet-option'))[0] as HTMLElement)
    await untilStep('success')
    expect(api.calls('POST /siwe/init')[0]?.headers.authorization).toMatch(/^Bearer /)
    expect(api.calls('POST /siwe/link')[0]?.body).toMatchObject({ connectorType: 'injected' })
    act(() => exitFlow(false))
    await expect(linked).resolves.toEqual(updated)
  })

  test('behavior: with a wallet connected before, "Reconnect your wallet" and the hint', async () => {
    api.on('POST /siwe/authenticate', authAnswer(walletUser(), false))
    await openWithWallet()
    chooseWallet()
    await untilStep('success')
    act(() => exitFlow(false))
    act(() => store.setState({ user: user() }))
    act(() => {
      link('wallet').catch(() => {})
    })
    await screen.findByTestId('screen-LINK_WALLET_SCREEN')
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Reconnect your wallet')
    const short = `${account.address.slice(0, 6)}…${account.address.slice(-4)}`
    expect(screen.getByTestId('link-wallet-hint').textContent).toBe(`Last connected: ${short}`)
  })
})

describe('connection history', () => {
  const entry = (i: number) => ({
    address: `0x${i.toString(16).padStart(40, '0')}` as Hex,
    connectorType: 'injected',
    walletClientType: 'metamask',
    connectedAt: new Date(i * 1000).toISOString(),
  })

  test('behavior: kept in sessionStorage, latest first, capped, one entry per address', async () => {
    const { recordWalletConnection } = await import('./history.ts')
    const harness = renderModal(api)
    for (let i = 1; i <= HISTORY_LIMIT + 2; i++) recordWalletConnection(entry(i))
    recordWalletConnection(entry(5))
    const list = walletConnections()
    expect(list).toHaveLength(HISTORY_LIMIT)
    expect(list[0]).toEqual(entry(5))
    expect(list.filter((c) => c.address === entry(5).address)).toHaveLength(1)
    expect(JSON.parse(sessionStorage.getItem('latch:wallet-connections') ?? '[]')).toEqual(list)
    expect(harness.emitted('wallet_connected').at(-1)).toEqual(entry(5))
  })

  test('behavior: where storage is refused, memory keeps it', async () => {
    const { recordWalletConnection } = await import('./history.ts')
    renderModal(api)
    const spy = vi.spyOn(window, 'sessionStorage', 'get').mockImplementation(() => {
      throw new DOMException('denied', 'SecurityError')
    })
    try {
      recordWalletConnection(entry(7))
      expect(walletConnections()).toEqual([entry(7)])
    } finally {
      spy.mockRestore()
    }
  })
})
