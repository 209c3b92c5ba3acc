/**
 * signMessage() and sendTransaction() in the modal (docs/behaviour.md,
 * "EMBEDDED_WALLET_SIGN_REQUEST_SCREEN" and "EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN"): the texts,
 * the 1400 ms success, the errors, the review screen's amounts and the blocked close. The wallet
 * frame is stood in for by test/wallet-frame-double.ts with an rpc answering as the frame's
 * (docs/behaviour.md, "Signing"); the API, its chain proxy and token price are the HTTP double;
 * everything of the modal is real.
 */
import {
  exposeMethods,
  type Hex,
  LatchError,
  remoteMethods,
  type TransactionReceipt,
  type User,
  type WalletMethods,
  type WalletRpcParams,
} from '@latch/shared'
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest'
import { createModalMethods } from '../startup/methods.ts'
import { setVerifiedHost } from '../startup/origin.ts'
import { store } from '../store.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { jwt, serverConfig, user } from '../test/fixtures.ts'
import { type Harness, renderModal } from '../test/harness.tsx'
import { FAKE_TIMERS, until } from '../test/until.ts'
import {
  type WalletFrameDouble,
  walletAccount,
  walletFrameDouble,
} from '../test/wallet-frame-double.ts'
import { provideWalletFrame } from './frame.ts'
import { normalizeRequest } from './send.ts'

let api: ApiDouble
let double: WalletFrameDouble
let rpcCalls: WalletRpcParams['request'][]
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
beforeEach(() => {
  // What startup records once the framing page is one of the app's origins.
  setVerifiedHost(HOST_ORIGIN, [HOST_ORIGIN])
})
afterEach(() => {
  setVerifiedHost(null)
  cleanup()
  vi.useRealTimers()
  provideWalletFrame(null)
  api.requests.length = 0
})

const ADDRESS = `0x${'12'.repeat(20)}` as Hex
const TO = `0x${'34'.repeat(20)}` as Hex
const SIGNATURE = `0x${'ab'.repeat(65)}` as Hex
const SIGNED_TX = '0x02f86b0102030405' as Hex
const HASH = `0x${'cd'.repeat(32)}` as Hex
const HOST_ORIGIN = 'https://shop.example.com'
const ETHER = 10n ** 18n

const methods = () =>
  createModalMethods({
    serverConfig: () => Promise.resolve(serverConfig()),
    restoredUser: () => Promise.resolve(null),
  })

type RpcAnswer = (request: WalletRpcParams['request']) => unknown

/** The frame's rpc as wallet-frame/src/rpc/dispatch.ts answers it, unless a test answers otherwise. */
const frameRpc: RpcAnswer = ({ method, params }) => {
  const list = params as unknown[]
  if (method === 'personal_sign' || method === 'eth_signTypedData_v4') return SIGNATURE
  if (method === 'eth_populateTransactionRequest') {
    const request = list[0] as Record<string, unknown>
    return {
      ...request,
      from: ADDRESS,
      value: request.value ?? '0x0',
      nonce: 0,
      gasLimit: '0x5208',
      type: 2,
      maxFeePerGas: '0x3b9aca00',
      maxPriorityFeePerGas: '0x3b9aca00',
    }
  }
  if (method === 'eth_signTransaction') return SIGNED_TX
  throw LatchError.of('rpc_unsupported_method')
}

/** The frame double, its wallet on this device, with an rpc answering `answer`. */
function frameWith(answer: RpcAnswer = frameRpc, onDevice = true): void {
  double = walletFrameDouble({
    wallet: walletAccount(ADDRESS, 'user-passcode'),
    passcode: 'Ab3dE9',
  })
  if (onDevice) double.device.add(ADDRESS)
  rpcCalls = []
  const base = double.frame
  // The double's frame is a proxy (remoteMethods): its methods are named, not spread.
  const methods: WalletMethods = {
    'latch:wallet:create': (params) => base['latch:wallet:create'](params),
    'latch:wallet:connect': (params) => base['latch:wallet:connect'](params),
    'latch:wallet:recover': (params) => base['latch:wallet:recover'](params),
    'latch:wallet:confirm-fork': (params) => base['latch:wallet:confirm-fork'](params),
    'latch:wallet:approval': (params) => base['latch:wallet:approval'](params),
    'latch:wallet:dismiss-approval': () => base['latch:wallet:dismiss-approval'](),
    'latch:wallet:add-passkey': (params) => base['latch:wallet:add-passkey'](params),
    'latch:wallet:passkey-options': (params) => base['latch:wallet:passkey-options'](params),
    async 'latch:wallet:rpc'(params) {
      rpcCalls.push(params.request)
      if (!params.accessToken || params.address !== ADDRESS) {
        throw LatchError.of('invalid_request_arguments')
      }
      return { response: await answer(params.request) }
    },
  }
  // Through the shared serialization, as penpal carries the frame's answers and errors.
  provideWalletFrame(remoteMethods<WalletMethods>(exposeMethods(methods)))
}

