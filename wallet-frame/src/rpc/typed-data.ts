/**
 * The frame's `latch:wallet:rpc`: sign a message (EIP-191), sign typed data (EIP-712), fill a
 * transaction request as ethers v6 populates one, and sign a transaction (legacy with EIP-155,
 * EIP-2930, EIP-1559). ethers encodes and signs; this file checks every input strictly first
 * (ethers coerces some values, e.g. a bool from any truthy value, and infers what it is not told),
 * so what is signed is exactly what was asked or nothing. The key is rebuilt from its shares for
 * each signature, held by a SigningKey made for that one signature, and zeroed after; chain reads
 * go through the API's proxy. Whatever the modal asks is signed: the modal's review screens are
 * where the user decides (README.md, "What the modal can make the frame sign").
 */
import {
  type ChainClient,
  type FeeData,
  type Hex,
  hexOf,
  isQuantity,
  LatchError,
  type Quantity,
  toBigInt,
  validateChainId,
  validateSignMessage,
} from '@latch/shared'
import { getAddress } from 'ethers/address'
import { SigningKey } from 'ethers/crypto'
import { hashMessage, TypedDataEncoder } from 'ethers/hash'
import { Transaction } from 'ethers/transaction'

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

/**
 * An address as given, refused unless it is 20 bytes of 0x hex and, when its letters mix cases,
 * carries a right EIP-55 checksum (a wrong one is a typo or a tampered address, never signed).
 */
export function checkedAddress(value: unknown, what: string): Hex {
  if (typeof value !== 'string' || !ADDRESS.test(value)) {
    throw bad(`${what} must be a 0x-prefixed 20-byte address`)
  }
  try {
    getAddress(value)
  } catch {
    throw bad(`${what} has mixed-case letters with a wrong EIP-55 checksum`)
  }
  return value as Hex
}

function isWallet(value: unknown, wallet: Hex, what: string): boolean {
  return checkedAddress(value, what).toLowerCase() === wallet.toLowerCase()
}

function paramList(params: unknown, method: string, shape: string, length: number): unknown[] {
  if (!Array.isArray(params) || params.length < length) {
    throw bad(`${method} takes ${shape}`)
  }
  return params
}

/**
 * Signs a 32-byte digest with a SigningKey made for this one signature. ethers keeps the key as
 * a hex string inside it, which JavaScript cannot zero: the SigningKey is dropped at return, and
 * the caller zeroes the bytes it rebuilt.
 */
function signDigest(digest: string, key: Uint8Array): ReturnType<SigningKey['sign']> {
  return new SigningKey(key).sign(digest)
}

// Message signing (EIP-191 personal_sign).

/** A hex string is its bytes; any other string is its UTF-8. */
function messageBytes(input: unknown): Uint8Array {
  const checked = validateSignMessage(input)
  if (!checked.ok) throw checked.error
  const message = checked.value
  if (HEX_BYTES.test(message) && message.length > 2) {
    return Uint8Array.from(message.slice(2).match(/../g) ?? [], (b) => Number.parseInt(b, 16))
  }
  return new TextEncoder().encode(message)
}

/** An EIP-191 personal_sign signature of `message` (r ‖ s ‖ v, v 27 or 28). */
export function signPersonalMessage(message: Uint8Array, key: Uint8Array): Hex {
  return signDigest(hashMessage(message), key).serialized as Hex
}

// Typed data (EIP-712).

interface TypedField {
  name: string
  type: string
}

export interface TypedData {
  types: Record<string, TypedField[]>
  primaryType: string
  domain: Record<string, unknown>
  message: Record<string, unknown>
}

