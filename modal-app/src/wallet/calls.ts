/**
 * EIP-5792 for the host's provider (ModalMethods.rpc, by method name; chain-read.ts): `wallet_sendCalls` opens the wallet
 * frame's own review of the batch (docs/behaviour.md, "Batches the app pays for"), whose visitor
 * click signs it and sends it to the app's sponsor; the caller gets the batch's id. The other
 * three read the API (`/calls/capabilities`, `/calls/{id}`). Loaded lazily. Refusals EIP-5792
 * names carry its codes through the provider: 5700 a required capability unknown here, 5710 a
 * chain where the wallet sends no batch (the app does not pay there), 5730 an unknown batch id,
 * 5740 more calls than a batch takes, 5760 atomicity required where no batch can be sent.
 */
import { type Hex, isSupportedChainId, LatchError, toLatchError } from '@latch/shared'
import { requestPending, startFlow } from '../flow/flow.ts'
import { runtime } from '../runtime.ts'
import { type BatchRequest, store } from '../store.ts'
import { appChains } from './chain-read.ts'
import { passGate, usableWallet, walletAccessToken } from './sign.ts'

/** The frame takes 1 to 16 calls; checked here too, so nothing opens for a batch it refuses. */
const MAX_CALLS = 16
const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/
const BYTES = /^0x([0-9a-fA-F]{2})*$/
/** EIP-5792's batch id: 0x and hex, at most 4096 bytes (Latch's are 32). */
const BATCH_ID = /^0x[0-9a-fA-F]{1,8192}$/

const invalid = (message: string) => LatchError.of('invalid_request_arguments', { message })

const record = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null

/** A hex chain id of one of the app's chains, or calls_chain_unsupported (5710). */
function chainOf(value: unknown): number {
  const id = typeof value === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(value) ? Number(value) : NaN
  if (!isSupportedChainId(id, appChains())) {
    throw LatchError.of('calls_chain_unsupported', {
      message: `The app does not use chain ${String(value).slice(0, 20)}`,
    })
  }
  return id
}

/** The capabilities the wallet honours: the app pays (paymasterService), always atomic. */
const KNOWN_CAPABILITIES = new Set(['paymasterService', 'atomic'])

/**
 * `wallet_sendCalls`'s one parameter checked and put in the frame's form: the wallet's own
 * address (or none), one of the app's chains, 1 to 16 calls `{to, value?, data?}`. A capability
 * the wallet does not know and the dapp did not mark optional is refused, never ignored.
 */
export function batchRequest(param: unknown, wallet: Hex): BatchRequest {
  const p = record(param)
  if (!p) throw invalid('wallet_sendCalls takes one object')
  if (
    p.from !== undefined &&
    (typeof p.from !== 'string' || p.from.toLowerCase() !== wallet.toLowerCase())
  ) {
    throw LatchError.of('rpc_unauthorized')
  }
  const chainId = chainOf(p.chainId)
  if (p.id !== undefined && (typeof p.id !== 'string' || !BATCH_ID.test(p.id))) {
    throw invalid('wallet_sendCalls: id is 0x and hex, at most 4096 bytes')
  }
  if (p.atomicRequired !== undefined && typeof p.atomicRequired !== 'boolean') {
    throw invalid('wallet_sendCalls: atomicRequired is a boolean')
  }
  const capabilities = p.capabilities === undefined ? {} : record(p.capabilities)
  if (!capabilities) throw invalid('wallet_sendCalls: capabilities is an object')
  for (const [name, value] of Object.entries(capabilities)) {
    if (!KNOWN_CAPABILITIES.has(name) && record(value)?.optional !== true) {
      throw LatchError.of('calls_capability_unsupported', {
        message: `The in-app wallet does not support the capability ${name.slice(0, 64)}`,
      })
    }
  }
  if (!Array.isArray(p.calls) || p.calls.length < 1) {
    throw invalid(`wallet_sendCalls: 1 to ${MAX_CALLS} calls`)
  }
  if (p.calls.length > MAX_CALLS) {
    throw LatchError.of('calls_too_many', {
      message: `A batch takes at most ${MAX_CALLS} calls, not ${p.calls.length}`,
    })
  }
  const calls = p.calls.map((c: unknown, i) => {
    const call = record(c)
    const n = i + 1
    if (!call || typeof call.to !== 'string' || !ADDRESS.test(call.to)) {
      throw invalid(`wallet_sendCalls: call ${n} needs a "to" address`)
    }
    if (
      call.value !== undefined &&
      (typeof call.value !== 'string' || !QUANTITY.test(call.value))
    ) {
      throw invalid(`wallet_sendCalls: call ${n}'s value is a hex quantity`)
    }
    if (call.data !== undefined && (typeof call.data !== 'string' || !BYTES.test(call.data))) {
      throw invalid(`wallet_sendCalls: call ${n}'s data is hex bytes`)
    }
    return {
      to: call.to as Hex,
      value: BigInt((call.value as string | undefined) ?? '0x0').toString(),
      data: (call.data as string | undefined) ?? '0x',
    }
  })
  return { chainId, calls, ...(typeof p.id === 'string' && { id: p.id.toLowerCase() }) }
}