function withWallet(base: User): User {
  const wallet = walletAccount(ADDRESS, 'user-passcode')
  return { ...base, linkedAccounts: [...base.linkedAccounts, wallet], wallet }
}

/** The modal with a signed-in user (with the in-app wallet unless `base` says otherwise). */
function signedIn(base: User = withWallet(user())): Harness {
  const harness = renderModal(api)
  act(() => {
    harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, base)
  })
  return harness
}

/** The chain proxy: a node answering balance, send and receipt; `overrides` per method. */
function chainNode(balance: bigint, overrides: Record<string, () => unknown> = {}): void {
  api.on('POST /chains/1/rpc', (body) => {
    const { id, method } = body as { id: number; method: string }
    const answer = overrides[method]
    if (answer) return { body: { jsonrpc: '2.0', id, ...(answer() as object) } }
    const results: Record<string, unknown> = {
      eth_getBalance: `0x${balance.toString(16)}`,
      eth_sendRawTransaction: HASH,
      eth_blockNumber: '0x10',
      eth_getTransactionReceipt: {
        to: TO,
        from: ADDRESS,
        contractAddress: null,
        transactionIndex: '0x0',
        logsBloom: `0x${'0'.repeat(512)}`,
        blockHash: `0x${'ef'.repeat(32)}`,
        transactionHash: HASH,
        logs: [],
        blockNumber: '0x10',
        type: '0x2',
        status: '0x1',
        gasUsed: '0x5208',
        cumulativeGasUsed: '0x5208',
        effectiveGasPrice: '0x3b9aca00',
      },
    }
    return { body: { jsonrpc: '2.0', id, result: results[method] ?? null } }
  })
}

const price = (usd: number | null) =>
  api.on(
    'GET /token_price?chainId=1',
    usd === null
      ? apiError(503, 'price_unavailable', 'Token price is unavailable')
      : { body: { usd } },
  )

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

const closeButton = () => screen.getByTestId('close-button') as HTMLButtonElement

/** A review's confirm button once armed (REVIEW_ARM_DELAY_MS after its request showed). */
async function armedButton(name: string): Promise<HTMLButtonElement> {
  const button = (await screen.findByRole('button', { name })) as HTMLButtonElement
  await waitFor(() => expect(button.dataset.armed).toBe('true'), { timeout: 2000 })
  return button
}

