/**
 * Chain reads over the API's JSON-RPC proxy (`POST /api/v1/chains/{chainId}/rpc`): balance,
 * gas estimate, fee data, nonce, send a signed transaction and wait for its receipt. Tiny and
 * without dependencies, as the wallet frame (80 KB budget) and the modal's send screen load it.
 */
import { API_PREFIX } from './api.ts'
import { fromApiError, parseRetryAfter } from './errors/http.ts'
import { LatchError } from './errors/latch-error.ts'
import { rpcErrorCode } from './errors/serialize.ts'
import { APP_ID_HEADER, CLIENT_HEADER } from './protocol/http.ts'
import type { Hex, Log, TransactionReceipt } from './types.ts'

/** The methods the proxy forwards; any other answers JSON-RPC -32601. */
export const CHAIN_RPC_METHODS = [
  'eth_chainId',
  'net_version',
  'eth_blockNumber',
  'eth_getBalance',
  'eth_getCode',
  'eth_getTransactionCount',
  'eth_estimateGas',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_feeHistory',
  'eth_getBlockByNumber',
  'eth_call',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_sendRawTransaction',
] as const

export interface JsonRpcError {
  code: number
  message: string
  data?: unknown
}

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: string | number | null; result: unknown; error?: undefined }
  | { jsonrpc: '2.0'; id: string | number | null; error: JsonRpcError; result?: undefined }

/** One JSON-RPC call on one chain; throws a LatchError for a node's error. */
export type ChainRpc = (method: string, params?: unknown[]) => Promise<unknown>

export function chainRpcPath(chainId: number): string {
  return `${API_PREFIX}/chains/${chainId}/rpc`
}

/**
 * A node's JSON-RPC error as a LatchError; "insufficient funds" becomes insufficient_funds.
 * The node's own code and a hex `data` (a revert's return data) travel as `rpcCode` and
 * `details`, so an EIP-1193 caller can answer what the node said (3 and the data for a revert).
 */
export function nodeError(error: JsonRpcError): LatchError {
  if (/insufficient funds/i.test(error.message)) return LatchError.of('insufficient_funds')
  const data = typeof error.data === 'string' && /^0x[0-9a-fA-F]*$/.test(error.data)
  return LatchError.of(rpcErrorCode(error.code) ?? 'rpc_internal', {
    message: error.message,
    rpcCode: error.code,
    ...(data && { details: error.data as string }),
  })
}

export interface ProxyRpcOptions {
  /** The API's origin, e.g. https://api.example.com. */
  apiUrl: string
  appId: string
  chainId: number
  accessToken: string
  clientName: string
  fetcher?: typeof fetch
  timeoutMs?: number
}

/** A ChainRpc over the API's proxy. */
export function proxyRpc(o: ProxyRpcOptions): ChainRpc {
  const fetcher = o.fetcher ?? fetch
  let next = 1
  return async (method, params = []) => {
    let res: Response
    try {
      res = await fetcher(`${o.apiUrl}${chainRpcPath(o.chainId)}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${o.accessToken}`,
          [APP_ID_HEADER]: o.appId,
          [CLIENT_HEADER]: o.clientName,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: next++, method, params }),
        signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
      })
    } catch (e) {
      throw LatchError.of('rpc_internal', { message: 'Could not reach the Latch API', cause: e })
    }
    const body: unknown = await res.json().catch(() => null)
    if (body && typeof body === 'object' && 'jsonrpc' in body) {
      const answer = body as JsonRpcResponse
      if (answer.error) throw nodeError(answer.error)
      return answer.result
    }
    throw fromApiError(res.status, body, parseRetryAfter(res.headers.get('retry-after')))
  }
}

export function hexOf(n: bigint | number): Hex {
  return `0x${n.toString(16)}`
}

function big(v: unknown, what: string): bigint {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]+$/.test(v)) {
    throw LatchError.of('rpc_internal', { message: `The node answered an invalid ${what}` })
  }
  return BigInt(v)
}

/** Fees as ethers v6's getFeeData reads them. */
export interface FeeData {
  gasPrice: bigint | null
  /** Null on a chain without a base fee (legacy gas price only). */
  maxFeePerGas: bigint | null
  maxPriorityFeePerGas: bigint | null
}

/** ethers v6's priority fee when the node has no eth_maxPriorityFeePerGas: 1 gwei. */
export const DEFAULT_PRIORITY_FEE = 1_000_000_000n

/** The fields eth_estimateGas and eth_call take, as hex. */
export interface CallRequest {
  from?: Hex
  to?: Hex
  data?: Hex
  value?: Hex
}

export interface WaitOptions {
  /** Gives up with rpc_resource_not_found after this long (default 120 s). */
  timeoutMs?: number
  pollMs?: number
}

type RawReceipt = Record<string, unknown> & { logs?: Record<string, unknown>[] }

function num(v: unknown): number {
  return typeof v === 'string' && v.startsWith('0x') ? Number(BigInt(v)) : 0
}
function dec(v: unknown): string {
  return typeof v === 'string' && v.startsWith('0x') ? BigInt(v).toString() : '0'
}