/** The domain's fields in the order EIP-712 lists them; ethers derives the domain type this way. */
const DOMAIN_FIELDS: TypedField[] = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
  { name: 'salt', type: 'bytes32' },
]

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/
/** Atomic types with their canonical spelling only: no `uint` without width, no `uint08`. */
const ATOMIC =
  /^(address|bool|string|bytes|bytes([1-9]|[12][0-9]|3[0-2])|u?int(8|16|24|32|40|48|56|64|72|80|88|96|104|112|120|128|136|144|152|160|168|176|184|192|200|208|216|224|232|240|248|256))$/
/** Names no struct may take: anything that reads as an elementary type. */
const RESERVED = /^(address|bool|string|function|bytes\d*|u?int\d*|u?fixed.*)$/
const ARRAY_SUFFIX = /\[([1-9]\d*)?\]$/

function typedFail(why: string): LatchError {
  return bad(`eth_signTypedData_v4: ${why}`)
}

function parseTypedData(raw: unknown): TypedData {
  let value = raw
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw)
    } catch {
      throw typedFail('the typed data is not valid JSON')
    }
  }
  const t = value as Record<string, unknown> | null
  if (
    typeof t !== 'object' ||
    t === null ||
    typeof t.types !== 'object' ||
    t.types === null ||
    Array.isArray(t.types) ||
    typeof t.primaryType !== 'string' ||
    typeof t.message !== 'object' ||
    t.message === null ||
    Array.isArray(t.message)
  ) {
    throw typedFail('typed data needs types, primaryType, domain and message')
  }
  const domain = t.domain ?? {}
  if (typeof domain !== 'object' || domain === null || Array.isArray(domain)) {
    throw typedFail('the domain is not an object')
  }
  return {
    types: t.types as Record<string, TypedField[]>,
    primaryType: t.primaryType,
    domain: domain as Record<string, unknown>,
    message: t.message as Record<string, unknown>,
  }
}

/** Each struct's name and fields, refused unless every name is an identifier and every type known. */
function checkTypes(types: Record<string, unknown>): Map<string, TypedField[]> {
  const structs = new Map<string, TypedField[]>()
  for (const [name, fields] of Object.entries(types)) {
    if (name === 'EIP712Domain') continue
    if (!IDENTIFIER.test(name) || RESERVED.test(name)) {
      throw typedFail(`${JSON.stringify(name.slice(0, 64))} cannot name a struct`)
    }
    if (!Array.isArray(fields)) throw typedFail(`type ${name} is not a list of fields`)
    structs.set(name, fields as TypedField[])
  }
  for (const [name, fields] of structs) {
    const seen = new Set<string>()
    for (const f of fields as unknown[]) {
      const field = f as Partial<TypedField> | null
      if (typeof field?.name !== 'string' || typeof field.type !== 'string') {
        throw typedFail(`type ${name} has a field without a name and a type`)
      }
      if (!IDENTIFIER.test(field.name)) {
        throw typedFail(`${JSON.stringify(field.name.slice(0, 64))} cannot name a field of ${name}`)
      }
      if (seen.has(field.name)) throw typedFail(`type ${name} names ${field.name} twice`)
      seen.add(field.name)
      const base = field.type.replace(/(\[([1-9]\d*)?\])+$/, '')
      if (!ATOMIC.test(base) && !structs.has(base)) {
        throw typedFail(`unknown type ${JSON.stringify(field.type.slice(0, 64))} in ${name}`)
      }
    }
  }
  return structs
}

/** The structs `primary` uses, itself included; a struct that contains itself is refused. */
function reachable(primary: string, structs: Map<string, TypedField[]>): Map<string, TypedField[]> {
  const used = new Map<string, TypedField[]>()
  const visit = (name: string, path: string[]) => {
    if (path.includes(name)) {
      throw typedFail(`type ${name} contains itself (recursive types are not signed)`)
    }
    const fields = structs.get(name)
    if (!fields) return
    used.set(name, fields)
    for (const f of fields) visit(f.type.replace(/(\[([1-9]\d*)?\])+$/, ''), [...path, name])
  }
  visit(primary, [])
  return used
}