describe('signMessage()', () => {
  test('error: an empty message, a user without an in-app wallet or signed out are refused; the modal stays closed', async () => {
    frameWith()
    const harness = signedIn()
    expect(await rejection(methods().signMessage(''))).toMatchObject({
      message: 'Message must be a non-empty string',
    })
    expect(await rejection(methods().signMessage(42 as unknown as string))).toMatchObject({
      message: 'Message must be a non-empty string',
    })
    cleanup()
    signedIn(user())
    expect(await rejection(methods().signMessage('hello'))).toMatchObject({
      message: 'Must have a wallet before signing',
    })
    cleanup()
    renderModal(api)
    expect(await rejection(methods().signMessage('hello'))).toMatchObject({
      message: 'User is not authenticated.',
    })
    expect(double.calls).toEqual([])
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen')).toEqual([])
  })

  test('behavior: the connecting gate, "Sign message", "Sign and continue"; the signature resolves at once, "Success" shows for 1400 ms, then the modal closes', async () => {
    frameWith()
    const harness = signedIn()
    const signed = methods().signMessage('Hello from Latch')
    expect(await screen.findByRole('heading', { name: 'Sign message' })).toBeTruthy()
    expect(double.calls.map((c) => c.method)).toEqual(['latch:wallet:connect'])
    const box = screen.getByTestId('sign-message') as HTMLTextAreaElement
    expect(box.value).toBe('Hello from Latch')
    // Who signs, in full, and the site that asks (the verified host origin).
    expect(screen.getByTestId('sign-address').textContent).toBe(ADDRESS)
    expect(screen.getByTestId('request-site').textContent).toBe(HOST_ORIGIN)
    expect(screen.getByText('Account')).toBeTruthy()
    expect(screen.getByText('Requested by')).toBeTruthy()
    expect(box.readOnly).toBe(true)
    expect(box.tabIndex).toBe(0)
    expect(harness.emitted('sign_message_started')).toHaveLength(1)
    const button = await armedButton('Sign and continue')
    vi.useFakeTimers(FAKE_TIMERS)
    fireEvent.click(button)
    await expect(signed).resolves.toBe(SIGNATURE)
    await until(() => store.getState().signRequest?.status === 'success')
    expect(rpcCalls).toEqual([{ method: 'personal_sign', params: ['Hello from Latch', ADDRESS] }])
    expect(screen.getByTestId('sign-success').textContent).toBe('Success')
    expect(
      (screen.getByRole('button', { name: 'Sign and continue' }) as HTMLButtonElement).disabled,
    ).toBe(true)
    expect(harness.emitted('sign_message_completed')).toHaveLength(1)
    act(() => {
      vi.advanceTimersByTime(1399)
    })
    expect(store.getState().open).toBe(true)
    act(() => {
      vi.advanceTimersByTime(1)
    })
    expect(store.getState().open).toBe(false)
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen').map((c) => c.args[0])).toEqual([
      true,
      false,
    ])
  })

  test("param: the options' title, description and button text replace the defaults", async () => {
    frameWith()
    signedIn()
    void methods().signMessage('Order #12', {
      title: 'Confirm your order',
      description: 'Signing costs nothing.',
      buttonText: 'Sign order',
    })
    expect(await screen.findByRole('heading', { name: 'Confirm your order' })).toBeTruthy()
    expect(screen.getByText('Signing costs nothing.')).toBeTruthy()
    expect(screen.getByRole('button', { name: 'Sign order' })).toBeTruthy()
    expect(screen.queryByText('Sign message')).toBeNull()
  })

  test('error: a failed signature shows "An error has occurred, please try again." and the button tries again', async () => {
    let fail = true
    frameWith((request) => {
      if (fail) {
        fail = false
        throw LatchError.of('embedded_wallet_error')
      }
      return frameRpc(request)
    })
    signedIn()
    const signed = methods().signMessage('again')
    fireEvent.click(await armedButton('Sign and continue'))
    expect((await screen.findByRole('alert')).textContent).toBe(
      'An error has occurred, please try again.',
    )
    fireEvent.click(screen.getByRole('button', { name: 'Sign and continue' }))
    await expect(signed).resolves.toBe(SIGNATURE)
  })

  test('error: closing before signing rejects with "Signature rejected" (4001); nothing is signed', async () => {
    frameWith()
    signedIn()
    const signed = methods().signMessage('never')
    await screen.findByRole('heading', { name: 'Sign message' })
    fireEvent.click(closeButton())
    expect(await rejection(signed)).toMatchObject({ message: 'Signature rejected', rpcCode: 4001 })
    expect(rpcCalls).toEqual([])
  })

  test('behavior: typed data is shown as JSON and signed with eth_signTypedData_v4', async () => {
    frameWith()
    signedIn()
    const typedData = {
      domain: { name: 'Latch', chainId: 1 },
      types: { Mail: [{ name: 'contents', type: 'string' }] },
      primaryType: 'Mail',
      message: { contents: 'Hello' },
    }
    const { signFlow } = await import('./index.ts')
    const signed = signFlow({ kind: 'typedData', typedData })
    const box = (await screen.findByTestId('sign-message')) as HTMLTextAreaElement
    expect(JSON.parse(box.value)).toEqual(typedData)
    fireEvent.click(await armedButton('Sign and continue'))
    await expect(signed).resolves.toBe(SIGNATURE)
    expect(rpcCalls[0]).toEqual({ method: 'eth_signTypedData_v4', params: [ADDRESS, typedData] })
  })

  test('behavior: a wallet not on this device is recovered with the passcode first, then signs', async () => {
    frameWith(frameRpc, false)
    signedIn()
    const signed = methods().signMessage('new device')
    await screen.findByRole('heading', { name: 'Load your account' })
    fireEvent.paste(screen.getByTestId('passcode-input-0'), {
      clipboardData: { getData: () => 'Ab3dE9' },
    })
    fireEvent.click(screen.getByRole('button', { name: 'Recover your account' }))
    fireEvent.click(await armedButton('Sign and continue'))
    await expect(signed).resolves.toBe(SIGNATURE)
  })
})

describe('the gate once a wallet signed in this page', () => {
  test('behavior: a second request skips the connect round trip; a frame without the share after all goes through the gate (recovery) and signs', async () => {
    let lost = false
    frameWith((request) => {
      if (lost) {
        lost = false
        throw LatchError.of('wallet_not_on_device')
      }
      return frameRpc(request)
    })
    signedIn()
    const sign = async (message: string) => {
      const signed = methods().signMessage(message)
      fireEvent.click(await armedButton('Sign and continue'))
      await expect(signed).resolves.toBe(SIGNATURE)
      await waitFor(() => expect(store.getState().open).toBe(false), { timeout: 3000 })
    }
    await sign('first')
    await sign('second')
    expect(double.calls.map((c) => c.method)).toEqual(['latch:wallet:connect'])
    // The frame lost the share (a new device after all): the signature says so, the gate runs.
    double.device.clear()
    lost = true
    const signed = methods().signMessage('third')
    fireEvent.click(await armedButton('Sign and continue'))
    await screen.findByRole('heading', { name: 'Load your account' })
    fireEvent.paste(screen.getByTestId('passcode-input-0'), {
      clipboardData: { getData: () => 'Ab3dE9' },
    })
    fireEvent.click(screen.getByRole('button', { name: 'Recover your account' }))
    fireEvent.click(await armedButton('Sign and continue'))
    await expect(signed).resolves.toBe(SIGNATURE)
    // Three signatures, each armed after REVIEW_ARM_DELAY_MS, two with the success pause.
  }, 15_000)
})

