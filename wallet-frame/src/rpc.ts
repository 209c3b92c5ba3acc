/**
 * The frame's `latch:wallet:rpc`: sign a message (EIP-191), sign typed data (EIP-712), fill a
 * transaction request as ethers v6 populates one, and sign a transaction (legacy with EIP-155,
 * EIP-2930, EIP-1559). The key is rebuilt from its shares for each signature and zeroed after;
 * chain reads go through the API's proxy. Whatever the modal asks is signed: the modal's review
 * screens are where the user decides (README.md, "What the modal can make the frame sign").
 */
import {
  type ChainClient,
  type FeeData,
  getChain,
  type Hex,
  hexOf,
  isQuantity,
  LatchError,
  type Quantity,
  type TransactionRequest,
  toBigInt,
} from '@latch/shared'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, hexToBytes } from '@noble/hashes/utils.js'
import { type TypedData, TypedDataError, typedDataHash } from './eip712.ts'

/** What an rpc call needs of the wallet: its key for the length of one operation. */
export interface KeyHolder {
  withKey<T>(
    params: { address: Hex; accessToken: string },
    use: (key: Uint8Array) => T | Promise<T>,
  ): Promise<T>
}

export interface RpcDeps {
  wallet: KeyHolder
  /** Chain reads for one chain, with the caller's access token (the proxy needs it). */
  chain(chainId: number, accessToken: string): ChainClient
  /** The chain of a request that names none. */
  defaultChainId: number
}

export interface RpcCall {
  address: Hex
  accessToken: string
  request: { method: string; params?: unknown }
}

/** A populated request: quantities as hex, so it crosses penpal and JSON alike. */
export interface PopulatedTransaction {
  from: Hex
  to?: Hex
  data?: Hex
  value: Hex
  nonce: number
  gasLimit: Hex
  chainId: number
  type: 0 | 1 | 2
  gasPrice?: Hex
  maxFeePerGas?: Hex
  maxPriorityFeePerGas?: Hex
  accessList?: AccessList
}

type AccessList = { address: Hex; storageKeys: Hex[] }[]

function bad(message: string): LatchError {
  return LatchError.of('invalid_request_arguments', { message })
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const HEX_BYTES = /^0x([0-9a-fA-F]{2})*$/

function sameAddress(a: unknown, wallet: Hex): boolean {
  return typeof a === 'string' && a.toLowerCase() === wallet.toLowerCase()
}

function paramList(params: unknown, method: string, shape: string, length: number): unknown[] {
  if (!Array.isArray(params) || params.length < length) {
    throw bad(`${method} takes ${shape}`)
  }
  return params
}

// Message signing (EIP-191 personal_sign).

/** A hex string is its bytes; any other string is its UTF-8. */
function messageBytes(message: unknown): Uint8Array {
  if (typeof message !== 'string' || message.length === 0) {
    throw LatchError.of('invalid_sign_message')
  }
  if (HEX_BYTES.test(message) && message.length > 2) return hexToBytes(message.slice(2))
  return new TextEncoder().encode(message)
}

export function personalMessageHash(message: Uint8Array): Uint8Array {
  const prefix = new TextEncoder().encode(`\x19Ethereum Signed Message:\n${message.length}`)
  return keccak_256(concatBytes(prefix, message))
}

/** An EIP-191 personal_sign signature of `message` (r ‖ s ‖ v, v 27 or 28). */
export function signPersonalMessage(message: Uint8Array, key: Uint8Array): Hex {
  return signHash(personalMessageHash(message), key)
}

/** r ‖ s ‖ v with v 27 or 28, as personal_sign and eth_signTypedData_v4 answer. */
function signHash(hash: Uint8Array, key: Uint8Array): Hex {
  const sig = secp256k1.sign(hash, key, { prehash: false, format: 'recovered' })
  const v = (sig[0] ?? 0) + 27
  return `0x${bytesToHex(sig.subarray(1))}${v.toString(16)}`
}

// Typed data (EIP-712).

function typedData(raw: unknown): TypedData {
  let value = raw
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw)
    } catch {
      throw bad('eth_signTypedData_v4: the typed data is not valid JSON')
    }
  }
  const t = value as Record<string, unknown> | null
  if (
    typeof t !== 'object' ||
    t === null ||
    typeof t.types !== 'object' ||
    t.types === null ||
    typeof t.primaryType !== 'string' ||
    typeof t.message !== 'object' ||
    t.message === null
  ) {
    throw bad('eth_signTypedData_v4: typed data needs types, primaryType, domain and message')
  }
  const domain = t.domain ?? {}
  if (typeof domain !== 'object' || domain === null) {
    throw bad('eth_signTypedData_v4: the domain is not an object')
  }
  return { ...t, domain } as unknown as TypedData
}