/** A node's receipt as `TransactionReceipt` (numbers for indexes, decimal strings for gas). */
export function toReceipt(raw: RawReceipt, latestBlock: number): TransactionReceipt {
  const blockNumber = num(raw.blockNumber)
  const log = (l: Record<string, unknown>): Log => ({
    address: l.address as Hex,
    topics: (l.topics ?? []) as Hex[],
    data: l.data as Hex,
    blockNumber: num(l.blockNumber),
    transactionHash: l.transactionHash as Hex,
    transactionIndex: num(l.transactionIndex),
    blockHash: l.blockHash as Hex,
    logIndex: num(l.logIndex),
    removed: l.removed === true,
  })
  const status = raw.status === undefined ? undefined : num(raw.status)
  return {
    to: (raw.to ?? null) as Hex | null,
    from: raw.from as Hex,
    contractAddress: (raw.contractAddress ?? null) as Hex | null,
    transactionIndex: num(raw.transactionIndex),
    ...(typeof raw.root === 'string' && { root: raw.root as Hex }),
    logsBloom: raw.logsBloom as Hex,
    blockHash: raw.blockHash as Hex,
    transactionHash: raw.transactionHash as Hex,
    logs: (raw.logs ?? []).map(log),
    blockNumber,
    confirmations: Math.max(1, latestBlock - blockNumber + 1),
    // Receipts carry status from the Byzantium fork on, the root before it.
    byzantium: status !== undefined,
    type: num(raw.type),
    ...(status !== undefined && { status }),
    gasUsed: dec(raw.gasUsed),
    cumulativeGasUsed: dec(raw.cumulativeGasUsed),
    effectiveGasPrice: dec(raw.effectiveGasPrice),
  }
}

export function chainClient(rpc: ChainRpc) {
  const client = {
    rpc,
    async chainId(): Promise<number> {
      return Number(big(await rpc('eth_chainId'), 'chain id'))
    },
    async blockNumber(): Promise<number> {
      return Number(big(await rpc('eth_blockNumber'), 'block number'))
    },
    async balance(address: Hex): Promise<bigint> {
      return big(await rpc('eth_getBalance', [address, 'latest']), 'balance')
    },
    /** The next nonce, counting transactions still pending. */
    async nonce(address: Hex): Promise<number> {
      return Number(big(await rpc('eth_getTransactionCount', [address, 'pending']), 'nonce'))
    },
    async estimateGas(request: CallRequest): Promise<bigint> {
      return big(await rpc('eth_estimateGas', [request]), 'gas estimate')
    },
    /**
     * As ethers v6: the gas price, and where the latest block has a non-zero base fee, a priority fee
     * (the node's eth_maxPriorityFeePerGas, else 1 gwei) and a max fee of twice the base fee
     * plus the priority fee.
     */
    async feeData(): Promise<FeeData> {
      const [block, gasPrice, priority] = await Promise.all([
        rpc('eth_getBlockByNumber', ['latest', false]) as Promise<Record<string, unknown> | null>,
        rpc('eth_gasPrice').then(
          (v) => big(v, 'gas price'),
          () => null,
        ),
        rpc('eth_maxPriorityFeePerGas').then(
          (v) => big(v, 'priority fee'),
          () => null,
        ),
      ])
      const baseFee = block?.baseFeePerGas
      // A base fee of 0 counts as none, as ethers v6 reads it: such a chain gets legacy fees.
      if (typeof baseFee !== 'string' || big(baseFee, 'base fee') === 0n) {
        return { gasPrice, maxFeePerGas: null, maxPriorityFeePerGas: null }
      }
      const maxPriorityFeePerGas = priority ?? DEFAULT_PRIORITY_FEE
      return {
        gasPrice,
        maxFeePerGas: big(baseFee, 'base fee') * 2n + maxPriorityFeePerGas,
        maxPriorityFeePerGas,
      }
    },
    async sendRawTransaction(signed: Hex): Promise<Hex> {
      return (await rpc('eth_sendRawTransaction', [signed])) as Hex
    },
    async receipt(hash: Hex): Promise<TransactionReceipt | null> {
      const raw = (await rpc('eth_getTransactionReceipt', [hash])) as RawReceipt | null
      if (!raw) return null
      return toReceipt(raw, await client.blockNumber())
    },
    /** Polls for the receipt until it exists or `timeoutMs` passes. */
    async waitForReceipt(hash: Hex, opts: WaitOptions = {}): Promise<TransactionReceipt> {
      const timeoutMs = opts.timeoutMs ?? 120_000
      const pollMs = opts.pollMs ?? 1_000
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const receipt = await client.receipt(hash)
        if (receipt) return receipt
        const left = deadline - Date.now()
        if (left <= 0) {
          throw LatchError.of('rpc_resource_not_found', {
            message: `No receipt for ${hash} within ${Math.round(timeoutMs / 1000)} s`,
          })
        }
        await new Promise((r) => setTimeout(r, Math.min(pollMs, left)))
      }
    },
  }
  return client
}

export type ChainClient = ReturnType<typeof chainClient>