const transfer = { to: TO, value: ETHER / 100n, chainId: 1 }

describe('sendTransaction()', () => {
  test('param: numeric fields accept numbers, bigints and hex strings; chainId defaults to the default chain', () => {
    expect(
      normalizeRequest({ to: TO, value: 10, gasLimit: 21_000n, maxFeePerGas: '0x3b9aca00' }),
    ).toEqual({ to: TO, value: '0xa', gasLimit: '0x5208', maxFeePerGas: '0x3b9aca00', chainId: 1 })
  })

  test('error: bad requests and options are refused with a clear text, before anything opens', async () => {
    frameWith()
    signedIn()
    const refused = async (request: unknown, options?: unknown) =>
      (
        (await rejection(
          methods().sendTransaction(request as never, options as never),
        )) as Error | null
      )?.message
    expect(await refused({ to: TO, value: 'ten' })).toBe(
      'Invalid transaction request: value must be a number, bigint or hex string',
    )
    expect(await refused({ to: TO, value: -1 })).toBe(
      'Invalid transaction request: value must be a number, bigint or hex string',
    )
    expect(await refused({ to: TO, chainId: '1' })).toBe(
      'Invalid transaction request: chainId must be a number',
    )
    expect(await refused({ to: TO, type: 3 })).toBe('Unsupported transaction.')
    expect(await refused({ to: TO, chainId: 31337 })).toBe('Unsupported chainId')
    expect(await refused({ to: '0x1234' })).toBe(
      'Invalid transaction request: to must be an address',
    )
    // Dropped, these would send another transaction than the one asked for.
    for (const field of ['accessList', 'authorizationList', 'input', 'gas', 'maxFeePerBlobGas']) {
      expect(await refused({ to: TO, [field]: '0x01' })).toBe(
        `Invalid transaction request: ${field} is not supported`,
      )
    }
    expect(await refused(transfer, { senderInfo: { url: 'javascript:alert(1)', name: 'x' } })).toBe(
      'Invalid transaction UI options',
    )
    expect(double.calls).toEqual([])
    expect(store.getState().open).toBe(false)
  })

  test('behavior: the review shows from and to truncated with explorer links, 0.01 ETH and its dollars, the fee, the balance, and "Send ETH"', async () => {
    frameWith()
    chainNode(ETHER)
    price(2500)
    signedIn()
    void methods().sendTransaction(transfer)
    expect(await screen.findByRole('heading', { name: 'Review transaction' })).toBeTruthy()
    await waitFor(() =>
      expect((screen.getByRole('button', { name: 'Send ETH' }) as HTMLButtonElement).disabled).toBe(
        false,
      ),
    )
    const from = screen.getByTestId('transaction-from').querySelector('a')
    expect(from?.textContent).toBe('0x1212…1212')
    expect(from?.getAttribute('href')).toBe(`https://etherscan.io/address/${ADDRESS}`)
    expect(screen.getByTestId('transaction-to').querySelector('a')?.getAttribute('href')).toBe(
      `https://etherscan.io/address/${TO}`,
    )
    expect(screen.getByTestId('request-site').textContent).toBe(HOST_ORIGIN)
    expect(screen.getByTestId('transaction-value').firstChild?.textContent).toBe('0.01 ETH')
    expect(screen.getByTestId('transaction-value-usd').textContent).toBe('USD $25.00')
    // 21000 gas at 1 gwei.
    expect(screen.getByTestId('transaction-fee').textContent).toBe('0.000021 ETHUSD $0.05')
    expect(screen.getByTestId('transaction-balance').textContent).toBe('1 ETH')
    expect(
      screen.getByTestId('transaction-balance').firstElementChild?.getAttribute('data-over'),
    ).toBe('false')
    expect(rpcCalls[0]).toEqual({
      method: 'eth_populateTransactionRequest',
      params: [{ to: TO, value: '0x2386f26fc10000', chainId: 1 }],
    })
  })

  test('param: call data reads "Submit transaction"; the options set the texts, the sender and its image size', async () => {
    frameWith()
    chainNode(ETHER)
    price(null)
    signedIn()
    void methods().sendTransaction({ to: TO, data: '0xa9059cbb', chainId: 1 })
    expect(await screen.findByRole('button', { name: 'Submit transaction' })).toBeTruthy()
    // No price source (503): no dollar line, and no error either.
    await waitFor(() => expect(screen.getByTestId('transaction-balance')).toBeTruthy())
    expect(screen.queryByTestId('transaction-value-usd')).toBeNull()
    expect(screen.queryByRole('alert')).toBeNull()
    cleanup()
    signedIn()
    void methods().sendTransaction(transfer, {
      modalTitle: 'Pay Latch Store',
      title: 'Checkout',
      description: 'One coffee',
      buttonText: 'Pay now',
      transactionInfo: {
        actionDescription: 'Buying',
        action: 'Coffee',
        description: 'Arrives warm',
      },
      senderInfo: {
        name: 'Latch Store',
        url: 'https://store.example',
        imgUrl: 'https://store.example/logo.png',
        imgSize: 'lg',
        imgAltText: 'Store logo',
        actionText: 'wants you to pay',
      },
    })
    expect(await screen.findByRole('heading', { name: 'Pay Latch Store' })).toBeTruthy()
    expect(screen.getByRole('heading', { name: 'Checkout' })).toBeTruthy()
    expect(screen.getByText('One coffee')).toBeTruthy()
    expect(screen.getByRole('button', { name: 'Pay now' })).toBeTruthy()
    expect(screen.getByTestId('transaction-action').textContent).toBe('Coffee')
    expect(screen.getByText('Buying')).toBeTruthy()
    expect(screen.getByText('Arrives warm')).toBeTruthy()
    expect(screen.getByRole('link', { name: 'Latch Store' }).getAttribute('href')).toBe(
      'https://store.example',
    )
    expect(screen.getByAltText('Store logo').getAttribute('data-size')).toBe('lg')
    expect(screen.getByText('wants you to pay')).toBeTruthy()
  })

  test('error: insufficient funds shows the server message and the balance in red; the button stays off', async () => {
    frameWith((request) => {
      if (request.method === 'eth_populateTransactionRequest') {
        throw LatchError.of('insufficient_funds')
      }
      return frameRpc(request)
    })
    chainNode(ETHER / 1000n)
    price(2500)
    signedIn()
    void methods().sendTransaction(transfer)
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Insufficient funds for this transaction',
    )
    const balance = screen.getByTestId('transaction-balance').firstElementChild
    expect(balance?.textContent).toBe('0.001 ETH')
    expect(balance?.getAttribute('data-over')).toBe('true')
    expect(balance?.className).toBe('latch-tx-over')
    expect((screen.getByRole('button', { name: 'Send ETH' }) as HTMLButtonElement).disabled).toBe(
      true,
    )
  })

  test('error: another preparation failure shows "There was an error preparing transaction"', async () => {
    frameWith((request) => {
      if (request.method === 'eth_populateTransactionRequest') {
        throw LatchError.of('rpc_internal', { message: 'execution reverted' })
      }
      return frameRpc(request)
    })
    chainNode(ETHER)
    price(null)
    signedIn()
    void methods().sendTransaction(transfer)
    expect((await screen.findByRole('alert')).textContent).toBe(
      'There was an error preparing transaction',
    )
  })

  test('behavior: submitting shows its text and blocks closing (button, Escape, the host); then "Transaction complete!", "You\'re all set." and "All Done" resolve with the receipt', async () => {
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    frameWith(async (request) => {
      if (request.method === 'eth_signTransaction') await held
      return frameRpc(request)
    })
    chainNode(ETHER)
    price(null)
    const harness = signedIn()
    const sent = methods().sendTransaction(transfer)
    const button = await screen.findByRole('button', { name: 'Send ETH' })
    await waitFor(() => expect((button as HTMLButtonElement).disabled).toBe(false))
    fireEvent.click(button)
    expect((await screen.findByTestId('transaction-submitting')).textContent).toBe(
      'Submitting (may take a few minutes)...',
    )
    expect(closeButton().disabled).toBe(true)
    fireEvent.keyDown(document, { key: 'Escape' })
    await methods().close()
    expect(store.getState().open).toBe(true)
    // Another request meanwhile is refused; this one goes on.
    expect(await rejection(methods().signMessage('meanwhile'))).toMatchObject({
      message: 'Request already pending',
    })
    release()
    expect(await screen.findByRole('heading', { name: 'Transaction complete!' })).toBeTruthy()
    expect(screen.getByText("You're all set.")).toBeTruthy()
    // The hash in full, linked to the chain's explorer.
    const hash = screen.getByRole('link', { name: HASH })
    expect(hash.getAttribute('href')).toBe(`https://etherscan.io/tx/${HASH}`)
    expect(hash.getAttribute('target')).toBe('_blank')
    expect(screen.getByTestId('transaction-hash').previousElementSibling?.textContent).toBe(
      'Transaction hash',
    )
    expect(closeButton().disabled).toBe(false)
    expect(rpcCalls.map((c) => c.method)).toEqual([
      'eth_populateTransactionRequest',
      'eth_signTransaction',
    ])
    expect(
      api
        .calls('POST /chains/1/rpc')
        .some(
          (r) =>
            (r.body as { method: string; params: unknown[] }).method === 'eth_sendRawTransaction' &&
            (r.body as { params: unknown[] }).params[0] === SIGNED_TX,
        ),
    ).toBe(true)
    fireEvent.click(screen.getByRole('button', { name: 'All Done' }))
    const receipt = (await sent) as TransactionReceipt
    expect(receipt).toMatchObject({
      transactionHash: HASH,
      from: ADDRESS,
      to: TO,
      status: 1,
      blockNumber: 16,
      gasUsed: '21000',
      byzantium: true,
    })
    expect(store.getState().open).toBe(false)
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen').at(-1)?.args).toEqual([false])
  })

  test('error: a submit failure shows its reason, and the generic text without one', async () => {
    frameWith()
    let sendAnswer: () => unknown = () => ({ error: { code: -32000, message: 'nonce too low' } })
    chainNode(ETHER, { eth_sendRawTransaction: () => sendAnswer() })
    price(null)
    signedIn()
    void methods().sendTransaction(transfer)
    const button = await screen.findByRole('button', { name: 'Send ETH' })
    await waitFor(() => expect((button as HTMLButtonElement).disabled).toBe(false))
    fireEvent.click(button)
    expect((await screen.findByRole('alert')).textContent).toBe('nonce too low')
    expect(closeButton().disabled).toBe(false)
    sendAnswer = () => ({ result: 42 })
    api.on('POST /chains/1/rpc', () => ({ status: 500, body: 'garbled' }))
    fireEvent.click(button)
    await waitFor(() => expect(screen.getByRole('alert').textContent).not.toBe('nonce too low'))
    expect(screen.getByRole('alert').textContent).toBe('An error has occurred, please try again.')
  })

  test('error: closing before submitting rejects with "User exited the modal before submitting the transaction"', async () => {
    frameWith()
    chainNode(ETHER)
    price(null)
    signedIn()
    const sent = methods().sendTransaction(transfer)
    await screen.findByRole('heading', { name: 'Review transaction' })
    fireEvent.keyDown(document, { key: 'Escape' })
    expect(await rejection(sent)).toMatchObject({
      message: 'User exited the modal before submitting the transaction',
    })
  })
})

