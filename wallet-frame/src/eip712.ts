/**
 * EIP-712 typed-data hashing (https://eips.ethereum.org/EIPS/eip-712), written for the frame so
 * the code that holds keys carries no general-purpose Ethereum library. Every value is checked
 * against its type; anything that does not fit throws, and the frame signs nothing.
 * src/eip712.test.ts compares each hash with viem's hashTypedData.
 */
import { keccak_256 } from '@noble/hashes/sha3.js'
import { concatBytes, hexToBytes } from '@noble/hashes/utils.js'

export interface TypedField {
  name: string
  type: string
}

export interface TypedData {
  types: Record<string, TypedField[]>
  primaryType: string
  domain: Record<string, unknown>
  message: Record<string, unknown>
}

export class TypedDataError extends Error {
  override readonly name = 'TypedDataError'
}

/** The domain's fields in the order EIP-712 lists them, for data that does not declare them. */
const DOMAIN_FIELDS: TypedField[] = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
  { name: 'salt', type: 'bytes32' },
]

const ARRAY = /^(.+)\[(\d*)\]$/
const INT = /^(u?)int(\d*)$/
const BYTES_N = /^bytes(\d+)$/

function word(n: bigint): Uint8Array {
  const out = new Uint8Array(32)
  let v = n
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(v & 0xffn)
    v >>= 8n
  }
  return out
}

function toBigInt(value: unknown, type: string): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value)
  if (typeof value === 'string' && /^(-?\d+|0x[0-9a-fA-F]+)$/.test(value)) return BigInt(value)
  throw new TypedDataError(`${type} value ${JSON.stringify(value)} is not an integer`)
}

function hexBytes(value: unknown, type: string): Uint8Array {
  if (typeof value !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(value)) {
    throw new TypedDataError(`${type} value ${JSON.stringify(value)} is not 0x hex bytes`)
  }
  return hexToBytes(value.slice(2))
}

export function typedDataHash(data: TypedData): Uint8Array {
  const types: Record<string, TypedField[]> = {
    EIP712Domain: DOMAIN_FIELDS.filter((f) => data.domain[f.name] !== undefined),
    ...data.types,
  }
  for (const [name, fields] of Object.entries(types)) {
    if (!Array.isArray(fields)) throw new TypedDataError(`type ${name} is not a list of fields`)
    for (const f of fields) {
      if (typeof f?.name !== 'string' || typeof f?.type !== 'string') {
        throw new TypedDataError(`type ${name} has a field without a name and a type`)
      }
    }
  }

  /** The struct types `type` refers to, itself first, each once. */
  function dependencies(type: string, found: string[] = []): string[] {
    const base = type.replace(/(\[\d*\])+$/, '')
    if (found.includes(base) || !Object.hasOwn(types, base)) return found
    found.push(base)
    for (const f of types[base] ?? []) dependencies(f.type, found)
    return found
  }

  function encodeType(type: string): string {
    const [primary, ...rest] = dependencies(type)
    return [primary as string, ...rest.sort()]
      .map((t) => `${t}(${(types[t] ?? []).map((f) => `${f.type} ${f.name}`).join(',')})`)
      .join('')
  }

  function hashStruct(type: string, value: unknown): Uint8Array {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new TypedDataError(`${type} value is not an object`)
    }
    const record = value as Record<string, unknown>
    const parts: Uint8Array[] = [keccak_256(new TextEncoder().encode(encodeType(type)))]
    for (const f of types[type] ?? []) parts.push(encodeValue(f.type, record[f.name]))
    return keccak_256(concatBytes(...parts))
  }

  function encodeValue(type: string, value: unknown): Uint8Array {
    const array = ARRAY.exec(type)
    if (array) {
      const [, inner, length] = array as unknown as [string, string, string]
      if (!Array.isArray(value)) throw new TypedDataError(`${type} value is not a list`)
      if (length !== '' && value.length !== Number(length)) {
        throw new TypedDataError(`${type} value has ${value.length} items`)
      }
      return keccak_256(concatBytes(...value.map((v) => encodeValue(inner, v))))
    }
    if (Object.hasOwn(types, type)) return hashStruct(type, value)
    if (type === 'string') {
      if (typeof value !== 'string') throw new TypedDataError('string value is not a string')
      return keccak_256(new TextEncoder().encode(value))
    }
    if (type === 'bytes') return keccak_256(hexBytes(value, type))
    if (type === 'bool') {
      if (typeof value !== 'boolean') throw new TypedDataError('bool value is not true or false')
      return word(value ? 1n : 0n)
    }
    if (type === 'address') {
      if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value)) {
        throw new TypedDataError(`address value ${JSON.stringify(value)} is not an address`)
      }
      return word(BigInt(value))
    }
    const bytesN = BYTES_N.exec(type)
    if (bytesN) {
      const size = Number(bytesN[1])
      const bytes = hexBytes(value, type)
      if (size < 1 || size > 32 || bytes.length !== size) {
        throw new TypedDataError(`${type} value is not ${size} bytes`)
      }
      const out = new Uint8Array(32)
      out.set(bytes)
      return out
    }
    const int = INT.exec(type)
    if (int) {
      const bits = int[2] === '' ? 256 : Number(int[2])
      if (bits < 8 || bits > 256 || bits % 8 !== 0) throw new TypedDataError(`unknown type ${type}`)
      const n = toBigInt(value, type)
      const signed = int[1] === ''
      const min = signed ? -(1n << BigInt(bits - 1)) : 0n
      const max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n
      if (n < min || n > max) throw new TypedDataError(`${type} value ${n} is out of range`)
      // Two's complement in 256 bits for a negative signed value.
      return word(n < 0n ? (1n << 256n) + n : n)
    }
    throw new TypedDataError(`unknown type ${type}`)
  }

  if (!Object.hasOwn(types, data.primaryType)) {
    throw new TypedDataError(`primaryType ${data.primaryType} is not among the types`)
  }
  const parts = [Uint8Array.of(0x19, 0x01), hashStruct('EIP712Domain', data.domain)]
  // Signing the domain alone (primaryType EIP712Domain) has no message part.
  if (data.primaryType !== 'EIP712Domain') parts.push(hashStruct(data.primaryType, data.message))
  return keccak_256(concatBytes(...parts))
}
