/**
 * EIP-712 typed data for eth_signTypedData_v4: every type, field and value checked strictly
 * (ethers coerces some values, e.g. a bool from any truthy value), then ethers' TypedDataEncoder
 * gives the digest, so what is signed is exactly what was asked or nothing. What the wallet signs
 * goes through signableTypedDataDigest, which also refuses typed data bound to the wallet's own
 * account (its delegate's batches).
 */
import { BATCH_DOMAIN, type Hex, type LatchError } from '@latch/shared'
import { TypedDataEncoder } from 'ethers/hash'
import { bad, checkedAddress, HEX_BYTES } from './call.ts'

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

/** Checked typed data and its EIP-712 digest, encoded by ethers' TypedDataEncoder. */
function checkedTypedData(raw: unknown): { data: TypedData; digest: Hex } {
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
    const digest = TypedDataEncoder.hash(data.domain, Object.fromEntries(used), data.message)
    return { data, digest: digest as Hex }
  } catch {
    throw typedFail('the typed data cannot be encoded')
  }
}

/** The EIP-712 digest of checked typed data, encoded by ethers' TypedDataEncoder. */
export function typedDataDigest(raw: unknown): Hex {
  return checkedTypedData(raw).digest
}

/**
 * The digest the wallet `account` signs for eth_signTypedData_v4: typedDataDigest's, refused when
 * the domain names Latch's delegate or has the account itself as verifying contract.
 */
export function signableTypedDataDigest(raw: unknown, account: Hex): Hex {
  const { data, digest } = checkedTypedData(raw)
  // The frame's batch review (src/batch/review.ts) is the only way to approve a batch, and the
  // delegate's execute() takes a signature over typed data of domain LatchDelegate with the
  // account as verifying contract: signed here, it would be a batch signed without that review.
  // So a domain of that name is refused whatever its verifying contract, and so is any domain
  // whose verifying contract is the account itself (what account-bound signatures of this
  // delegate, or of any later one, use). checkDomain has made both, when given, strings.
  const { name, verifyingContract } = data.domain
  if (name === BATCH_DOMAIN.name) {
    throw typedFail(
      `a domain named ${BATCH_DOMAIN.name} is not signed here: batches are signed only in the wallet's own review`,
    )
  }
  if (
    typeof verifyingContract === 'string' &&
    verifyingContract.toLowerCase() === account.toLowerCase()
  ) {
    throw typedFail(
      "the domain's verifyingContract is this wallet itself: data bound to the account is not signed here",
    )
  }
  return digest
}