describe('one request on screen at a time (a second is refused with -32002)', () => {
  const pending = {
    code: 'rpc_request_pending',
    rpcCode: -32002,
    message: 'Request already pending',
    details: 'Don’t see your wallet modal? Check your other browser windows.',
  }
  /** Whether `p` settled by now (after the microtasks and a turn of the loop). */
  const settled = async (p: Promise<unknown>) => {
    let done = false
    p.then(
      () => {
        done = true
      },
      () => {
        done = true
      },
    )
    await act(() => new Promise<void>((resolve) => setImmediate(resolve)))
    return done
  }

  test('behavior: two signMessage back to back: the second is refused at once, the first stays on screen, unsettled, and signs its own message', async () => {
    frameWith()
    const harness = signedIn()
    const first = methods().signMessage('First message')
    await screen.findByRole('heading', { name: 'Sign message' })
    const second = methods().signMessage('Second message')
    expect(await rejection(second)).toMatchObject(pending)
    expect(await settled(first)).toBe(false)
    expect((screen.getByTestId('sign-message') as HTMLTextAreaElement).value).toBe('First message')
    fireEvent.click(await armedButton('Sign and continue'))
    await expect(first).resolves.toBe(SIGNATURE)
    expect(rpcCalls).toEqual([{ method: 'personal_sign', params: ['First message', ADDRESS] }])
    // The host was never told to close its dialog for the refusal.
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen').map((c) => c.args[0])).toEqual([
      true,
    ])
  })

  test('behavior: during a sign request every other request is refused (typed data, a transaction, an export, a link); during a review a signature is', async () => {
    frameWith()
    chainNode(ETHER)
    price(null)
    signedIn()
    const first = methods().signMessage('On screen')
    await screen.findByRole('heading', { name: 'Sign message' })
    const m = methods()
    for (const refused of [
      m.signTypedData({ domain: {}, types: {}, primaryType: 'X', message: {} }),
      m.sendTransaction(transfer),
      m.exportWallet(),
      m.link('email'),
    ]) {
      expect(await rejection(refused)).toMatchObject(pending)
    }
    expect(await settled(first)).toBe(false)
    fireEvent.click(closeButton())
    expect(await rejection(first)).toMatchObject({ message: 'Signature rejected' })
    // The transaction's review: a signature arriving meanwhile is refused, the review stays.
    const sent = methods().sendTransaction(transfer)
    await armedButton('Send ETH')
    expect(await rejection(methods().signMessage('Meanwhile'))).toMatchObject(pending)
    expect(store.getState().transaction?.request.to).toBe(TO)
    expect(await settled(sent)).toBe(false)
    expect(screen.getByRole('heading', { name: 'Review transaction' })).toBeTruthy()
  })

  test('behavior: after a signature the next request takes the modal over during the success pause, and signs', async () => {
    frameWith()
    signedIn()
    const first = methods().signMessage('one')
    fireEvent.click(await armedButton('Sign and continue'))
    await expect(first).resolves.toBe(SIGNATURE)
    await until(() => store.getState().signRequest?.status === 'success')
    const second = methods().signMessage('two')
    await waitFor(() =>
      expect((screen.getByTestId('sign-message') as HTMLTextAreaElement).value).toBe('two'),
    )
    fireEvent.click(await armedButton('Sign and continue'))
    await expect(second).resolves.toBe(SIGNATURE)
    expect(rpcCalls.map((r) => (r.params as unknown[])[0])).toEqual(['one', 'two'])
  })

  test('behavior: logout() during a sign request settles it at once with "User is not authenticated." and closes; signed in again, the next request signs', async () => {
    frameWith()
    api.on('POST /sessions/logout', { body: { success: true } })
    const harness = signedIn()
    const signed = methods().signMessage('before logout')
    await screen.findByRole('heading', { name: 'Sign message' })
    await methods().logout()
    expect(await rejection(signed)).toMatchObject({
      code: 'not_authenticated',
      message: 'User is not authenticated.',
    })
    expect(store.getState().open).toBe(false)
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen').at(-1)?.args).toEqual([false])
    expect(rpcCalls).toEqual([])
    act(() => {
      harness.session.start(
        { token: jwt(Math.floor(Date.now() / 1000) + 3600) },
        withWallet(user()),
      )
    })
    const again = methods().signMessage('after logout')
    fireEvent.click(await armedButton('Sign and continue'))
    await expect(again).resolves.toBe(SIGNATURE)
  })

  test('behavior: a session that ends under a transaction review (a failed refresh) rejects it at once', async () => {
    frameWith()
    chainNode(ETHER)
    price(null)
    const harness = signedIn()
    const sent = methods().sendTransaction(transfer)
    await armedButton('Send ETH')
    act(() => harness.session.clear())
    expect(await rejection(sent)).toMatchObject({ code: 'not_authenticated' })
    expect(store.getState().open).toBe(false)
  })
})

