/**
 * Transaction requests: only known fields, addresses, bytes and quantities well formed, the
 * family named or told by its fee fields; and the signature of a complete one (legacy with
 * EIP-155, EIP-2930, EIP-1559), serialized by ethers' Transaction.
 */
import {
  type Hex,
  isQuantity,
  LatchError,
  type Quantity,
  toBigInt,
  validateChainId,
} from '@latch/shared'
import { Transaction } from 'ethers/transaction'
import { bad, checkedAddress, HEX_BYTES, isWallet, paramList } from './call.ts'
import { signDigest } from './message.ts'

export type AccessList = { address: Hex; storageKeys: Hex[] }[]

/** The fields a transaction request may carry; any other (authorizationList, input) is refused. */
const TX_FIELDS = new Set([
  'from',
  'to',
  'data',
  'value',
  'nonce',
  'gasLimit',
  'gasPrice',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'accessList',
  'chainId',
  'type',
])

const MAX_UINT256 = (1n << 256n) - 1n

function quantity(value: unknown, field: string): bigint {
  if (!isQuantity(value)) {
    throw bad(`Invalid transaction request: ${field} must be a number, bigint or hex string`)
  }
  const n = toBigInt(value as Quantity)
  if (n > MAX_UINT256) throw bad(`Invalid transaction request: ${field} is too large`)
  return n
}

export function optionalQuantity(value: unknown, field: string): bigint | undefined {
  return value === undefined || value === null ? undefined : quantity(value, field)
}

export function accessList(value: unknown): AccessList {
  const refused = bad(
    'Invalid transaction request: accessList must list addresses and 32-byte keys',
  )
  if (!Array.isArray(value)) throw refused
  for (const e of value as unknown[]) {
    if (typeof e !== 'object' || e === null || Array.isArray(e)) throw refused
    const entry = e as Record<string, unknown>
    if (Object.keys(entry).some((k) => k !== 'address' && k !== 'storageKeys')) throw refused
    checkedAddress(entry.address, 'Invalid transaction request: an accessList address')
    const keys = entry.storageKeys
    if (
      !Array.isArray(keys) ||
      !keys.every((k) => typeof k === 'string' && /^0x[0-9a-fA-F]{64}$/.test(k))
    ) {
      throw refused
    }
  }
  return value as AccessList
}

/** A request after its shape is checked: only known fields, addresses and bytes well formed. */
export type TxInput = {
  from?: Hex
  to?: Hex
  data?: Hex
  value?: unknown
  nonce?: unknown
  gasLimit?: unknown
  gasPrice?: unknown
  maxFeePerGas?: unknown
  maxPriorityFeePerGas?: unknown
  accessList?: unknown
  chainId?: unknown
  type?: unknown
}

export function txObject(params: unknown, method: string, wallet: Hex): TxInput {
  const [tx] = paramList(params, method, '[transaction request]', 1)
  if (typeof tx !== 'object' || tx === null || Array.isArray(tx)) {
    throw bad(`${method} takes [transaction request]`)
  }
  const record = tx as Record<string, unknown>
  for (const [field, v] of Object.entries(record)) {
    if (!TX_FIELDS.has(field) && v !== undefined) {
      throw bad(`Invalid transaction request: unknown field ${field.slice(0, 64)}`)
    }
  }
  const given = (v: unknown) => v !== undefined && v !== null
  if (given(record.from) && !isWallet(record.from, wallet, 'Invalid transaction request: from')) {
    throw bad("Invalid transaction request: from is not this wallet's address")
  }
  if (given(record.to)) checkedAddress(record.to, 'Invalid transaction request: to')
  if (given(record.data) && (typeof record.data !== 'string' || !HEX_BYTES.test(record.data))) {
    throw bad('Invalid transaction request: data must be 0x-prefixed hex bytes')
  }
  return record as TxInput
}