/**
 * `wallet_sendCalls`: the connecting gate, then the frame's review on the send screen. Resolves
 * with `{ id }` once the visitor's click there sent it; closing first rejects with
 * transaction_exited (4001), and after a refusal shown on screen with that refusal.
 */
export function sendCallsFlow(param: unknown): Promise<{ id: string }> {
  let batch: BatchRequest
  try {
    if (!store.getState().app) throw LatchError.of('something_went_wrong')
    // Another request on screen keeps it: this one is refused, that one is unchanged.
    if (requestPending({ kind: 'send-transaction' })) throw LatchError.of('rpc_request_pending')
    batch = batchRequest(param, usableWallet().address)
  } catch (e) {
    return Promise.reject(e)
  }
  const atomicRequired = record(param)?.atomicRequired === true
  return sponsoredChains().then((sponsored) => {
    // A batch goes only through the app's sponsor: where it has none, nothing opens and the
    // dapp hears why (it may send the calls one by one with eth_sendTransaction instead).
    if (!sponsored.has(batch.chainId)) {
      const why = `This app does not pay network fees on chain ${batch.chainId}, and the in-app wallet sends batches of calls only where the app pays them (wallet_getCapabilities lists those chains)`
      throw LatchError.of(atomicRequired ? 'calls_atomic_unsupported' : 'calls_chain_unsupported', {
        message: why,
      })
    }
    if (requestPending({ kind: 'send-transaction' })) throw LatchError.of('rpc_request_pending')
    const { promise } = startFlow<string>(
      { kind: 'send-transaction', batch },
      'EMBEDDED_WALLET_CONNECTING_SCREEN',
    )
    store.setState({ transaction: null })
    void passGate('EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN')
    return promise.then((id) => ({ id }))
  })
}

/** A GET of the API with the session's token. */
async function read<T>(path: string): Promise<T> {
  const bearer = await walletAccessToken()
  return runtime().api.request<T>(path, undefined, { method: 'GET', bearer })
}

/** The chains where the app's sponsor pays, from the API's capabilities. */
async function sponsoredChains(): Promise<Set<number>> {
  const all = await read<Record<string, unknown>>('/calls/capabilities')
  return new Set(Object.keys(all).map(Number))
}

/**
 * `wallet_getCapabilities` ([address?, chainIds?]): per hex chain id where the app pays,
 * `atomic` and `paymasterService`; the app's other chains (or those asked) say atomic is
 * unsupported there, since no batch is sent where the app does not pay. Only the asked chains
 * when given.
 */
async function capabilities(params: readonly unknown[]): Promise<Record<string, unknown>> {
  const [address, chains] = params
  const wallet = usableWallet().address
  if (
    address !== undefined &&
    (typeof address !== 'string' || address.toLowerCase() !== wallet.toLowerCase())
  ) {
    throw LatchError.of('rpc_unauthorized')
  }
  if (chains !== undefined && !Array.isArray(chains)) {
    throw invalid('wallet_getCapabilities: the chain ids are a list')
  }
  const all = await read<Record<string, unknown>>('/calls/capabilities')
  const paid = new Set(Object.keys(all).map(Number))
  const asked = chains?.map((c) =>
    typeof c === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(c) ? Number(c) : NaN,
  )
  const out: Record<string, unknown> = asked
    ? Object.fromEntries(Object.entries(all).filter(([id]) => asked.includes(Number(id))))
    : { ...all }
  for (const id of asked ?? appChains() ?? []) {
    if (!paid.has(id) && isSupportedChainId(id, appChains())) {
      out[`0x${id.toString(16)}`] = { atomic: { status: 'unsupported' } }
    }
  }
  return out
}

/** A batch id as the API keys it. */
function batchId(value: unknown, method: string): string {
  if (typeof value !== 'string' || !BATCH_ID.test(value)) {
    throw invalid(`${method}: the id is 0x and hex, at most 4096 bytes`)
  }
  return value.toLowerCase()
}

/** A batch's status; an id the API knows of no batch of this user's is calls_unknown_id (5730). */
async function status(id: string): Promise<unknown> {
  try {
    return await read(`/calls/${id}`)
  } catch (e) {
    if (toLatchError(e).is('not_found')) throw LatchError.of('calls_unknown_id')
    throw e
  }
}

/** The four EIP-5792 methods, by name; anything else is rpc_unsupported_method. */
export async function walletCalls(method: unknown, params: unknown): Promise<unknown> {
  const list = params === undefined ? [] : Array.isArray(params) ? params : [params]
  switch (method) {
    case 'wallet_sendCalls':
      return sendCallsFlow(list[0])
    case 'wallet_getCapabilities':
      return capabilities(list)
    case 'wallet_getCallsStatus':
      usableWallet()
      return status(batchId(list[0], method))
    case 'wallet_showCallsStatus':
      // The status is the dapp's to show (wallet_getCallsStatus): checked to be the user's, no screen.
      usableWallet()
      await status(batchId(list[0], method))
      return null
    default:
      throw LatchError.of('rpc_unsupported_method', {
        message: `The in-app wallet does not support ${String(method).slice(0, 64)}`,
      })
  }
}
