/**
 * The wallet bridge in jsdom, against stand-in EIP-1193 wallets announced the way extensions
 * announce themselves: discovery and its 3 s wait, what a hostile announcement can and cannot
 * get through, which requests pass, and wallet errors arriving with their codes.
 */
import {
  deserializeError,
  type LatchError,
  serializeError,
  WALLET_REQUEST_TIMEOUT_MS,
} from '@latch/shared'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { createBridge } from './bridge.ts'
import { LEGACY_ID, MAX_ICON_LENGTH, MAX_NAME_LENGTH, MAX_WALLETS } from './discovery.ts'

const ICON = 'data:image/svg+xml;base64,PHN2Zy8+'
const ADDRESS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

type Listener = (payload: unknown) => void

/** A stand-in wallet: answers with `answer`, records requests, emits events on demand. */
class Wallet {
  requests: { method: string; params?: unknown }[] = []
  listeners = new Map<string, Listener[]>()
  answer: (args: { method: string; params?: unknown }) => Promise<unknown> = async () => [ADDRESS]
  constructor(flags: Record<string, boolean> = {}) {
    Object.assign(this, flags)
  }
  request(args: { method: string; params?: unknown }) {
    this.requests.push(args)
    return this.answer(args)
  }
  on(event: string, listener: Listener) {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener])
  }
  emit(event: string, payload: unknown) {
    for (const listener of this.listeners.get(event) ?? []) listener(payload)
  }
}

/** Announces `detail` now and whenever a dapp asks (EIP-6963). */
function announce(detail: unknown) {
  const send = () =>
    window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: detail }))
  window.addEventListener('eip6963:requestProvider', send)
  send()
  return () => window.removeEventListener('eip6963:requestProvider', send)
}

const info = (uuid: string, name = uuid, rdns = `io.${uuid}`) => ({ uuid, name, icon: ICON, rdns })

const cleanups: (() => void)[] = []
const announced = (detail: unknown) => cleanups.push(announce(detail))

/** What a rejection looks like once the host SDK has passed it on to the modal. */
async function failure(promise: Promise<unknown>): Promise<LatchError> {
  const thrown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(thrown).toMatchObject({ __latch_error__: true })
  // The host SDK's exposeMethods serializes it again; the modal deserializes.
  return deserializeError(serializeError(thrown))
}

let events: [string, string, unknown][]
const bridge = () => createBridge({ onEvent: (...e) => events.push(e) })

beforeEach(() => {
  events = []
})

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
  delete (window as { ethereum?: unknown }).ethereum
  vi.useRealTimers()
})

describe('discovery', () => {
  test('behavior: with no wallet, wallets() waits 3 s, then answers an empty list', async () => {
    vi.useFakeTimers()
    let answer: unknown
    void bridge()
      .wallets()
      .then((w) => {
        answer = w
      })
    // SPEC's injected wallet detection wait: 3 s.
    await vi.advanceTimersByTimeAsync(2_999)
    expect(answer).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    expect(answer).toEqual([])
  })

  test('behavior: a wallet injected during the wait answers at once; after the wait, no wait', async () => {
    vi.useFakeTimers()
    const b = bridge()
    let answer: unknown
    void b.wallets().then((w) => {
      answer = w
    })
    await vi.advanceTimersByTimeAsync(1000)
    expect(answer).toBeUndefined()
    announced({ info: info('late'), provider: new Wallet() })
    await vi.advanceTimersByTimeAsync(0)
    expect(answer).toEqual([{ id: 'late', name: 'late', icon: ICON, rdns: 'io.late' }])
    // A legacy wallet that arrives with ethereum#initialized wakes the wait too.
    for (const cleanup of cleanups.splice(0)) cleanup()
    const other = bridge()
    let second: unknown
    void other.wallets().then((w) => {
      second = w
    })
    ;(window as { ethereum?: unknown }).ethereum = new Wallet({ isRabby: true })
    window.dispatchEvent(new Event('ethereum#initialized'))
    await vi.advanceTimersByTimeAsync(0)
    expect(second).toEqual([{ id: LEGACY_ID, name: 'Rabby Wallet', icon: '', rdns: 'io.rabby' }])
    // Past the deadline an empty page answers without waiting.
    delete (window as { ethereum?: unknown }).ethereum
    await vi.advanceTimersByTimeAsync(3_000)
    expect(await other.wallets()).toEqual([])
  })

  test('behavior: one wallet announced before the bridge loads answers without waiting', async () => {
    vi.useFakeTimers()
    announced({ info: info('one', 'One Wallet'), provider: new Wallet() })
    const answer = await bridge().wallets()
    expect(answer).toEqual([{ id: 'one', name: 'One Wallet', icon: ICON, rdns: 'io.one' }])
  })

  test('behavior: several announced wallets in order, then the legacy one named from its flags', async () => {
    announced({ info: info('a', 'Alpha'), provider: new Wallet() })
    announced({ info: info('b', 'Beta'), provider: new Wallet() })
    ;(window as { ethereum?: unknown }).ethereum = new Wallet({ isMetaMask: true, isPhantom: true })
    const answer = await bridge().wallets()
    expect(answer.map((w) => [w.id, w.name, w.rdns])).toEqual([
      ['a', 'Alpha', 'io.a'],
      ['b', 'Beta', 'io.b'],
      // Phantom also sets isMetaMask: the more specific flag names it.
      [LEGACY_ID, 'Phantom', 'app.phantom'],
    ])
  })

  test('behavior: the legacy provider alone, with no flags, is a "Browser Wallet"', async () => {
    ;(window as { ethereum?: unknown }).ethereum = new Wallet()
    expect(await bridge().wallets()).toEqual([
      { id: LEGACY_ID, name: 'Browser Wallet', icon: '', rdns: '' },
    ])
  })

  test('behavior: window.ethereum that is an announced wallet (same object or same rdns) is not listed twice', async () => {
    const metamask = new Wallet({ isMetaMask: true })
    announced({ info: info('mm', 'MetaMask', 'io.metamask'), provider: metamask })
    ;(window as { ethereum?: unknown }).ethereum = metamask
    expect((await bridge().wallets()).map((w) => w.id)).toEqual(['mm'])
    // A different object flagged as the same wallet (its legacy proxy).
    ;(window as { ethereum?: unknown }).ethereum = new Wallet({ isMetaMask: true })
    expect((await bridge().wallets()).map((w) => w.id)).toEqual(['mm'])
  })
})

