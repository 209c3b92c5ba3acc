/**
 * EIP-5792 in the modal (ModalMethods.rpc by method name; docs/behaviour.md, "Batches the app pays for"):
 * wallet_sendCalls opens the wallet frame's batch review on the send screen and answers the
 * batch's id; closing is a 4001 (transaction_exited) only when the visitor closed, a refusal
 * keeps its code; the capabilities, the status and showCallsStatus read the API. The frame is
 * stood in for by test/wallet-frame-double.ts with a batch review answering as the frame's
 * (wallet-frame/src/batch/review.ts); the API is the HTTP double; everything of the modal is real.
 */
import {
  DEFAULT_CHAIN_IDS,
  exposeMethods,
  type Hex,
  LatchError,
  remoteMethods,
  type User,
  type WalletBatchMethods,
  type WalletMethods,
  type WalletSendCallsParams,
} from '@latch/shared'
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { createModalMethods } from '../startup/methods.ts'
import { setVerifiedHost } from '../startup/origin.ts'
import { store } from '../store.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { jwt, serverConfig, user } from '../test/fixtures.ts'
import { type Harness, renderModal } from '../test/harness.tsx'
import { walletAccount, walletFrameDouble } from '../test/wallet-frame-double.ts'
import { batchSendingHeard, provideWalletFrame } from './frame.ts'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
beforeEach(() => setVerifiedHost(HOST_ORIGIN, [HOST_ORIGIN]))
afterEach(() => {
  setVerifiedHost(null)
  cleanup()
  provideWalletFrame(null)
  api.requests.length = 0
})

const ADDRESS = `0x${'12'.repeat(20)}` as Hex
const TOKEN = `0x${'34'.repeat(20)}` as Hex
const HOST_ORIGIN = 'https://shop.example.com'
const BATCH_ID = `0x${'ab'.repeat(32)}`
const TRANSFER = `0xa9059cbb${'00'.repeat(12)}${'56'.repeat(20)}${'00'.repeat(31)}01`

const methods = () =>
  createModalMethods({
    serverConfig: () => Promise.resolve(serverConfig()),
    restoredUser: () => Promise.resolve(null),
  })

/** The frame's batch review: each show waits for the test to answer it (the visitor's click). */
interface Review {
  shown: WalletSendCallsParams[]
  dismissed: number
  answer(result: { id: string } | LatchError): void
}

function frameWithReview(): Review {
  const double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'user-passcode') })
  double.device.add(ADDRESS)
  const base = double.frame
  let settle: ((r: { id: string } | LatchError) => void) | null = null
  const review: Review = {
    shown: [],
    dismissed: 0,
    answer: (r) => settle?.(r),
  }
  const frame: WalletMethods & WalletBatchMethods = {
    'latch:wallet:create': (p) => base['latch:wallet:create'](p),
    'latch:wallet:connect': (p) => base['latch:wallet:connect'](p),
    'latch:wallet:recover': (p) => base['latch:wallet:recover'](p),
    'latch:wallet:rpc': (p) => base['latch:wallet:rpc'](p),
    'latch:wallet:confirm-fork': (p) => base['latch:wallet:confirm-fork'](p),
    'latch:wallet:approval': (p) => base['latch:wallet:approval'](p),
    'latch:wallet:add-passkey': (p) => base['latch:wallet:add-passkey'](p),
    'latch:wallet:passkey-options': (p) => base['latch:wallet:passkey-options'](p),
    async 'latch:wallet:dismiss-approval'() {
      review.dismissed += 1
      settle?.(LatchError.of('transaction_exited'))
    },
    'latch:wallet:send-calls'(params) {
      review.shown.push(params)
      return new Promise((resolve, reject) => {
        settle = (r) => {
          settle = null
          if (r instanceof LatchError) reject(r)
          else resolve(r)
        }
      })
    },
  }
  // Through the shared serialization, as penpal carries the frame's answers and errors.
  provideWalletFrame(remoteMethods<WalletMethods & WalletBatchMethods>(exposeMethods(frame)))
  return review
}

function withWallet(base: User): User {
  const wallet = walletAccount(ADDRESS, 'user-passcode')
  return { ...base, linkedAccounts: [...base.linkedAccounts, wallet], wallet }
}

/** What the API answers by default: the app pays on chain 1 only. */
const PAID_ON_1 = {
  '0x1': { atomic: { status: 'supported' }, paymasterService: { supported: true } },
}

function signedIn(base: User = withWallet(user())): Harness {
  api.on('GET /calls/capabilities', { body: PAID_ON_1 })
  const harness = renderModal(api)
  act(() => {
    harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, base)
  })
  return harness
}

/** Waits, in real time, for the frame's review to have been shown `n` times (lazy chunks load first). */
const shownCount = (review: Review, n: number) =>
  waitFor(() => expect(review.shown).toHaveLength(n), { timeout: 10_000 })

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

const batch = (overrides: Record<string, unknown> = {}) => ({
  version: '2.0.0',
  chainId: '0x1',
  from: ADDRESS,
  atomicRequired: true,
  calls: [{ to: TOKEN, data: TRANSFER }],
  capabilities: { paymasterService: { url: 'https://ignored.example' } },
  ...overrides,
})

