/**
 * The in-app wallet as an EIP-1193 provider on the host page, for ethers, viem or wagmi. It holds
 * no key and signs nothing itself: accounts come from the signed-in user, signatures and
 * transactions go through the modal's sign and review screens (the visitor decides each), and
 * chain reads through the modal to the API's chain proxy. Errors are EIP-1193's
 * ProviderRpcError shape ({ code, message, data }); `data.latchCode` names the Latch error.
 */
import {
  ANNOUNCED_ICON,
  ANNOUNCED_NAME,
  ANNOUNCED_RDNS,
  BaseError,
  CHAIN_RPC_METHODS,
  DEFAULT_CHAIN_ID,
  defaultChainOf,
  type EthereumProviderEvent,
  type EthereumProviderOptions,
  type EthereumRequest,
  embeddedWallet,
  type Hex,
  isSupportedChainId,
  type LatchClient,
  type LatchEthereumProvider,
  type ModalMethods,
  type ProviderRpcError,
  type TransactionRequest,
  type User,
} from '@latch/shared'
import type { FlowExit } from '../calls.ts'

/** A quick call to the modal (the SDK's timeout applies). */
export type Call = <T>(run: (remote: ModalMethods) => Promise<T>) => Promise<T>
/** A flow in the modal (a screen the visitor answers; no timeout). */
export type Flow = <T>(run: (remote: ModalMethods) => Promise<T>, exit: FlowExit) => Promise<T>

/** The methods read from the chain: the API proxy's allowlist without the broadcast. */
const READS = new Set<string>(CHAIN_RPC_METHODS.filter((m) => m !== 'eth_sendRawTransaction'))

export class ProviderError extends BaseError implements ProviderRpcError {
  override readonly name = 'ProviderRpcError'
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message)
  }
}

const unauthorized = (message = 'The requested account has not been authorized by the user.') =>
  new ProviderError(4100, message)
const invalidParams = (message: string) => new ProviderError(-32602, message)

/** The EIP-1193 codes of the Latch errors a request can end with. */
const CODES: Record<string, number> = {
  signature_rejected: 4001,
  transaction_exited: 4001,
  export_exited: 4001,
  login_exited: 4001,
  rpc_user_rejected: 4001,
  not_authenticated: 4100,
  sign_without_wallet: 4100,
  rpc_unauthorized: 4100,
  rpc_unsupported_method: 4200,
  invalid_request_arguments: -32602,
  unsupported_chain: 4901,
  // EIP-5792's, from wallet_sendCalls and wallet_getCallsStatus (modal-app/src/wallet/calls.ts).
  calls_capability_unsupported: 5700,
  calls_chain_unsupported: 5710,
  calls_duplicate_id: 5720,
  calls_unknown_id: 5730,
  calls_too_many: 5740,
  calls_atomic_unsupported: 5760,
}

/** A rejection from the SDK (a LatchError) as a ProviderRpcError; anything else is -32603. */
export function toProviderError(e: unknown): ProviderError {
  if (e instanceof ProviderError) return e
  const err = (e ?? {}) as {
    code?: unknown
    rpcCode?: unknown
    message?: unknown
    details?: unknown
  }
  const latchCode = typeof err.code === 'string' ? err.code : undefined
  const code =
    (latchCode ? CODES[latchCode] : undefined) ??
    (typeof err.rpcCode === 'number' ? err.rpcCode : -32603)
  const message = typeof err.message === 'string' ? err.message : 'Internal error'
  // The hint travels too (-32002's 'Don’t see your wallet modal? …'): a dapp may show it.
  const details = typeof err.details === 'string' ? err.details : undefined
  return new ProviderError(
    code,
    message,
    latchCode ? (details ? { latchCode, details } : { latchCode }) : undefined,
  )
}

const toHex = (n: number): Hex => `0x${n.toString(16)}`
const HEX_NUMBER = /^0x[0-9a-fA-F]{1,16}$/

/**
 * A hex chain id of one of the app's chains (`chains`; without it, any of `CHAINS`), or the
 * 4901 error.
 */
function supportedChain(value: unknown, chains?: readonly number[]): number {
  const id = typeof value === 'string' && HEX_NUMBER.test(value) ? Number(value) : Number.NaN
  if (!isSupportedChainId(id, chains)) {
    throw new ProviderError(4901, 'Unsupported chainId', { chainId: value })
  }
  return id
}

const list = (params: EthereumRequest['params']): readonly unknown[] =>
  params === undefined ? [] : Array.isArray(params) ? params : [params]

/** The fields of an eth_sendTransaction object that keep their meaning when copied as they are. */
const COPIED = ['to', 'from', 'value', 'gasPrice', 'maxFeePerGas', 'maxPriorityFeePerGas'] as const
/** Every field an eth_sendTransaction object may carry; any other is refused. */
const KNOWN = new Set<string>([
  ...COPIED,
  'data',
  'input',
  'gas',
  'gasLimit',
  'nonce',
  'type',
  'chainId',
  'accessList',
])
const given = (v: unknown) => v !== undefined && v !== null