function hashOf(data: TypedData): Uint8Array {
  try {
    return typedDataHash(data)
  } catch (e) {
    if (e instanceof TypedDataError) throw bad(`eth_signTypedData_v4: ${e.message}`)
    throw bad('eth_signTypedData_v4: the typed data cannot be encoded')
  }
}

// Transactions.

type RlpItem = Uint8Array | RlpItem[]

function rlpLength(length: number, offset: number): Uint8Array {
  if (length < 56) return Uint8Array.of(offset + length)
  const bytes = quantityBytes(BigInt(length))
  return concatBytes(Uint8Array.of(offset + 55 + bytes.length), bytes)
}

/** Recursive length prefix (the Ethereum yellow paper, appendix B). */
export function rlp(item: RlpItem): Uint8Array {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && (item[0] ?? 0) < 0x80) return item
    return concatBytes(rlpLength(item.length, 0x80), item)
  }
  const body = concatBytes(...item.map(rlp))
  return concatBytes(rlpLength(body.length, 0xc0), body)
}

/** A non-negative integer as its shortest big-endian bytes (zero is empty). */
function quantityBytes(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array()
  let hex = n.toString(16)
  if (hex.length % 2) hex = `0${hex}`
  return hexToBytes(hex)
}

const MAX_UINT256 = (1n << 256n) - 1n

function quantity(value: unknown, field: string): bigint {
  if (!isQuantity(value)) {
    throw bad(`Invalid transaction request: ${field} must be a number, bigint or hex string`)
  }
  const n = toBigInt(value as Quantity)
  if (n > MAX_UINT256) throw bad(`Invalid transaction request: ${field} is too large`)
  return n
}

function optionalQuantity(value: unknown, field: string): bigint | undefined {
  return value === undefined || value === null ? undefined : quantity(value, field)
}

function accessList(value: unknown): AccessList {
  if (value === undefined || value === null) return []
  if (
    !Array.isArray(value) ||
    !value.every(
      (e) =>
        typeof e === 'object' &&
        e !== null &&
        ADDRESS.test((e as { address?: unknown }).address as string) &&
        Array.isArray((e as { storageKeys?: unknown }).storageKeys) &&
        (e as { storageKeys: unknown[] }).storageKeys.every(
          (k) => typeof k === 'string' && /^0x[0-9a-fA-F]{64}$/.test(k),
        ),
    )
  ) {
    throw bad('Invalid transaction request: accessList must list addresses and 32-byte keys')
  }
  return value as AccessList
}

/** The checked fields of a transaction request, whatever its family. */
interface TxFields {
  chainId: number
  nonce: bigint
  gasLimit: bigint
  to: Uint8Array
  value: bigint
  data: Uint8Array
  type: 0 | 1 | 2
  gasPrice: bigint
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  accessList: AccessList
}

type TxInput = TransactionRequest & { accessList?: unknown; [field: string]: unknown }

function txObject(params: unknown, method: string): TxInput {
  const [tx] = paramList(params, method, '[transaction request]', 1)
  if (typeof tx !== 'object' || tx === null || Array.isArray(tx)) {
    throw bad(`${method} takes [transaction request]`)
  }
  return tx as TxInput
}