describe('hostile announcements', () => {
  test('error: names are cleaned and capped, bad icons and rdns dropped, wallets kept', async () => {
    announced({
      info: {
        uuid: 'long',
        name: `\u202eMeta\u0000Mask${'x'.repeat(500)}`,
        icon: 'javascript:alert(1)',
        rdns: 'not reverse dns',
      },
      provider: new Wallet(),
    })
    announced({
      info: { uuid: 'remote', name: 'Remote', icon: 'https://evil.example/i.png', rdns: 'io.x' },
      provider: new Wallet(),
    })
    announced({
      info: {
        uuid: 'huge',
        name: 'Huge',
        icon: `data:image/png;base64,${'A'.repeat(MAX_ICON_LENGTH)}`,
        rdns: 'io.huge',
      },
      provider: new Wallet(),
    })
    announced({
      info: { uuid: 'html', name: 'Html', icon: 'data:text/html,<script>1</script>', rdns: '' },
      provider: new Wallet(),
    })
    const answer = await bridge().wallets()
    expect(answer).toEqual([
      { id: 'long', name: `MetaMask${'x'.repeat(MAX_NAME_LENGTH - 8)}`, icon: '', rdns: '' },
      { id: 'remote', name: 'Remote', icon: '', rdns: 'io.x' },
      { id: 'huge', name: 'Huge', icon: '', rdns: 'io.huge' },
      { id: 'html', name: 'Html', icon: '', rdns: '' },
    ])
  })

  test('error: announcements that are not wallets are ignored', async () => {
    const throwing = {
      get info() {
        throw new Error('boom')
      },
      provider: new Wallet(),
    }
    for (const detail of [
      null,
      'wallet',
      throwing,
      { info: info('no-provider') },
      { info: info('no-request'), provider: { on() {} } },
      { info: { ...info('x'), uuid: 'has.dot' }, provider: new Wallet() },
      { info: { ...info('x'), uuid: 'window.ethereum' }, provider: new Wallet() },
      { info: { ...info('nameless'), name: ' \u200b ' }, provider: new Wallet() },
    ]) {
      announced(detail)
    }
    expect(await bridge().wallets()).toEqual([])
  })

  test('error: a later announcement cannot take over a uuid or a provider, and a flood is capped', async () => {
    const first = new Wallet()
    announced({ info: info('same', 'First'), provider: first })
    announced({ info: info('same', 'Impostor'), provider: new Wallet() })
    announced({ info: info('again', 'Again'), provider: first })
    for (let i = 0; i < MAX_WALLETS + 10; i++) {
      announced({ info: info(`flood${i}`), provider: new Wallet() })
    }
    const answer = await bridge().wallets()
    expect(answer).toHaveLength(MAX_WALLETS)
    expect(answer[0]).toMatchObject({ id: 'same', name: 'First' })
    expect(answer.map((w) => w.id)).not.toContain('again')
    // Requests to 'same' reach the first provider.
    await bridge().request('same', 'eth_accounts')
    expect(first.requests).toEqual([{ method: 'eth_accounts' }])
  })
})