/**
 * An eth_sendTransaction object as the modal's TransactionRequest (JSON-RPC calls gasLimit gas
 * and data input). A field that would change what is sent if it were dropped (an access list, an
 * EIP-7702 authorization list, blob fields, anything unknown) is refused, never dropped: the
 * visitor signs exactly what the dapp asked for or nothing.
 */
export function toTransactionRequest(
  tx: unknown,
  chainId: number,
  chains?: readonly number[],
): TransactionRequest {
  if (typeof tx !== 'object' || tx === null || Array.isArray(tx)) {
    throw invalidParams('eth_sendTransaction takes one transaction object')
  }
  const t = tx as Record<string, unknown>
  for (const name of Object.keys(t)) {
    if (!KNOWN.has(name) && given(t[name])) {
      throw invalidParams(`eth_sendTransaction: ${name.slice(0, 64)} is not supported`)
    }
  }
  // An empty access list is the same transaction as none.
  if (given(t.accessList) && !(Array.isArray(t.accessList) && t.accessList.length === 0)) {
    throw invalidParams('eth_sendTransaction: accessList is not supported')
  }
  const request: TransactionRequest = { chainId }
  for (const name of COPIED) {
    if (given(t[name])) (request as Record<string, unknown>)[name] = t[name]
  }
  const data = t.input ?? t.data
  if (given(t.input) && given(t.data) && t.input !== t.data) {
    throw invalidParams('eth_sendTransaction: input and data differ')
  }
  if (given(data)) request.data = data as Hex
  const gas = t.gas ?? t.gasLimit
  if (given(t.gas) && given(t.gasLimit) && t.gas !== t.gasLimit) {
    throw invalidParams('eth_sendTransaction: gas and gasLimit differ')
  }
  if (given(gas)) request.gasLimit = gas as Hex
  for (const name of ['nonce', 'type', 'chainId'] as const) {
    const v = t[name]
    if (!given(v)) continue
    if (typeof v === 'number' && Number.isSafeInteger(v)) request[name] = v
    else if (typeof v === 'string' && HEX_NUMBER.test(v)) request[name] = Number(v)
    else throw invalidParams(`eth_sendTransaction: ${name} must be a hex quantity`)
  }
  if (request.chainId !== chainId) supportedChain(toHex(request.chainId ?? 0), chains)
  return request
}

/**
 * Makes the provider over a client; `call` and `flow` reach the modal as the client's own
 * methods do. `options.announce` announces it through EIP-6963.
 */
