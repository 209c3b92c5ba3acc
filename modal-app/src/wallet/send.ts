/**
 * sendTransaction() (docs/behaviour.md, "EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN"): the connecting
 * gate, then EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN. The screen prepares the request (the wallet
 * frame populates it as ethers v6 does; the balance and the coin's price are read alongside), the
 * user reviews and submits, the frame signs, the modal sends it through the API's chain proxy and
 * waits for the receipt; closing is blocked meanwhile. Loaded lazily (index.ts).
 */
import {
  type ChainClient,
  CLIENT_NAME,
  chainClient,
  DEFAULT_CHAIN_ID,
  defaultChainOf,
  ERRORS,
  type Hex,
  isLatchError,
  isSupportedChainId,
  LatchError,
  proxyRpc,
  type Quantity,
  type TransactionReceipt,
  type TransactionRequest,
  type TransactionUIOptions,
  toBigInt,
  transactionUIOptionsSchema,
  validateTransactionRequest,
} from '@latch/shared'
import { blockClose, deliver } from '../flow/deliver.ts'
import { type FlowHandle, onFlow, requestPending, startFlow } from '../flow/flow.ts'
import { runtime } from '../runtime.ts'
import { store } from '../store.ts'
import { appChains } from './chain-read.ts'
import { walletStepFailed } from './flows.ts'
import { walletFrame } from './frame.ts'
import type { HexTransactionRequest, PopulatedRequest, TransactionState } from './requests.ts'
import { snapshot } from './review.ts'
import { passGate, provenOnDevice, usableWallet, walletAccessToken } from './sign.ts'

const QUANTITIES = [
  'value',
  'gasLimit',
  'gasPrice',
  'maxPriorityFeePerGas',
  'maxFeePerGas',
] as const

const FORMS = [
  ['to', /^0x[0-9a-fA-F]{40}$/, 'an address'],
  ['from', /^0x[0-9a-fA-F]{40}$/, 'an address'],
  ['data', /^0x([0-9a-fA-F]{2})*$/, 'hex bytes'],
] as const

/** The fields a host's transaction request may carry. */
const REQUEST_FIELDS = new Set<string>([
  ...QUANTITIES,
  ...FORMS.map(([field]) => field),
  'nonce',
  'type',
  'chainId',
])

const hexQuantity = (q: Quantity): Hex => `0x${toBigInt(q).toString(16)}`

/**
 * The host's request checked (quantities are numbers, bigints or hex strings; chainId one of the
 * app's chains, ServerAppConfig.chains; the family 0, 1 or 2) and put in the frame's form.
 */
export function normalizeRequest(request: TransactionRequest): HexTransactionRequest {
  if (typeof request !== 'object' || request === null) {
    throw LatchError.of('invalid_transaction')
  }
  // A field Latch does not send (an access list, an authorization list, a typo) is refused, not
  // dropped: dropping it would send another transaction than the one the host asked for.
  for (const field of Object.keys(request)) {
    const value = (request as unknown as Record<string, unknown>)[field]
    if (!REQUEST_FIELDS.has(field) && value !== undefined && value !== null) {
      throw LatchError.of('invalid_transaction', {
        message: `Invalid transaction request: ${field.slice(0, 64)} is not supported`,
      })
    }
  }
  const checked = validateTransactionRequest(request)
  if (!checked.ok) throw checked.error
  if (request.type !== undefined && ![0, 1, 2].includes(request.type)) {
    throw LatchError.of('unsupported_transaction')
  }
  for (const [field, pattern, what] of FORMS) {
    const value = request[field]
    if (value !== undefined && (typeof value !== 'string' || !pattern.test(value))) {
      throw LatchError.of('invalid_transaction', {
        message: `Invalid transaction request: ${field} must be ${what}`,
      })
    }
  }
  for (const field of ['nonce', 'type'] as const) {
    const value = request[field]
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
      throw LatchError.of('invalid_transaction', {
        message: `Invalid transaction request: ${field} must be a whole number`,
      })
    }
  }
  // Without a chain, the app's first (1 when it has it, as SPEC says); any chain outside the
  // app's list is refused before the frame or the chain proxy sees it.
  const chains = appChains()
  const chainId = request.chainId ?? (chains ? defaultChainOf(chains) : DEFAULT_CHAIN_ID)
  if (!isSupportedChainId(chainId, chains)) throw LatchError.of('unsupported_chain')
  const out: HexTransactionRequest = { chainId }
  if (request.to !== undefined) out.to = request.to
  if (request.from !== undefined) out.from = request.from
  if (request.data !== undefined) out.data = request.data
  if (request.nonce !== undefined) out.nonce = request.nonce
  if (request.type !== undefined) out.type = request.type
  for (const field of QUANTITIES) {
    const value = request[field]
    if (value !== undefined) out[field] = hexQuantity(value)
  }
  return out
}

