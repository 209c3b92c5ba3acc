/**
 * Every wallet call against a failing API: the visitor sees a retry text and the host hears the
 * failure's code when the visitor then closes: never a rejection or an exit the visitor did not
 * choose. A refused wallet credential (401 wallet_sign_in_required), which no retry brings back,
 * rejects the host's call at once and shows, in place of the screen, what the visitor can do. The failures are made by the wallet frame's own API client (wallet-frame's fetchApi)
 * against the HTTP double answering 401 wallet_sign_in_required or 500, or against a closed port;
 * the frame itself is test/wallet-frame-double.ts, everything of the modal is real.
 */
import {
  exposeMethods,
  type Hex,
  LatchError,
  remoteMethods,
  type User,
  type WalletMethods,
  type WalletRpcParams,
} from '@latch/shared'
import { fetchApi } from '@latch/wallet-frame'
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { exitFlow } from '../flow/flow.ts'
import { createModalMethods } from '../startup/methods.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { jwt, serverConfig, user } from '../test/fixtures.ts'
import { renderModal } from '../test/harness.tsx'
import { walletAccount, walletFrameDouble } from '../test/wallet-frame-double.ts'
import { provideWalletFrame } from './frame.ts'
import { signFlow } from './index.ts'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  cleanup()
  vi.restoreAllMocks()
  provideWalletFrame(null)
  api.requests.length = 0
})

const ADDRESS = `0x${'12'.repeat(20)}` as Hex
const SIGN_IN_AGAIN = 'Sign in again on this device to use your wallet.'
const RETRY = 'An error has occurred, please try again.'
/** What a caller hears when the visitor declines or leaves: never for a failure. */
const DECLINED = [
  'signature_rejected',
  'transaction_exited',
  'create_exited',
  'recovery_exited',
  'export_exited',
]

interface Way {
  name: string
  /** The code the host hears. */
  code: string
  /** The text on screen. */
  text: string
  fail(): Promise<LatchError>
}

/** One failing call of the frame's API client, as the frame would make it. */
async function frameApiFailure(base: string): Promise<LatchError> {
  const call = fetchApi(base, 'app_test', fetch, 2000)
  return call('/embedded_wallets/connect', {}, 'token').then(
    () => {
      throw new Error('the API answered')
    },
    (e: LatchError) => e,
  )
}

const WAYS: Way[] = [
  {
    name: '401 wallet_sign_in_required (the credential no longer verifies)',
    code: 'wallet_sign_in_required',
    text: SIGN_IN_AGAIN,
    fail: () => {
      api.on(
        'POST /embedded_wallets/connect',
        apiError(401, 'wallet_sign_in_required', SIGN_IN_AGAIN),
      )
      return frameApiFailure(api.url)
    },
  },
  {
    name: '500',
    code: 'internal_error',
    text: RETRY,
    fail: () => {
      api.on('POST /embedded_wallets/connect', apiError(500, 'internal_error', 'Internal error'))
      return frameApiFailure(api.url)
    },
  },
  {
    name: 'network down',
    code: 'embedded_wallet_error',
    text: RETRY,
    // Port 9 (discard) on the loopback: nothing listens, the connection is refused.
    fail: () => frameApiFailure('http://127.0.0.1:9'),
  },
]

const methods = () =>
  createModalMethods({
    serverConfig: () => Promise.resolve(serverConfig()),
    restoredUser: () => Promise.resolve(null),
  })

const SIGNATURE = `0x${'ab'.repeat(65)}`

/**
 * The frame double with the user's wallet (on this device unless `onDevice` is false); `rpc`
 * answers the frame's rpc (a failure throws).
 */
function frame(
  options: {
    recovery?: 'latch' | 'user-passcode'
    onDevice?: boolean
    wallet?: boolean
    rpc?: (request: WalletRpcParams['request']) => unknown
    fail?: [keyof WalletMethods, LatchError]
  } = {},
): void {
  const double = walletFrameDouble({
    wallet: options.wallet === false ? null : walletAccount(ADDRESS, options.recovery ?? 'latch'),
    passcode: 'Ab3dE9',
  })
  if (options.onDevice !== false) double.device.add(ADDRESS)
  if (options.fail) double.failNext(...options.fail)
  const base = double.frame
  const rpc = options.rpc
  const wallet: WalletMethods = {
    'latch:wallet:create': (p) => base['latch:wallet:create'](p),
    'latch:wallet:connect': (p) => base['latch:wallet:connect'](p),
    'latch:wallet:recover': (p) => base['latch:wallet:recover'](p),
    'latch:wallet:confirm-fork': (p) => base['latch:wallet:confirm-fork'](p),
    'latch:wallet:add-passkey': (p) => base['latch:wallet:add-passkey'](p),
    'latch:wallet:passkey-options': (p) => base['latch:wallet:passkey-options'](p),
    'latch:wallet:approval': (p) => base['latch:wallet:approval'](p),
    'latch:wallet:dismiss-approval': () => base['latch:wallet:dismiss-approval'](),
    async 'latch:wallet:rpc'(p) {
      if (rpc) return { response: await rpc(p.request) }
      return base['latch:wallet:rpc'](p)
    },
  }
  // Through the shared serialization, as penpal carries the frame's answers and errors.
  provideWalletFrame(remoteMethods<WalletMethods>(exposeMethods(wallet)))
}