describe('wallet_sendCalls', () => {
  test('behavior: the frame shows the checked batch on the send screen; its answer resolves with { id } and the modal closes', async () => {
    const review = frameWithReview()
    signedIn()
    const sent = methods().rpc(1, 'wallet_sendCalls', [batch()])
    await shownCount(review, 1)
    expect(screen.getByTestId('wallet-batch-slot')).toBeTruthy()
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN')
    const shown = review.shown[0]
    expect(shown).toMatchObject({
      address: ADDRESS,
      chainId: 1,
      calls: [{ to: TOKEN, value: '0', data: TRANSFER }],
      locale: 'en',
    })
    expect(shown?.accessToken).toBeTruthy()
    review.answer({ id: BATCH_ID })
    await expect(sent).resolves.toEqual({ id: BATCH_ID })
    expect(store.getState().open).toBe(false)
  })

  test('error: closing the review rejects with transaction_exited (4001 in the provider), and a click that crossed the close in flight is answered no (the frame sends nothing); a refusal stays on screen and closing then rejects with its own code', async () => {
    const review = frameWithReview()
    signedIn()
    const closed = rejection(methods().rpc(1, 'wallet_sendCalls', [batch()]))
    await shownCount(review, 1)
    fireEvent.click(screen.getByTestId('close-button'))
    expect(await closed).toMatchObject({ code: 'transaction_exited' })
    expect(review.dismissed).toBeGreaterThan(0)
    expect(batchSendingHeard()).toBe(false)

    const refused = rejection(methods().rpc(1, 'wallet_sendCalls', [batch()]))
    await shownCount(review, 2)
    const reason = 'Call 1 calls function 0xa9059cbb of 0x3434…, which the app does not pay for'
    review.answer(
      new LatchError({
        code: 'sponsor_policy_refused',
        type: 'api_error',
        message: reason,
        retryable: false,
      }),
    )
    // The refusal in the visitor's words, the server's reason (which call) under it.
    const shown = await screen.findByTestId('batch-error')
    expect([...shown.querySelectorAll('p')].map((p) => p.textContent)).toEqual([
      'This app does not pay the network fee for these calls. Nothing was sent.',
      reason,
    ])
    fireEvent.click(screen.getByTestId('close-button'))
    expect(await refused).toMatchObject({ code: 'sponsor_policy_refused', message: reason })
  })

  test('behavior: once the frame says the click started sending, closing is refused (button, Escape, the host, another request) until its answer: an id resolves { id }, a refusal shows and closing then rejects with its code', async () => {
    const review = frameWithReview()
    signedIn()
    const m = methods()
    const sent = m.rpc(1, 'wallet_sendCalls', [batch()])
    await shownCount(review, 1)
    // What the frame asks on the visitor's click (penpal's batchSending, no arguments).
    act(() => expect(batchSendingHeard()).toBe(true))
    const close = screen.getByTestId('close-button') as HTMLButtonElement
    expect(close.disabled).toBe(true)
    fireEvent.click(close)
    fireEvent.keyDown(document, { key: 'Escape' })
    await m.close()
    expect(store.getState().open).toBe(true)
    expect(review.dismissed).toBe(0)
    expect(await rejection(m.signMessage('meanwhile'))).toMatchObject({
      message: 'Request already pending',
    })
    review.answer({ id: BATCH_ID })
    await expect(sent).resolves.toEqual({ id: BATCH_ID })
    expect(store.getState().closeBlocked).toBe(false)

    const refused = rejection(m.rpc(1, 'wallet_sendCalls', [batch()]))
    await shownCount(review, 2)
    act(() => expect(batchSendingHeard()).toBe(true))
    fireEvent.keyDown(document, { key: 'Escape' })
    expect(store.getState().open).toBe(true)
    review.answer(
      new LatchError({
        code: 'sponsor_budget_exhausted',
        type: 'api_error',
        message: 'The app’s budget for today is spent',
        retryable: false,
      }),
    )
    expect((await screen.findByTestId('batch-error')).textContent).toBe(
      'This app’s budget for your network fees is used up for today. Nothing was sent; try again tomorrow.',
    )
    expect((screen.getByTestId('close-button') as HTMLButtonElement).disabled).toBe(false)
    fireEvent.keyDown(document, { key: 'Escape' })
    expect(await refused).toMatchObject({ code: 'sponsor_budget_exhausted' })
    expect(store.getState().open).toBe(false)
  })

  test('error: a batch that fails its checks, another account, an unknown required capability or a user without a wallet is refused and nothing opens', async () => {
    const review = frameWithReview()
    const harness = signedIn()
    const m = methods()
    const cases: [unknown, string][] = [
      [batch({ calls: [] }), 'invalid_request_arguments'],
      [batch({ calls: Array.from({ length: 17 }, () => ({ to: TOKEN })) }), 'calls_too_many'],
      [batch({ calls: [{ to: 'not an address' }] }), 'invalid_request_arguments'],
      [batch({ calls: [{ to: TOKEN, value: 12 }] }), 'invalid_request_arguments'],
      [batch({ calls: [{ to: TOKEN, data: '0x123' }] }), 'invalid_request_arguments'],
      [batch({ from: TOKEN }), 'rpc_unauthorized'],
      [batch({ chainId: '0x2a' }), 'calls_chain_unsupported'],
      [
        batch({ capabilities: { auxiliaryFunds: { supported: true } } }),
        'calls_capability_unsupported',
      ],
      // One of the app's chains where it does not pay: no batch is sent there, atomic or not.
      [batch({ chainId: '0xa' }), 'calls_atomic_unsupported'],
      [batch({ chainId: '0xa', atomicRequired: false }), 'calls_chain_unsupported'],
      [batch({ id: 'c0ffee' }), 'invalid_request_arguments'],
      [batch({ id: `0x${'ab'.repeat(4097)}` }), 'invalid_request_arguments'],
    ]
    for (const [param, code] of cases) {
      expect(await rejection(m.rpc(1, 'wallet_sendCalls', [param]))).toMatchObject({ code })
    }
    // An unknown capability the dapp marked optional is ignored; the dapp's own id reaches the
    // frame (which hands it to the API).
    const optional = m.rpc(1, 'wallet_sendCalls', [
      batch({ capabilities: { auxiliaryFunds: { optional: true } }, id: '0xC0FFEE' }),
    ])
    await shownCount(review, 1)
    expect(review.shown[0]?.id).toBe('0xc0ffee')
    review.answer({ id: BATCH_ID })
    await expect(optional).resolves.toEqual({ id: BATCH_ID })
    cleanup()
    signedIn(user())
    expect(await rejection(m.rpc(1, 'wallet_sendCalls', [batch()]))).toMatchObject({
      code: 'sign_without_wallet',
    })
    expect(review.shown).toHaveLength(1)
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen').map((c) => c.args[0])).toEqual([
      true,
      false,
    ])
  })
})