/**
 * The send flow. A request that fails its checks, or a caller without an in-app wallet,
 * rejects before anything opens; closing before the transaction is submitted rejects with
 * 'User exited the modal before submitting the transaction'.
 */
export function sendTransactionFlow(
  request: TransactionRequest,
  options: TransactionUIOptions = {},
): Promise<TransactionReceipt> {
  let normalized: HexTransactionRequest
  try {
    if (!store.getState().app) throw LatchError.of('something_went_wrong')
    // Another request on screen keeps it: this one is refused, that one is unchanged.
    if (requestPending({ kind: 'send-transaction' })) throw LatchError.of('rpc_request_pending')
    normalized = normalizeRequest(request)
    // The options are shown (links, an image): only http(s) URLs and bounded texts pass.
    if (!transactionUIOptionsSchema.safeParse(options).success) {
      throw LatchError.of('invalid_request_arguments', {
        message: 'Invalid transaction UI options',
      })
    }
    usableWallet()
  } catch (e) {
    return Promise.reject(e)
  }
  const { promise } = startFlow<TransactionReceipt>(
    { kind: 'send-transaction' },
    'EMBEDDED_WALLET_CONNECTING_SCREEN',
  )
  store.setState({
    transaction: {
      // Frozen copies: what the screen shows is what is prepared and signed.
      request: snapshot(normalized),
      options: snapshot(options),
      status: 'idle',
      prepared: null,
      balance: null,
      usdPrice: null,
      prepareError: null,
      submitError: null,
      receipt: null,
    },
  })
  void passGate('EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN')
  return promise
}

function setTransaction(patch: Partial<TransactionState>): void {
  const current = store.getState().transaction
  if (current) store.setState({ transaction: { ...current, ...patch } })
}

/** Chain reads through the API's JSON-RPC proxy, with the session's token. */
function chain(chainId: number, accessToken: string): ChainClient {
  const { apiUrl, appId } = runtime()
  return chainClient(
    proxyRpc({
      apiUrl: apiUrl.replace(/\/+$/, ''),
      appId,
      chainId,
      accessToken,
      clientName: CLIENT_NAME,
    }),
  )
}

/** The chain's coin in US dollars; null when the server has no price (503) or it is unreadable. */
async function usdPrice(chainId: number): Promise<number | null> {
  try {
    const { usd } = await runtime().api.request<{ usd: unknown }>(
      `/token_price?chainId=${chainId}`,
      undefined,
      { method: 'GET' },
    )
    return typeof usd === 'number' && Number.isFinite(usd) && usd >= 0 ? usd : null
  } catch {
    return null
  }
}

/**
 * The text for a failed preparation (transaction_prepare_failed): the server's for insufficient
 * funds.
 */
export function prepareErrorText(e: unknown): string {
  if (isLatchError(e) && e.is('insufficient_funds')) return e.message
  return ERRORS.transaction_prepare_failed.message
}

/**
 * The text for a failed submit: its reason, i.e. what the chain's node said
 * (a JSON-RPC error, insufficient funds), else the generic retry text.
 */
export function submitErrorText(e: unknown): string {
  if (isLatchError(e) && (e.code.startsWith('rpc_') || e.is('insufficient_funds')) && e.message) {
    return e.message
  }
  return ERRORS.transaction_submit_failed.message
}

/**
 * Prepares the request on screen, once: the frame populates it (nonce, gas estimate, fees)
 * and checks it against the balance; the balance and the price are read at the same time, so
 * a request over the balance still shows the balance (in red) beside the error.
 */