function signedIn(withWallet = true, recovery: 'latch' | 'user-passcode' = 'latch'): void {
  const base = user()
  const account = walletAccount(ADDRESS, recovery)
  const signed: User = withWallet
    ? { ...base, linkedAccounts: [...base.linkedAccounts, account], wallet: account }
    : base
  const harness = renderModal(api, {
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: false },
  })
  act(() => {
    harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, signed)
  })
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: { code?: string }) => e.code,
  )

/** Closes the modal as the visitor does (the close button's exit). */
const close = () => act(() => exitFlow(true))

/**
 * How the failure reaches the visitor and the caller: `onScreen` checks the screen's own text,
 * then the visitor closes and the caller hears the code. A refused credential instead shows the
 * view saying what to do, and the caller has heard before anyone closes.
 */
async function heard(way: Way, settled: Promise<unknown>, onScreen: () => Promise<void>) {
  if (way.code === 'wallet_sign_in_required') {
    await screen.findByTestId('screen-wallet-refused')
    expect(await settled).toBe(way.code)
    close()
    return
  }
  await onScreen()
  close()
  const code = await settled
  expect(code).toBe(way.code)
  expect(DECLINED).not.toContain(code)
}

async function armed(name: string): Promise<HTMLButtonElement> {
  const button = (await screen.findByRole('button', { name })) as HTMLButtonElement
  await waitFor(() => expect(button.dataset.armed).toBe('true'), { timeout: 2000 })
  return button
}