/** The family the request names, if any; only 0, 1 and 2 are known. */
function explicitType(tx: TxInput): 0 | 1 | 2 | undefined {
  const type = tx.type === undefined || tx.type === null ? undefined : Number(tx.type)
  if (type === undefined || type === 0 || type === 1 || type === 2) return type
  throw LatchError.of('unsupported_transaction')
}

/** The family of a complete request: named, else told by its fee fields. */
function txType(tx: TxInput): 0 | 1 | 2 {
  const type = explicitType(tx)
  if (type !== undefined) return type
  if (tx.maxFeePerGas != null || tx.maxPriorityFeePerGas != null) return 2
  return tx.accessList ? 1 : 0
}

function checkCommon(tx: TxInput, wallet: Hex): void {
  if (tx.from !== undefined && tx.from !== null && !sameAddress(tx.from, wallet)) {
    throw bad("Invalid transaction request: from is not this wallet's address")
  }
  if (tx.to !== undefined && tx.to !== null && !ADDRESS.test(tx.to)) {
    throw bad('Invalid transaction request: to must be a 0x-prefixed 20-byte address')
  }
  if (tx.data !== undefined && tx.data !== null && !HEX_BYTES.test(tx.data)) {
    throw bad('Invalid transaction request: data must be 0x-prefixed hex bytes')
  }
}

function chainIdOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw bad('Invalid transaction request: chainId must be a number')
  }
  if (!getChain(value)) throw LatchError.of('unsupported_chain')
  return value
}

function signableFields(tx: TxInput, wallet: Hex): TxFields {
  checkCommon(tx, wallet)
  const type = txType(tx)
  const need = (field: keyof TxInput): bigint => {
    const v = optionalQuantity(tx[field], String(field))
    if (v === undefined) {
      throw bad(`Invalid transaction request: ${String(field)} is required to sign`)
    }
    return v
  }
  const nonce = need('nonce')
  if (nonce >= 2n ** 64n - 1n) throw bad('Invalid transaction request: nonce is too large')
  if (type !== 2 && (tx.maxFeePerGas != null || tx.maxPriorityFeePerGas != null)) {
    throw bad(`Invalid transaction request: a type ${type} transaction takes gasPrice`)
  }
  if (type === 2 && tx.gasPrice != null) {
    throw bad('Invalid transaction request: a type 2 transaction takes maxFeePerGas, not gasPrice')
  }
  const fields: TxFields = {
    chainId: chainIdOf(tx.chainId),
    nonce,
    gasLimit: need('gasLimit'),
    to: tx.to ? hexToBytes(tx.to.slice(2)) : new Uint8Array(),
    value: optionalQuantity(tx.value, 'value') ?? 0n,
    data: tx.data ? hexToBytes(tx.data.slice(2)) : new Uint8Array(),
    type,
    gasPrice: type === 2 ? 0n : need('gasPrice'),
    maxFeePerGas: type === 2 ? need('maxFeePerGas') : 0n,
    maxPriorityFeePerGas: type === 2 ? need('maxPriorityFeePerGas') : 0n,
    accessList: type === 0 ? [] : accessList(tx.accessList),
  }
  if (type === 0 && tx.accessList) {
    throw bad('Invalid transaction request: a type 0 transaction has no accessList')
  }
  if (fields.maxPriorityFeePerGas > fields.maxFeePerGas) {
    throw bad('Invalid transaction request: maxPriorityFeePerGas is above maxFeePerGas')
  }
  return fields
}

/** The RLP list of a transaction's fields before its signature, per family. */
function unsignedList(f: TxFields): RlpItem[] {
  const q = quantityBytes
  const list: RlpItem[] = f.accessList.map((e) => [
    hexToBytes(e.address.slice(2)),
    e.storageKeys.map((k) => hexToBytes(k.slice(2))),
  ])
  if (f.type === 2) {
    return [
      q(BigInt(f.chainId)),
      q(f.nonce),
      q(f.maxPriorityFeePerGas),
      q(f.maxFeePerGas),
      q(f.gasLimit),
      f.to,
      q(f.value),
      f.data,
      list,
    ]
  }
  if (f.type === 1) {
    return [
      q(BigInt(f.chainId)),
      q(f.nonce),
      q(f.gasPrice),
      q(f.gasLimit),
      f.to,
      q(f.value),
      f.data,
      list,
    ]
  }
  return [q(f.nonce), q(f.gasPrice), q(f.gasLimit), f.to, q(f.value), f.data]
}