const INTEGER = /^(-?\d+|0x[0-9a-fA-F]+)$/
/** Half a UTF-16 pair: ethers refuses to encode it, TextEncoder would turn it into U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** One value against its type; ethers would coerce some (a bool from any truthy value). */
function checkValue(type: string, value: unknown, structs: Map<string, TypedField[]>, at: string) {
  const array = ARRAY_SUFFIX.exec(type)
  if (array) {
    if (!Array.isArray(value)) throw typedFail(`${at} is not a list`)
    if (array[1] !== undefined && value.length !== Number(array[1])) {
      throw typedFail(`${at} has ${value.length} items, not ${array[1]}`)
    }
    const inner = type.slice(0, array.index)
    for (const [i, v] of value.entries()) checkValue(inner, v, structs, `${at}[${i}]`)
    return
  }
  const fields = structs.get(type)
  if (fields) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw typedFail(`${at} is not a ${type}`)
    }
    const record = value as Record<string, unknown>
    for (const key of Object.keys(record)) {
      if (!fields.some((f) => f.name === key)) {
        throw typedFail(`${at}.${key.slice(0, 64)} is not a field of ${type}`)
      }
    }
    for (const f of fields) {
      if (record[f.name] === undefined) throw typedFail(`${at}.${f.name} is missing`)
      checkValue(f.type, record[f.name], structs, `${at}.${f.name}`)
    }
    return
  }
  if (type === 'string') {
    if (typeof value !== 'string') throw typedFail(`${at} is not a string`)
    if (LONE_SURROGATE.test(value)) throw typedFail(`${at} is not valid Unicode`)
    return
  }
  if (type === 'bool') {
    if (typeof value !== 'boolean') throw typedFail(`${at} is not true or false`)
    return
  }
  if (type === 'address') {
    checkedAddress(value, `eth_signTypedData_v4: ${at}`)
    return
  }
  if (type.startsWith('bytes')) {
    if (typeof value !== 'string' || !HEX_BYTES.test(value)) {
      throw typedFail(`${at} is not 0x hex bytes`)
    }
    const size = type === 'bytes' ? undefined : Number(type.slice(5))
    if (size !== undefined && value.length !== 2 + size * 2) {
      throw typedFail(`${at} is not ${size} bytes`)
    }
    return
  }
  // intN / uintN (ATOMIC let no other type through).
  let n: bigint
  if (typeof value === 'bigint') n = value
  else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value)
  else if (typeof value === 'string' && INTEGER.test(value)) n = BigInt(value)
  else throw typedFail(`${at} is not an integer`)
  const bits = BigInt(type.replace(/^u?int/, ''))
  const signed = type.startsWith('int')
  const min = signed ? -(1n << (bits - 1n)) : 0n
  const max = signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n
  if (n < min || n > max) throw typedFail(`${at} is out of range for ${type}`)
}

/** The domain's fields in EIP-712's order; a declared EIP712Domain must list exactly those. */
function checkDomain(data: TypedData): void {
  const present = DOMAIN_FIELDS.filter((f) => data.domain[f.name] !== undefined)
  for (const key of Object.keys(data.domain)) {
    if (!DOMAIN_FIELDS.some((f) => f.name === key)) {
      throw typedFail(`the domain has an unknown field ${key.slice(0, 64)}`)
    }
  }
  const declared = (data.types as Record<string, unknown>).EIP712Domain
  if (declared !== undefined) {
    const same =
      Array.isArray(declared) &&
      declared.length === present.length &&
      present.every((f, i) => {
        const d = declared[i] as Partial<TypedField> | null
        return d?.name === f.name && d.type === f.type
      })
    if (!same) {
      throw typedFail(
        'EIP712Domain must list the domain fields given, in the order name, version, chainId, verifyingContract, salt',
      )
    }
  }
  const domainStruct = new Map([['EIP712Domain', present]])
  checkValue('EIP712Domain', data.domain, domainStruct, 'domain')
}