// The first screens of a run load their chunks: more than the default 5 s on a busy machine.
describe.each(WAYS)('the API failing: $name', { timeout: 20_000 }, (way) => {
  test('sign (a message): the screen names the failure (or the refused view says what to do); closing is not a rejection', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const failure = await way.fail()
    frame({
      rpc: () => {
        throw failure
      },
    })
    signedIn()
    const signed = outcome(methods().signMessage('Hello'))
    fireEvent.click(await armed('Sign and continue'))
    await heard(way, signed, async () => {
      expect((await screen.findByTestId('sign-error')).textContent).toBe(way.text)
    })
  })

  test('sign (typed data): the same', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const failure = await way.fail()
    frame({
      rpc: (request) => {
        if (request.method === 'eth_signTypedData_v4') throw failure
        return SIGNATURE
      },
    })
    signedIn()
    const signed = outcome(
      signFlow({ kind: 'typedData', typedData: { types: {}, primaryType: 'X', message: {} } }),
    )
    fireEvent.click(await armed('Sign and continue'))
    await heard(way, signed, async () => {
      expect((await screen.findByTestId('sign-error')).textContent).toBe(way.text)
    })
  })

  test('sign behind the connecting gate (a wallet this page has not used): the gate names the failure; closing is not a rejection', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    frame({ fail: ['latch:wallet:connect', await way.fail()] })
    signedIn()
    const signed = outcome(methods().signMessage('Hello'))
    await heard(way, signed, async () => {
      expect((await screen.findByTestId('connecting-error')).textContent).toBe(RETRY)
    })
  })

  test('send: a failed preparation and a failed submit keep their codes', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    api.on('GET /token_price?chainId=1', apiError(503, 'price_unavailable', 'No price'))
    api.on('POST /chains/1/rpc', (body) => ({
      body: { jsonrpc: '2.0', id: (body as { id: number }).id, result: '0xde0b6b3a7640000' },
    }))
    const failure = await way.fail()
    frame({
      rpc: () => {
        throw failure
      },
    })
    signedIn()
    const sent = outcome(methods().sendTransaction({ to: ADDRESS, value: 1n, chainId: 1 }))
    await heard(way, sent, async () => {
      await screen.findByTestId('transaction-error')
    })

    cleanup()
    const submitFailure = await way.fail()
    frame({
      rpc: ({ method, params }) => {
        if (method === 'eth_signTransaction') throw submitFailure
        const request = (params as Record<string, unknown>[])[0]
        return {
          ...request,
          from: ADDRESS,
          value: '0x1',
          nonce: 0,
          gasLimit: '0x5208',
          type: 2,
          maxFeePerGas: '0x1',
          maxPriorityFeePerGas: '0x1',
        }
      },
    })
    signedIn()
    const again = outcome(methods().sendTransaction({ to: ADDRESS, value: 1n, chainId: 1 }))
    fireEvent.click(await armed('Send ETH'))
    await heard(way, again, async () => {
      await screen.findByTestId('transaction-error')
    })
  })

  test('create: the error view names the failure; closing is not an exit', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    frame({ wallet: false, fail: ['latch:wallet:create', await way.fail()] })
    signedIn(false)
    const created = outcome(methods().createWallet())
    await heard(way, created, async () => {
      await screen.findByTestId('screen-error')
      expect(screen.getByTestId('error-detail').textContent).toBe(
        'We’re on it. Please try again later.',
      )
    })
  })

  test('recover: the recovery screen names the failure; closing is not an exit', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    frame({ recovery: 'user-passcode', onDevice: false })
    signedIn(true, 'user-passcode')
    const recovered = outcome(methods().recoverWallet())
    await screen.findByTestId('screen-EMBEDDED_WALLET_RECOVERY_SCREEN')
    const failure = await way.fail()
    frame({ recovery: 'user-passcode', onDevice: false, fail: ['latch:wallet:recover', failure] })
    fireEvent.paste(screen.getByTestId('passcode-input-0'), {
      clipboardData: { getData: () => 'Ab3dE9' },
    })
    fireEvent.click(screen.getByRole('button', { name: 'Recover your account' }))
    await heard(way, recovered, async () => {
      expect((await screen.findByRole('alert')).textContent).toBe(way.text)
    })
  })

  test('recover without a screen (automatic recovery): rejects with the failure itself (a refused credential also opens the view saying what to do)', async () => {
    frame({ fail: ['latch:wallet:connect', await way.fail()] })
    signedIn()
    const recovered = outcome(methods().recoverWallet())
    expect(await recovered).toBe(way.code)
    if (way.code === 'wallet_sign_in_required') {
      await screen.findByTestId('screen-wallet-refused')
      close()
    } else {
      expect(screen.queryByTestId('screen-wallet-refused')).toBeNull()
    }
  })

  test('recover of a passcode wallet not on this device: a refused credential rejects before the passcode is asked', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    frame({
      recovery: 'user-passcode',
      onDevice: false,
      fail: ['latch:wallet:connect', await way.fail()],
    })
    signedIn(true, 'user-passcode')
    const recovered = outcome(methods().recoverWallet())
    expect(await recovered).toBe(way.code)
    expect(screen.queryByTestId('screen-EMBEDDED_WALLET_RECOVERY_SCREEN')).toBeNull()
    if (way.code === 'wallet_sign_in_required') {
      await screen.findByTestId('screen-wallet-refused')
      close()
    }
  })

  test('sendCalls behind the gate: the gate names the failure (a refused credential: the view, at once)', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    frame({ onDevice: false, fail: ['latch:wallet:connect', await way.fail()] })
    signedIn()
    // The app pays on chain 1, so the batch reaches the gate (elsewhere it is refused before).
    api.on('GET /calls/capabilities', {
      body: { '0x1': { atomic: { status: 'supported' }, paymasterService: { supported: true } } },
    })
    const batch = {
      version: '2.0.0',
      chainId: '0x1',
      from: ADDRESS,
      atomicRequired: true,
      calls: [{ to: `0x${'34'.repeat(20)}`, data: '0x' }],
    }
    const sent = outcome(methods().rpc(1, 'wallet_sendCalls', [batch]))
    await heard(way, sent, async () => {
      await screen.findByTestId('connecting-error')
    })
  })

  test('export: the gate names the failure; closing is not an exit', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    frame({ fail: ['latch:wallet:connect', await way.fail()] })
    signedIn()
    const exported = outcome(methods().exportWallet())
    await heard(way, exported, async () => {
      await screen.findByTestId('connecting-error')
    })
  })
})