/** The signed, serialized transaction (what eth_sendRawTransaction takes). */
export function signTransactionFields(f: TxFields, key: Uint8Array): Hex {
  const fields = unsignedList(f)
  const typed = (bytes: Uint8Array) =>
    f.type === 0 ? bytes : concatBytes(Uint8Array.of(f.type), bytes)
  // EIP-155: a legacy transaction signs its chain id with two empty fields.
  const preimage =
    f.type === 0
      ? rlp([...fields, quantityBytes(BigInt(f.chainId)), new Uint8Array(), new Uint8Array()])
      : typed(rlp(fields))
  const sig = secp256k1.sign(keccak_256(preimage), key, { prehash: false, format: 'recovered' })
  const recovery = BigInt(sig[0] ?? 0)
  const v = f.type === 0 ? recovery + BigInt(f.chainId) * 2n + 35n : recovery
  const r = quantityBytes(BigInt(`0x${bytesToHex(sig.subarray(1, 33))}`))
  const s = quantityBytes(BigInt(`0x${bytesToHex(sig.subarray(33, 65))}`))
  return `0x${bytesToHex(typed(rlp([...fields, quantityBytes(v), r, s])))}`
}

/**
 * The fee fields as ethers v6's populateTransaction chooses them. `type` is the family asked
 * for (undefined when none); `fees` is read only when something is missing.
 */
function chooseFees(
  type: 0 | 1 | 2 | undefined,
  given: { gasPrice?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint },
  fees: FeeData | null,
  hasAccessList: boolean,
): Pick<PopulatedTransaction, 'type' | 'gasPrice' | 'maxFeePerGas' | 'maxPriorityFeePerGas'> & {
  maxCost: bigint
} {
  const has1559 = given.maxFeePerGas !== undefined || given.maxPriorityFeePerGas !== undefined
  if (given.gasPrice !== undefined && (type === 2 || has1559)) {
    throw bad('Invalid transaction request: a type 2 transaction takes maxFeePerGas, not gasPrice')
  }
  if ((type === 0 || type === 1) && has1559) {
    throw bad(`Invalid transaction request: a type ${type} transaction takes gasPrice`)
  }
  const legacy = (family: 0 | 1, gasPrice: bigint | null | undefined) => {
    if (gasPrice == null) throw bad('The chain answered no gas price')
    return { type: family, gasPrice: hexOf(gasPrice), maxCost: gasPrice }
  }
  const eip1559 = (maxFee: bigint | null | undefined, priority: bigint | null | undefined) => {
    if (maxFee == null || priority == null) {
      throw bad('This chain has no base fee: send a legacy transaction with gasPrice')
    }
    // A given max fee below the chain's priority fee caps it (a priority above it is invalid).
    const capped = priority > maxFee ? maxFee : priority
    return {
      type: 2 as const,
      maxFeePerGas: hexOf(maxFee),
      maxPriorityFeePerGas: hexOf(capped),
      maxCost: maxFee,
    }
  }
  if (type === 0 || type === 1) return legacy(type, given.gasPrice ?? fees?.gasPrice)
  if (type === 2 || has1559) {
    return eip1559(
      given.maxFeePerGas ?? fees?.maxFeePerGas,
      given.maxPriorityFeePerGas ?? fees?.maxPriorityFeePerGas,
    )
  }
  // No family asked for: EIP-1559 where the chain has a base fee (a legacy gasPrice given then
  // serves as both fees, as ethers v6 does), else legacy.
  if (fees?.maxFeePerGas != null && fees.maxPriorityFeePerGas != null) {
    return given.gasPrice !== undefined
      ? eip1559(given.gasPrice, given.gasPrice)
      : eip1559(fees.maxFeePerGas, fees.maxPriorityFeePerGas)
  }
  return legacy(hasAccessList ? 1 : 0, given.gasPrice ?? fees?.gasPrice)
}