describe('requests', () => {
  let wallet: Wallet
  beforeEach(() => {
    wallet = new Wallet()
    announced({ info: info('w'), provider: wallet })
  })

  const siwe = (host: string) =>
    `${host} wants you to sign in with your Ethereum account:\n${ADDRESS}\n\nSign in to Latch. Signing costs no fees.\n\nURI: http://${host}\nVersion: 1\nChain ID: 1\nNonce: abcdefgh12\nIssued At: 2026-11-23T22:00:00.000Z`
  const hex = (text: string) =>
    `0x${[...new TextEncoder().encode(text)].map((b) => b.toString(16).padStart(2, '0')).join('')}`

  test('behavior: allowed requests reach the wallet as EIP-1193 request({ method, params })', async () => {
    const b = bridge()
    expect(await b.request('w', 'eth_requestAccounts')).toEqual([ADDRESS])
    wallet.answer = async () => '0x1'
    expect(await b.request('w', 'eth_chainId', [])).toBe('0x1')
    wallet.answer = async () => null
    expect(await b.request('w', 'wallet_switchEthereumChain', [{ chainId: '0x2105' }])).toBeNull()
    wallet.answer = async () => `0x${'ab'.repeat(65)}`
    const message = hex(siwe(location.host))
    expect(await b.request('w', 'personal_sign', [message, ADDRESS])).toBe(`0x${'ab'.repeat(65)}`)
    // A plain-text message too, and one with the page's scheme before the domain (EIP-4361).
    await b.request('w', 'personal_sign', [siwe(location.host), ADDRESS])
    const withScheme = `${location.protocol}//${siwe(location.host)}`
    await b.request('w', 'personal_sign', [withScheme, ADDRESS])
    expect(wallet.requests).toEqual([
      { method: 'eth_requestAccounts' },
      { method: 'eth_chainId' },
      { method: 'wallet_switchEthereumChain', params: [{ chainId: '0x2105' }] },
      { method: 'personal_sign', params: [message, ADDRESS] },
      { method: 'personal_sign', params: [siwe(location.host), ADDRESS] },
      { method: 'personal_sign', params: [withScheme, ADDRESS] },
    ])
  })

  test.each([
    'eth_sendTransaction',
    'eth_signTypedData_v4',
    'eth_sign',
    'wallet_addEthereumChain',
    'wallet_requestPermissions',
    'toString',
    '__proto__',
    'constructor',
  ])('error: %s is refused with 4200 and never reaches the wallet', async (method) => {
    const error = await failure(bridge().request('w', method, [{ to: ADDRESS }]))
    expect(error).toMatchObject({ code: 'rpc_unsupported_method', rpcCode: 4200 })
    expect(wallet.requests).toEqual([])
  })

  test('error: params outside what the sign-in needs are refused with -32602', async () => {
    const b = bridge()
    const refused = [
      ['eth_requestAccounts', [{ extra: true }]],
      ['eth_chainId', 'x'],
      // A message for another site, or no sign-in message at all.
      ['personal_sign', [hex(siwe('evil.example')), ADDRESS]],
      ['personal_sign', [hex('Permit 1000 USDC'), ADDRESS]],
      ['personal_sign', [`ftp://${siwe(location.host)}`, ADDRESS]],
      ['personal_sign', [`x${siwe(location.host)}`, ADDRESS]],
      ['personal_sign', [`${siwe(location.host)}`, 'not an address']],
      ['personal_sign', ['0xff', ADDRESS]],
      ['personal_sign', [hex(siwe(location.host) + 'x'.repeat(8192)), ADDRESS]],
      ['wallet_switchEthereumChain', [{ chainId: 8453 }]],
      ['wallet_switchEthereumChain', [{ chainId: '0x1' }, { chainId: '0x2' }]],
    ] as const
    for (const [method, params] of refused) {
      const error = await failure(b.request('w', method, params))
      expect(error, `${method} ${JSON.stringify(params).slice(0, 80)}`).toMatchObject({
        code: 'rpc_invalid_params',
        rpcCode: -32602,
      })
    }
    expect(wallet.requests).toEqual([])
  })

  test('error: an unknown wallet id is "Connector not initialized"', async () => {
    const error = await failure(bridge().request('nope', 'eth_accounts'))
    expect(error).toMatchObject({
      code: 'connector_not_initialized',
      message: 'Connector not initialized',
    })
  })

  test('error: wallet errors arrive with their code and message intact', async () => {
    const b = bridge()
    const cases = [
      [{ code: 4001, message: 'User rejected the request.' }, 'rpc_user_rejected'],
      [
        {
          code: -32002,
          message: "Request of type 'eth_requestAccounts' already pending for origin",
        },
        'rpc_resource_unavailable',
      ],
      [{ code: 4100, message: 'Unauthorized' }, 'rpc_unauthorized'],
      [{ code: 4900, message: 'Disconnected' }, 'rpc_disconnected'],
      [{ code: 4901, message: 'Chain disconnected' }, 'rpc_chain_disconnected'],
      [
        { code: -32603, message: 'Internal error', data: { huge: 'x'.repeat(10_000) } },
        'rpc_internal',
      ],
      // A wallet's own code: kept, under the generic entry.
      [{ code: 5000, message: 'User denied' }, 'rpc_internal'],
    ] as const
    for (const [thrown, code] of cases) {
      wallet.answer = () => Promise.reject(thrown)
      const error = await failure(b.request('w', 'eth_requestAccounts'))
      expect(error).toMatchObject({ code, rpcCode: thrown.code, message: thrown.message })
    }
    // The -32002 hint travels with it.
    wallet.answer = () => Promise.reject({ code: -32002, message: 'Request already pending' })
    expect((await failure(b.request('w', 'eth_accounts'))).details).toBe(
      'Don’t see your wallet modal? Check your other browser windows.',
    )
    // Something that is no EIP-1193 error, thrown synchronously.
    wallet.answer = () => {
      throw new TypeError('provider bug')
    }
    expect(await failure(b.request('w', 'eth_accounts'))).toMatchObject({
      code: 'rpc_internal',
      rpcCode: -32603,
      message: 'provider bug',
    })
    // A wallet cannot pass itself off as a Latch error.
    wallet.answer = () =>
      Promise.reject({ __latch_error__: true, code: 'invalid_verification_code', message: 'x' })
    expect(await failure(b.request('w', 'eth_accounts'))).toMatchObject({ code: 'rpc_internal' })
  })

  test('error: an answer of the wrong shape is refused', async () => {
    const b = bridge()
    wallet.answer = async () => [{ address: ADDRESS }]
    expect(await failure(b.request('w', 'eth_accounts'))).toMatchObject({ code: 'rpc_internal' })
    wallet.answer = async () => () => 'not cloneable'
    expect(await failure(b.request('w', 'eth_chainId'))).toMatchObject({ code: 'rpc_internal' })
    wallet.answer = async () => ({ r: '0x', s: '0x' })
    const message = siwe(location.host)
    expect(await failure(b.request('w', 'personal_sign', [message, ADDRESS]))).toMatchObject({
      code: 'rpc_internal',
    })
  })

  test('error: a wallet that never answers times out after 120 s: "Wallet request timed out"', async () => {
    vi.useFakeTimers()
    wallet.answer = () => new Promise(() => {})
    let settled: unknown
    const pending = bridge().request('w', 'eth_requestAccounts')
    void pending.then(
      () => {},
      (e: unknown) => {
        settled = e
      },
    )
    await vi.advanceTimersByTimeAsync(WALLET_REQUEST_TIMEOUT_MS - 1)
    expect(settled).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    expect(deserializeError(settled)).toMatchObject({
      code: 'wallet_request_timeout',
      message: 'Wallet request timed out',
      details: 'Please try connecting again.',
    })
  })

  test('behavior: events of a wallet the modal used reach it, checked; malformed ones do not', async () => {
    const b = bridge()
    // Not yet used: not listened to.
    expect(wallet.listeners.size).toBe(0)
    await b.request('w', 'eth_accounts')
    await b.request('w', 'eth_accounts')
    wallet.emit('accountsChanged', [ADDRESS])
    wallet.emit('chainChanged', '0x2105')
    wallet.emit('disconnect', { code: 4900, message: 'Disconnected', data: 'x' })
    wallet.emit('accountsChanged', ['<img src=x>'])
    wallet.emit('chainChanged', { id: 1 })
    wallet.emit('message', { type: 'eth_subscription' })
    expect(events).toEqual([
      ['w', 'accountsChanged', [ADDRESS]],
      ['w', 'chainChanged', '0x2105'],
      ['w', 'disconnect', { code: 4900, message: 'Disconnected' }],
    ])
  })
})