describe('the refused view\'s "Sign in again in a new window"', { timeout: 20_000 }, () => {
  const TAG = 'latch:credential-window'

  /** A window as the view sees one, opened by its click; answers its nonce. */
  function windowOpened() {
    const sent: unknown[] = []
    const popup = {
      closed: false,
      postMessage: (message: unknown) => sent.push(message),
      close() {
        popup.closed = true
      },
    }
    let url = ''
    vi.spyOn(window, 'open').mockImplementation((u) => {
      url = String(u)
      return popup as unknown as Window
    })
    const from = (data: Record<string, unknown>) =>
      act(() => {
        window.dispatchEvent(
          new MessageEvent('message', {
            data: { tag: TAG, nonce: new URL(url).hash.slice(1), ...data },
            origin: location.origin,
            source: popup as unknown as Window,
          }),
        )
      })
    return { sent, popup, from, url: () => url }
  }

  async function refusedView() {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    frame({
      wallet: false,
      fail: ['latch:wallet:create', LatchError.of('wallet_sign_in_required')],
    })
    signedIn(false)
    const created = outcome(methods().createWallet())
    await screen.findByTestId('screen-wallet-refused')
    expect(await created).toBe('wallet_sign_in_required')
  }

  test('behavior: the window of this origin signs the same user in; the modal takes that session over and says the wallet can open now', async () => {
    await refusedView()
    const opened = windowOpened()
    fireEvent.click(screen.getByTestId('wallet-refused-window'))
    expect(opened.url()).toMatch(
      /^http:\/\/localhost(:\d+)?\/\?latch-credential-window#[0-9a-f]{32}$/,
    )
    opened.from({ type: 'ready' })
    expect(opened.sent).toEqual([
      expect.objectContaining({
        type: 'start',
        email: 'ada@example.com',
        appId: expect.any(String),
      }),
    ])
    const token = jwt(Math.floor(Date.now() / 1000) + 7200)
    opened.from({ type: 'signed-in', token, user: user() })
    await waitFor(() =>
      expect(screen.getByTestId('wallet-refused-status').textContent).toBe(
        'Signed in again. Your wallet can open now: try again.',
      ),
    )
    expect(await methods().getAccessToken()).toBe(token)
    expect(opened.popup.closed).toBe(true)
    close()
  })

  test('error: a browser that withholds even the credential set first-party: the view says it still refuses, not that the wallet can open', async () => {
    await refusedView()
    const opened = windowOpened()
    fireEvent.click(screen.getByTestId('wallet-refused-window'))
    opened.from({ type: 'ready' })
    frame({
      wallet: false,
      fail: ['latch:wallet:passkey-options', LatchError.of('wallet_sign_in_required')],
    })
    opened.from({
      type: 'signed-in',
      token: jwt(Math.floor(Date.now() / 1000) + 7200),
      user: user(),
    })
    await waitFor(() =>
      expect(screen.getByTestId('wallet-refused-status').textContent).toBe(
        'This browser still refuses your wallet’s sign-in here. Allow cross-site cookies for this app, or use another browser.',
      ),
    )
    expect(screen.queryByTestId('wallet-refused-window')).toBeNull()
    close()
  })

  test('refusal: another user signed in in the window is not taken over', async () => {
    await refusedView()
    const before = await methods().getAccessToken()
    const opened = windowOpened()
    fireEvent.click(screen.getByTestId('wallet-refused-window'))
    opened.from({ type: 'ready' })
    const token = jwt(Math.floor(Date.now() / 1000) + 7200, 'did:latch:mallory')
    opened.from({
      type: 'signed-in',
      token,
      user: user('mallory@example.com', 'did:latch:mallory'),
    })
    await waitFor(() =>
      expect(screen.getByTestId('wallet-refused-status').textContent).toBe(
        'You were not signed in again. Please try again.',
      ),
    )
    expect(await methods().getAccessToken()).toBe(before)
    close()
  })
})

test('behavior: a request over the balance is no failure of the API: closing then is leaving (transaction_exited)', async () => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
  api.on('GET /token_price?chainId=1', apiError(503, 'price_unavailable', 'No price'))
  api.on('POST /chains/1/rpc', (body) => ({
    body: { jsonrpc: '2.0', id: (body as { id: number }).id, result: '0x0' },
  }))
  frame({
    rpc: () => {
      throw LatchError.of('insufficient_funds')
    },
  })
  signedIn()
  const sent = outcome(methods().sendTransaction({ to: ADDRESS, value: 1n, chainId: 1 }))
  await screen.findByTestId('transaction-error')
  close()
  expect(await sent).toBe('transaction_exited')
})