export function createProvider(
  client: LatchClient,
  call: Call,
  flow: Flow,
  options: EthereumProviderOptions = {},
): LatchEthereumProvider {
  let chainId = DEFAULT_CHAIN_ID
  // The app's chains, from the modal; unknown (a modal that cannot say), any chain Latch knows,
  // and the modal and the API's chain proxy still refuse the app's others.
  let chains: readonly number[] | undefined
  let accounts: Hex[] = []
  const listeners = new Map<string, Set<(payload: never) => void>>()

  const emit = (event: EthereumProviderEvent, payload: unknown) => {
    for (const listener of listeners.get(event) ?? []) {
      try {
        ;(listener as (p: unknown) => void)(payload)
      } catch (e) {
        // A listener's failure is the page's: the others still hear the event.
        console.error(e)
      }
    }
  }

  /** Accounts follow the signed-in user's in-app wallet: login, logout and user changes. */
  const follow = (user: User | null) => {
    const wallet = user ? embeddedWallet(user.linkedAccounts) : undefined
    const next = wallet ? [wallet.address] : []
    if (next[0]?.toLowerCase() === accounts[0]?.toLowerCase()) return
    const had = accounts.length > 0
    accounts = next
    if (!had) emit('connect', { chainId: toHex(chainId) })
    emit('accountsChanged', [...next])
    if (had && !next.length) emit('disconnect', new ProviderError(4900, 'Disconnected'))
  }
  // A 'user' event is newer than the first getUser() answer, which may arrive after it.
  let heard = false
  client.on('user', (user) => {
    heard = true
    follow(user)
  })
  // What the modal knows now: every request waits for it, so the first eth_accounts is right.
  const initial = Promise.all([
    // Asked first: 'connect' from follow() carries the chain the app starts on.
    Promise.resolve()
      .then(() => call((r) => r.chains()))
      .then(
        (list) => {
          if (Array.isArray(list) && list.length) {
            chains = list
            chainId = defaultChainOf(list)
          }
        },
        () => {},
      ),
    client.getUser(),
  ]).then(
    ([, user]) => {
      if (!heard) follow(user)
    },
    () => {},
  )

  /** The signing address must be this wallet's, and there must be one. */
  const own = (address: unknown) => {
    if (!accounts.length) throw unauthorized('Not signed in, or the user has no in-app wallet')
    if (typeof address !== 'string' || address.toLowerCase() !== accounts[0]?.toLowerCase()) {
      throw unauthorized()
    }
  }

  const handle = async (method: string, params: readonly unknown[]): Promise<unknown> => {
    switch (method) {
      case 'eth_accounts':
        return [...accounts]
      case 'eth_requestAccounts':
        if (!accounts.length) {
          // Signed out: the request to connect is the sign-in (closing it is a 4001).
          if (!(await client.getUser())) await client.login()
          follow(await client.getUser())
          if (!accounts.length) throw unauthorized('The signed-in user has no in-app wallet')
        }
        return [...accounts]
      case 'eth_chainId':
        return toHex(chainId)
      case 'net_version':
        return String(chainId)
      case 'wallet_switchEthereumChain': {
        const next = supportedChain(
          (params[0] as { chainId?: unknown } | undefined)?.chainId,
          chains,
        )
        if (next !== chainId) {
          chainId = next
          emit('chainChanged', toHex(next))
        }
        return null
      }
      case 'personal_sign':
      case 'eth_sign': {
        const [message, address] = method === 'eth_sign' ? [params[1], params[0]] : params
        own(address)
        if (typeof message !== 'string') throw invalidParams(`${method}: the message is a string`)
        return flow((r) => r.signMessage(message), 'modal_unreachable')
      }
      case 'eth_signTypedData_v4': {
        own(params[0])
        const typedData = params[1]
        return flow((r) => r.signTypedData(typedData), 'modal_unreachable')
      }
      case 'eth_sendTransaction': {
        const request = toTransactionRequest(params[0], chainId, chains)
        own(request.from ?? accounts[0])
        const receipt = await flow((r) => r.sendTransaction(request), 'modal_unreachable')
        return receipt.transactionHash
      }
      // EIP-5792, by name through the modal's rpc (modal-app/src/wallet/calls.ts): the batch
      // waits on the visitor's review in the wallet frame, the other three read the API.
      case 'wallet_sendCalls':
        return flow((r) => r.rpc(chainId, method, [...params]), 'modal_unreachable')
      case 'wallet_getCapabilities':
      case 'wallet_getCallsStatus':
      case 'wallet_showCallsStatus':
        return call((r) => r.rpc(chainId, method, [...params]))
      default:
        if (READS.has(method)) return call((r) => r.rpc(chainId, method, [...params]))
        throw new ProviderError(4200, `The in-app wallet does not support ${method.slice(0, 64)}`)
    }
  }

  const provider: LatchEthereumProvider = {
    isLatch: true,
    async request(args: EthereumRequest) {
      const method = (args as Partial<EthereumRequest> | null)?.method
      if (typeof method !== 'string') throw new ProviderError(-32600, 'A request needs a method')
      try {
        await initial
        return await handle(method, list(args.params))
      } catch (e) {
        throw toProviderError(e)
      }
    },
    on(event, listener) {
      const set = listeners.get(event) ?? new Set()
      set.add(listener)
      listeners.set(event, set)
      return provider
    },
    removeListener(event, listener) {
      listeners.get(event)?.delete(listener)
      return provider
    },
  }

  if (options.announce) announce(provider)
  known.set(provider, initial)
  return provider
}

/** Each provider's first look at the signed-in user (see providerFor). */
const known = new WeakMap<LatchEthereumProvider, Promise<void>>()

const announced = new WeakSet<LatchEthereumProvider>()

/**
 * EIP-6963: announces the provider now and on every `eip6963:requestProvider`, so libraries
 * that list the page's wallets (wagmi, RainbowKit, Web3Modal) list the in-app wallet.
 */
export function announce(provider: LatchEthereumProvider, target: Window = window): void {
  if (announced.has(provider)) return
  announced.add(provider)
  const info = Object.freeze({
    uuid: crypto.randomUUID(),
    name: ANNOUNCED_NAME,
    icon: ANNOUNCED_ICON,
    rdns: ANNOUNCED_RDNS,
  })
  const detail = Object.freeze({ info, provider })
  const send = () => target.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail }))
  target.addEventListener('eip6963:requestProvider', send)
  send()
}

const providers = new WeakMap<LatchClient, LatchEthereumProvider>()

/**
 * The client's one provider: made on the first call, answered again after (the options of the
 * first call apply; a later `announce` announces it then). Answered once the provider knows the
 * signed-in user: its accounts are then right from the start, and a page that adds its
 * listeners next hears no late 'connect' for a visitor who was signed in all along.
 */
export async function providerFor(
  client: LatchClient,
  call: Call,
  flow: Flow,
  options: EthereumProviderOptions = {},
): Promise<LatchEthereumProvider> {
  let provider = providers.get(client)
  if (!provider) {
    provider = createProvider(client, call, flow, options)
    providers.set(client, provider)
  } else if (options.announce && !announced.has(provider)) {
    announce(provider)
  }
  await known.get(provider)
  return provider
}