async function populate(deps: RpcDeps, call: RpcCall, tx: TxInput): Promise<PopulatedTransaction> {
  const from = call.address
  checkCommon(tx, from)
  const type = explicitType(tx)
  const chainId = chainIdOf(tx.chainId ?? deps.defaultChainId)
  const chain = deps.chain(chainId, call.accessToken)
  const value = optionalQuantity(tx.value, 'value') ?? 0n
  const given = {
    nonce: optionalQuantity(tx.nonce, 'nonce'),
    gasLimit: optionalQuantity(tx.gasLimit, 'gasLimit'),
    gasPrice: optionalQuantity(tx.gasPrice, 'gasPrice'),
    maxFeePerGas: optionalQuantity(tx.maxFeePerGas, 'maxFeePerGas'),
    maxPriorityFeePerGas: optionalQuantity(tx.maxPriorityFeePerGas, 'maxPriorityFeePerGas'),
  }
  const list = tx.accessList == null ? undefined : accessList(tx.accessList)
  // Fee data is read unless the request already names every fee its family needs.
  const complete =
    ((type === 0 || type === 1) && given.gasPrice !== undefined) ||
    (type !== 0 &&
      type !== 1 &&
      given.maxFeePerGas !== undefined &&
      given.maxPriorityFeePerGas !== undefined)
  const [nonce, gasLimit, fees, balance] = await Promise.all([
    given.nonce ?? chain.nonce(from).then(BigInt),
    given.gasLimit ??
      chain.estimateGas({
        from,
        ...(tx.to && { to: tx.to }),
        ...(tx.data && { data: tx.data }),
        value: hexOf(value),
      }),
    complete ? null : chain.feeData(),
    chain.balance(from),
  ])
  const { maxCost, ...feeFields } = chooseFees(type, given, fees, list !== undefined)
  if (value + gasLimit * maxCost > balance) throw LatchError.of('insufficient_funds')
  return {
    from,
    ...(tx.to && { to: tx.to }),
    ...(tx.data && { data: tx.data }),
    value: hexOf(value),
    nonce: Number(nonce),
    gasLimit: hexOf(gasLimit),
    chainId,
    ...feeFields,
    ...(list && { accessList: list }),
  }
}

/** Answers one `latch:wallet:rpc` call: `{ response }` or a LatchError. */
export function walletRpc(deps: RpcDeps) {
  return async (call: RpcCall): Promise<{ response: unknown }> => {
    const { method, params } = call.request
    const key = { address: call.address, accessToken: call.accessToken }
    switch (method) {
      case 'eth_sign':
      case 'personal_sign': {
        // eth_sign names the address first (SPEC section 7); personal_sign the message first.
        const list = paramList(params, method, '[address, message]', 2)
        const [address, message] = method === 'eth_sign' ? list : [list[1], list[0]]
        if (!sameAddress(address, call.address)) {
          throw bad(`${method}: the address is not this wallet's`)
        }
        const hash = personalMessageHash(messageBytes(message))
        return { response: await deps.wallet.withKey(key, (k) => signHash(hash, k)) }
      }
      case 'eth_signTypedData_v4': {
        const [address, data] = paramList(params, method, '[address, typed data]', 2)
        if (!sameAddress(address, call.address)) {
          throw bad(`${method}: the address is not this wallet's`)
        }
        const hash = hashOf(typedData(data))
        return { response: await deps.wallet.withKey(key, (k) => signHash(hash, k)) }
      }
      case 'eth_populateTransactionRequest':
        return { response: await populate(deps, call, txObject(params, method)) }
      case 'eth_signTransaction': {
        const fields = signableFields(txObject(params, method), call.address)
        return {
          response: await deps.wallet.withKey(key, (k) => signTransactionFields(fields, k)),
        }
      }
      default:
        throw LatchError.of('rpc_unsupported_method', {
          message: `The in-app wallet does not support ${method.slice(0, 64)}`,
        })
    }
  }
}