describe('the review shows what is signed, armed after REVIEW_ARM_DELAY_MS', () => {
  test('behavior: a click before the request has been visible for 500 ms does nothing; after, it signs', async () => {
    const { REVIEW_ARM_DELAY_MS } = await import('./review.ts')
    expect(REVIEW_ARM_DELAY_MS).toBe(500)
    frameWith()
    signedIn()
    await screen.findByTestId('close-button')
    vi.useFakeTimers(FAKE_TIMERS)
    const signed = methods().signMessage('Wait for it')
    await until(() => screen.queryByTestId('sign-submit') !== null)
    const button = screen.getByTestId('sign-submit') as HTMLButtonElement
    act(() => {
      vi.advanceTimersByTime(REVIEW_ARM_DELAY_MS - 1)
    })
    expect(button.disabled).toBe(true)
    fireEvent.click(button)
    expect(store.getState().signRequest?.status).toBe('idle')
    // Leaving for another window starts the wait over.
    act(() => {
      window.dispatchEvent(new Event('blur'))
      vi.advanceTimersByTime(REVIEW_ARM_DELAY_MS - 1)
    })
    expect(button.disabled).toBe(true)
    act(() => {
      vi.advanceTimersByTime(1)
    })
    expect(button.disabled).toBe(false)
    fireEvent.click(button)
    await expect(signed).resolves.toBe(SIGNATURE)
    expect(rpcCalls).toHaveLength(1)
  })

  test('behavior: the payload on screen is a frozen copy; confirming another payload does nothing', async () => {
    frameWith()
    signedIn()
    const message = { kind: 'message' as const, message: 'Shown' }
    const { signFlow } = await import('./index.ts')
    const signed = signFlow(message)
    await armedButton('Sign and continue')
    const shown = store.getState().signRequest?.payload
    expect(shown).toEqual(message)
    expect(shown).not.toBe(message)
    expect(Object.isFrozen(shown)).toBe(true)
    message.message = 'Switched'
    const { confirmSign } = await import('./sign.ts')
    await confirmSign({ kind: 'message', message: 'Shown' })
    expect(rpcCalls).toEqual([])
    fireEvent.click(await armedButton('Sign and continue'))
    await expect(signed).resolves.toBe(SIGNATURE)
    expect(rpcCalls).toEqual([{ method: 'personal_sign', params: ['Shown', ADDRESS] }])
  })

  test("behavior: the host's title, description and button text are marked as the app's", async () => {
    frameWith()
    signedIn()
    void methods().signMessage('Order #12', {
      title: 'Latch security check',
      description: 'Latch asks you to sign.',
      buttonText: 'Verify',
    })
    await screen.findByRole('heading', { name: 'Latch security check' })
    const labels = screen.getAllByTestId('app-label').map((l) => l.textContent)
    expect(labels).toEqual(['From Acme', 'From Acme', 'From Acme'])
    expect(screen.getByTestId('app-text').textContent).toContain('Latch asks you to sign.')
    expect(screen.getByRole('button', { name: 'Verify' }).getAttribute('aria-describedby')).toBe(
      'latch-sign-button-from',
    )
  })

  test('behavior: typed data shows its domain (name, chain by name, verifying contract); an unlimited permit is flagged', async () => {
    frameWith()
    signedIn()
    const token = '0x6b175474e89094c44da98b954eedeac495271d0f'
    const permit = {
      domain: { name: 'Dai Stablecoin', version: '1', chainId: 1, verifyingContract: token },
      types: {
        Permit: [
          { name: 'owner', type: 'address' },
          { name: 'spender', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'nonce', type: 'uint256' },
          { name: 'deadline', type: 'uint256' },
        ],
      },
      primaryType: 'Permit',
      message: {
        owner: ADDRESS,
        spender: TO,
        value: (2n ** 256n - 1n).toString(),
        nonce: 0,
        deadline: 1_900_000_000,
      },
    }
    void methods().signTypedData(permit)
    await screen.findByTestId('typed-data-domain')
    expect(screen.getByTestId('domain-name').textContent).toBe('Dai Stablecoin (version 1)')
    expect(screen.getByTestId('domain-chain').textContent).toBe('Ethereum')
    expect(screen.getByTestId('domain-contract').textContent).toBe(
      '0x6B175474E89094C44Da98b954EedeAC495271d0F',
    )
    expect(screen.getByTestId('decoded-amount').textContent).toBe('Unlimited')
    expect(screen.getByTestId('unlimited-warning').textContent).toContain('Unlimited approval')
  })

  test('behavior: an ERC-20 approve of max uint256 shows its calldata, decoded, with the unlimited warning', async () => {
    const token = `0x${'56'.repeat(20)}` as Hex
    const data = `0x095ea7b3${TO.slice(2).padStart(64, '0')}${'f'.repeat(64)}` as Hex
    frameWith()
    chainNode(ETHER)
    price(null)
    signedIn()
    void methods().sendTransaction({ to: token, data, chainId: 1 })
    await armedButton('Submit transaction')
    expect(screen.getByTestId('decoded-call').textContent).toContain('approve')
    expect(screen.getByTestId('decoded-amount').textContent).toBe('Unlimited')
    expect(screen.getByTestId('unlimited-warning').textContent).toContain(
      '0x3434343434343434343434343434343434343434',
    )
    expect(screen.getByTestId('calldata-hex').textContent).toBe(data)
  })
})