describe('the other EIP-5792 methods', () => {
  test("behavior: wallet_getCapabilities answers the API's capabilities, only the chains asked for when given", async () => {
    frameWithReview()
    signedIn()
    const capabilities = {
      '0x1': { atomic: { status: 'supported' }, paymasterService: { supported: true } },
      '0x7a69': { atomic: { status: 'supported' }, paymasterService: { supported: true } },
    }
    api.on('GET /calls/capabilities', { body: capabilities })
    const m = methods()
    // The app's other chains say atomic batches are unsupported there.
    const unpaid = Object.fromEntries(
      DEFAULT_CHAIN_IDS.filter((id) => id !== 1 && id !== 0x7a69).map((id) => [
        `0x${id.toString(16)}`,
        { atomic: { status: 'unsupported' } },
      ]),
    )
    expect(Object.keys(unpaid)).toContain('0xa')
    await expect(m.rpc(1, 'wallet_getCapabilities', [ADDRESS])).resolves.toEqual({
      ...capabilities,
      ...unpaid,
    })
    await expect(
      m.rpc(1, 'wallet_getCapabilities', [ADDRESS, ['0x7a69', '0xa', '0x2a']]),
    ).resolves.toEqual({
      '0x7a69': capabilities['0x7a69'],
      '0xa': { atomic: { status: 'unsupported' } },
    })
    expect(api.calls('GET /calls/capabilities')[0]?.headers.authorization).toMatch(/^Bearer /)
    expect(await rejection(m.rpc(1, 'wallet_getCapabilities', [TOKEN]))).toMatchObject({
      code: 'rpc_unauthorized',
    })
  })

  test("behavior: wallet_getCallsStatus answers the API's status; wallet_showCallsStatus resolves with nothing shown; a bad id, an unknown batch and an unknown method are refused", async () => {
    frameWithReview()
    signedIn()
    const status = {
      version: '2.0.0',
      id: BATCH_ID,
      chainId: '0x1',
      status: 200,
      atomic: true,
      receipts: [],
    }
    api.on(`GET /calls/${BATCH_ID}`, { body: status })
    const m = methods()
    await expect(
      m.rpc(1, 'wallet_getCallsStatus', [BATCH_ID.toUpperCase().replace('0X', '0x')]),
    ).resolves.toEqual(status)
    await expect(m.rpc(1, 'wallet_showCallsStatus', [BATCH_ID])).resolves.toBeNull()
    expect(store.getState().open).toBe(false)
    expect(await rejection(m.rpc(1, 'wallet_getCallsStatus', ['c0ffee']))).toMatchObject({
      code: 'invalid_request_arguments',
    })
    const other = `0x${'cd'.repeat(32)}`
    api.on(`GET /calls/${other}`, apiError(404, 'not_found', 'No batch with this id'))
    expect(await rejection(m.rpc(1, 'wallet_getCallsStatus', [other]))).toMatchObject({
      code: 'calls_unknown_id',
    })
    expect(await rejection(m.rpc(1, 'wallet_showCallsStatus', [other]))).toMatchObject({
      code: 'calls_unknown_id',
    })
    expect(await rejection(m.rpc(1, 'wallet_sendTransaction', []))).toMatchObject({
      code: 'rpc_unsupported_method',
    })
  })
})