/** The EIP-712 digest of checked typed data, encoded by ethers' TypedDataEncoder. */
export function typedDataDigest(raw: unknown): Hex {
  const data = parseTypedData(raw)
  const structs = checkTypes(data.types)
  checkDomain(data)
  if (data.primaryType === 'EIP712Domain') {
    throw typedFail('primaryType EIP712Domain (a domain alone) is not signed')
  }
  if (!structs.has(data.primaryType)) {
    throw typedFail(`primaryType ${data.primaryType.slice(0, 64)} is not among the types`)
  }
  // Types the message does not use change nothing in its digest; ethers refuses them, so they go.
  const used = reachable(data.primaryType, structs)
  checkValue(data.primaryType, data.message, used, 'message')
  try {
    const encoder = TypedDataEncoder.from(Object.fromEntries(used))
    if (encoder.primaryType !== data.primaryType) throw new Error('primary type differs')
    return TypedDataEncoder.hash(data.domain, Object.fromEntries(used), data.message) as Hex
  } catch {
    throw typedFail('the typed data cannot be encoded')
  }
}

// Transactions.

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

function optionalQuantity(value: unknown, field: string): bigint | undefined {
  return value === undefined || value === null ? undefined : quantity(value, field)
}

function accessList(value: unknown): AccessList {
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
type TxInput = {
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

function txObject(params: unknown, method: string, wallet: Hex): TxInput {
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
function explicitType(tx: TxInput): 0 | 1 | 2 | undefined {
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

function chainIdOf(value: unknown): number {
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

function signableFields(tx: TxInput): TxFields {
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
  // A tip the request names is kept as named: above its own max fee it is refused, not lowered.
  if (
    given.maxFeePerGas !== undefined &&
    given.maxPriorityFeePerGas !== undefined &&
    given.maxPriorityFeePerGas > given.maxFeePerGas
  ) {
    throw bad('Invalid transaction request: maxPriorityFeePerGas is above maxFeePerGas')
  }
  const legacy = (family: 0 | 1, gasPrice: bigint | null | undefined) => {
    if (gasPrice == null) throw bad('The chain answered no gas price')
    return { type: family, gasPrice: hexOf(gasPrice), maxCost: gasPrice }
  }
  const eip1559 = (maxFee: bigint | null | undefined, priority: bigint | null | undefined) => {
    if (maxFee == null || priority == null) {
      throw bad('This chain has no base fee: send a legacy transaction with gasPrice')
    }
    // A given max fee below the node's suggested tip caps that suggestion (a tip above the max
    // fee is invalid); a tip the request names never gets here above its max fee.
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
  if (type === 0 && list) {
    throw bad('Invalid transaction request: a type 0 transaction has no accessList')
  }
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
        // eth_sign names the address first, personal_sign the message first; both sign EIP-191
        // (docs/behaviour.md, "Deviations").
        const list = paramList(params, method, '[address, message]', 2)
        const [address, message] = method === 'eth_sign' ? list : [list[1], list[0]]
        if (!isWallet(address, call.address, `${method}: the address`)) {
          throw bad(`${method}: the address is not this wallet's`)
        }
        const bytes = messageBytes(message)
        return { response: await deps.wallet.withKey(key, (k) => signPersonalMessage(bytes, k)) }
      }
      case 'eth_signTypedData_v4': {
        const [address, data] = paramList(params, method, '[address, typed data]', 2)
        if (!isWallet(address, call.address, `${method}: the address`)) {
          throw bad(`${method}: the address is not this wallet's`)
        }
        const digest = typedDataDigest(data)
        return {
          response: await deps.wallet.withKey(key, (k) => signDigest(digest, k).serialized as Hex),
        }
      }
      case 'eth_populateTransactionRequest':
        return { response: await populate(deps, call, txObject(params, method, call.address)) }
      case 'eth_signTransaction': {
        const fields = signableFields(txObject(params, method, call.address))
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