describe('a message sent as hex bytes', () => {
  test('behavior: bytes that are UTF-8 text show as that text, with a note; other bytes stay hex; the signature covers the message as sent', async () => {
    const { hexMessageText } = await import('../screens/SignRequest.tsx')
    const hex = (text: string) => `0x${Buffer.from(text, 'utf8').toString('hex')}`
    expect(hexMessageText(hex('Hello ✓\nline two'))).toBe('Hello ✓\nline two')
    expect(hexMessageText('0xdeadbeef')).toBeNull()
    expect(hexMessageText(hex('a\u0000b'))).toBeNull()
    // A bidi override would show the text in another order than it is signed.
    expect(hexMessageText(hex('pay \u202E0001'))).toBeNull()
    expect(hexMessageText('0x')).toBeNull()
    expect(hexMessageText('0xabc')).toBeNull()
    expect(hexMessageText('hello')).toBeNull()

    frameWith()
    signedIn()
    const signed = methods().signMessage(hex('From ethers'))
    const box = (await screen.findByTestId('sign-message')) as HTMLTextAreaElement
    expect(box.value).toBe('From ethers')
    expect(screen.getByTestId('sign-message-encoding').textContent).toBe(
      'Sent as bytes (11), shown as text.',
    )
    fireEvent.click(await armedButton('Sign and continue'))
    await expect(signed).resolves.toBe(SIGNATURE)
    expect(rpcCalls).toEqual([{ method: 'personal_sign', params: [hex('From ethers'), ADDRESS] }])
  })
})