/** The family the request names, if any: 0, 1 or 2 as a number or a hex quantity. */
export function explicitType(tx: TxInput): 0 | 1 | 2 | undefined {
  const t = tx.type
  if (t === undefined || t === null) return undefined
  let n: number
  if (typeof t === 'number' && Number.isSafeInteger(t) && t >= 0) n = t
  else if (typeof t === 'string' && /^0x[0-9a-fA-F]{1,2}$/.test(t)) n = Number.parseInt(t, 16)
  else throw bad('Invalid transaction request: type must be a number or a hex quantity')
  if (n === 0 || n === 1 || n === 2) return n
  throw LatchError.of('unsupported_transaction')
}

/** The family of a complete request: named, else told by its fee fields. */
function txType(tx: TxInput): 0 | 1 | 2 {
  const type = explicitType(tx)
  if (type !== undefined) return type
  if (tx.maxFeePerGas != null || tx.maxPriorityFeePerGas != null) return 2
  return tx.accessList != null ? 1 : 0
}

export function chainIdOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw bad('Invalid transaction request: chainId must be a number')
  }
  const chain = validateChainId(value)
  if (!chain.ok) throw chain.error
  return chain.value
}

/** The checked fields of a transaction, whatever its family. */
export interface TxFields {
  chainId: bigint
  nonce: number
  gasLimit: bigint
  to: Hex | null
  value: bigint
  data: Hex
  type: 0 | 1 | 2
  gasPrice: bigint
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  accessList: AccessList
}

export function signableFields(tx: TxInput): TxFields {
  const type = txType(tx)
  const need = (field: keyof TxInput): bigint => {
    const v = optionalQuantity(tx[field], String(field))
    if (v === undefined) {
      throw bad(`Invalid transaction request: ${String(field)} is required to sign`)
    }
    return v
  }
  const nonce = need('nonce')
  if (nonce > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw bad('Invalid transaction request: nonce is too large')
  }
  if (type !== 2 && (tx.maxFeePerGas != null || tx.maxPriorityFeePerGas != null)) {
    throw bad(`Invalid transaction request: a type ${type} transaction takes gasPrice`)
  }
  if (type === 2 && tx.gasPrice != null) {
    throw bad('Invalid transaction request: a type 2 transaction takes maxFeePerGas, not gasPrice')
  }
  if (type === 0 && tx.accessList != null) {
    throw bad('Invalid transaction request: a type 0 transaction has no accessList')
  }
  const fields: TxFields = {
    chainId: BigInt(chainIdOf(tx.chainId)),
    nonce: Number(nonce),
    gasLimit: need('gasLimit'),
    to: tx.to ?? null,
    value: optionalQuantity(tx.value, 'value') ?? 0n,
    data: tx.data ?? '0x',
    type,
    gasPrice: type === 2 ? 0n : need('gasPrice'),
    maxFeePerGas: type === 2 ? need('maxFeePerGas') : 0n,
    maxPriorityFeePerGas: type === 2 ? need('maxPriorityFeePerGas') : 0n,
    accessList: type === 0 || tx.accessList == null ? [] : accessList(tx.accessList),
  }
  if (fields.maxPriorityFeePerGas > fields.maxFeePerGas) {
    throw bad('Invalid transaction request: maxPriorityFeePerGas is above maxFeePerGas')
  }
  return fields
}

/**
 * The signed, serialized transaction (what eth_sendRawTransaction takes): ethers' Transaction
 * serializes it (EIP-155 for a legacy one) and a SigningKey made for it signs its hash.
 */
export function signTransactionFields(f: TxFields, key: Uint8Array): Hex {
  const tx = Transaction.from({
    type: f.type,
    chainId: f.chainId,
    nonce: f.nonce,
    gasLimit: f.gasLimit,
    to: f.to,
    value: f.value,
    data: f.data,
    ...(f.type === 2
      ? { maxFeePerGas: f.maxFeePerGas, maxPriorityFeePerGas: f.maxPriorityFeePerGas }
      : { gasPrice: f.gasPrice }),
    ...(f.type !== 0 && { accessList: f.accessList }),
  })
  tx.signature = signDigest(tx.unsignedHash, key)
  return tx.serialized as Hex
}