export const prepareTransaction = onFlow(async function prepareTransaction(
  flow: FlowHandle,
): Promise<void> {
  const state = store.getState().transaction
  if (state?.status !== 'idle') return
  setTransaction({ status: 'preparing' })
  const [populated, balance, price] = await flow.guard(prepare(state.request))
  if (populated.status === 'rejected') {
    console.error('Latch: the transaction could not be prepared', populated.reason)
    setTransaction({
      status: 'failed',
      balance,
      usdPrice: price,
      prepareError: walletStepFailed(flow, populated.reason, prepareErrorText(populated.reason)),
    })
    return
  }
  // The populated request as shown on the review: the submit signs this frozen copy.
  setTransaction({
    status: 'ready',
    prepared: snapshot(populated.value),
    balance,
    usdPrice: price,
  })
})

/**
 * The request populated by the frame (nonce, gas, fees), the wallet's balance and the coin's
 * price, read at the same time; a failure to populate is the first's, never thrown.
 */
async function prepare(
  request: HexTransactionRequest,
): Promise<[PromiseSettledResult<PopulatedRequest>, bigint | null, number | null]> {
  try {
    const wallet = usableWallet()
    const accessToken = await walletAccessToken()
    const frame = await walletFrame()
    const reads = chain(request.chainId, accessToken)
    return await Promise.all([
      frame['latch:wallet:rpc']({
        address: wallet.address,
        accessToken,
        request: { method: 'eth_populateTransactionRequest', params: [request] },
      }).then(
        ({ response }) => ({ status: 'fulfilled', value: response as PopulatedRequest }) as const,
        (reason: unknown) => ({ status: 'rejected', reason }) as const,
      ),
      reads.balance(wallet.address).catch(() => null),
      usdPrice(request.chainId),
    ])
  } catch (e) {
    return [{ status: 'rejected', reason: e }, null, null]
  }
}

/**
 * The submit of `shown`, the frozen populated request the review rendered (one other than the
 * request's does nothing): the frame signs it, the modal sends it and waits for the receipt;
 * closing is blocked until the outcome is known. The receipt is delivered when the modal
 * closes ('All Done' or the close button); a failure shows its reason and allows a retry.
 */
export const submitTransaction = onFlow(async function submitTransaction(
  flow: FlowHandle,
  shown: PopulatedRequest,
): Promise<void> {
  const state = store.getState().transaction
  if (state?.status !== 'ready' || !state.prepared || state.prepared !== shown) return
  setTransaction({ status: 'submitting', submitError: null })
  flow.failure = null
  blockClose(flow, true)
  let receipt: TransactionReceipt
  try {
    receipt = await flow.guard(submit(shown))
  } catch (e) {
    blockClose(flow, false)
    // The share is not in the frame after all: through the gate (recovery), then back here.
    if (isLatchError(e) && e.is('wallet_not_on_device')) {
      setTransaction({ status: 'ready' })
      void passGate('EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN', true)
      return
    }
    console.error('Latch: the transaction could not be submitted', e)
    setTransaction({ status: 'ready', submitError: walletStepFailed(flow, e, submitErrorText(e)) })
    return
  }
  blockClose(flow, false)
  deliver(flow, receipt)
  setTransaction({ status: 'complete', receipt })
})

/**
 * The frame signs `prepared`, the API's chain proxy sends it, and its receipt is awaited; once
 * sent, the wallet is known to be on this device, even should the flow have changed meanwhile.
 */
async function submit(prepared: PopulatedRequest): Promise<TransactionReceipt> {
  const wallet = usableWallet()
  const accessToken = await walletAccessToken()
  const frame = await walletFrame()
  const { response } = await frame['latch:wallet:rpc']({
    address: wallet.address,
    accessToken,
    request: { method: 'eth_signTransaction', params: [prepared] },
  })
  if (typeof response !== 'string' || !/^0x[0-9a-fA-F]+$/.test(response)) {
    throw LatchError.of('transaction_submit_failed')
  }
  const reads = chain(prepared.chainId, accessToken)
  const hash = await reads.sendRawTransaction(response as Hex)
  provenOnDevice(frame, wallet.address)
  return reads.waitForReceipt(hash)
}
