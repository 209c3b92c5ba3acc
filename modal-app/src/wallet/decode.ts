/**
 * What a review screen explains about a request beyond its raw bytes: ERC-20 `transfer`,
 * `approve` and `transferFrom` calldata, an EIP-712 domain, and EIP-2612 `permit` typed data.
 * Decoding is ethers' (Interface); only calldata that re-encodes to the very same bytes counts as
 * decoded (no trailing bytes, no dirty address padding), so a summary never hides a byte that
 * the transaction carries. Anything else is shown as hex only. Loaded with the wallet screens.
 */
import { getChain, type Hex } from '@latch/shared'
import { Interface } from 'ethers/abi'
import { getAddress } from 'ethers/address'

/** An allowance from here up reads as unlimited: max uint256, and what tokens treat alike. */
export const UNLIMITED_ALLOWANCE = 2n ** 255n

const address = (name: string) => ({ name, type: 'address' }) as const
const amount = { name: 'amount', type: 'uint256' } as const
const bool = [{ name: '', type: 'bool' }] as const

/** The ERC-20 calls decoded (their standard signatures, from EIP-20). */
export const ERC20_CALLS_ABI = [
  {
    type: 'function',
    name: 'transfer',
    stateMutability: 'nonpayable',
    inputs: [address('to'), amount],
    outputs: bool,
  },
  {
    type: 'function',
    name: 'approve',
    stateMutability: 'nonpayable',
    inputs: [address('spender'), amount],
    outputs: bool,
  },
  {
    type: 'function',
    name: 'transferFrom',
    stateMutability: 'nonpayable',
    inputs: [address('from'), address('to'), amount],
    outputs: bool,
  },
] as const

const ERC20_CALLS = new Interface(ERC20_CALLS_ABI)

export type DecodedCall =
  | { name: 'transfer'; to: Hex; amount: bigint }
  | { name: 'approve'; spender: Hex; amount: bigint; unlimited: boolean }
  | { name: 'transferFrom'; from: Hex; to: Hex; amount: bigint }

/** An ERC-20 call's meaning, or null for calldata that is not exactly one of the three. */
export function decodeCalldata(data: string | undefined): DecodedCall | null {
  if (typeof data !== 'string' || !/^0x(?:[0-9a-fA-F]{2})+$/.test(data)) return null
  // The same bytes in either case (ethers answers lower-case hex).
  const bytes = data.toLowerCase() as Hex
  try {
    const call = ERC20_CALLS.parseTransaction({ data: bytes })
    if (!call) return null
    const again = ERC20_CALLS.encodeFunctionData(call.fragment, call.args)
    if (again.toLowerCase() !== bytes) return null
    // The ABI fixes each argument's type: addresses come checksummed, amounts as bigints.
    const arg = (i: number) => call.args[i] as unknown
    const addr = (i: number) => getAddress(arg(i) as string) as Hex
    if (call.name === 'transfer') {
      return { name: 'transfer', to: addr(0), amount: arg(1) as bigint }
    }
    if (call.name === 'approve') {
      const amount = arg(1) as bigint
      return { name: 'approve', spender: addr(0), amount, unlimited: amount >= UNLIMITED_ALLOWANCE }
    }
    if (call.name !== 'transferFrom') return null
    return { name: 'transferFrom', from: addr(0), to: addr(1), amount: arg(2) as bigint }
  } catch {
    return null
  }
}

/** The EIP-712 domain as the sign screen shows it; fields the data does not give are null. */
export interface TypedDataSummary {
  name: string | null
  version: string | null
  /** The chain's name where Latch knows it ('Ethereum'), else 'Chain 1234'. */
  chain: string | null
  verifyingContract: Hex | null
  /** An EIP-2612 permit: who may spend how much of the verifying contract's token. */
  permit: { owner: Hex; spender: Hex; value: bigint; deadline: bigint; unlimited: boolean } | null
}

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null

/** A uint256 as typed data carries it (a number, a decimal or hex string), or null. */
function uint(value: unknown): bigint | null {
  try {
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value)
    if (typeof value === 'string' && /^(?:0x[0-9a-fA-F]{1,64}|[0-9]{1,78})$/.test(value)) {
      const n = BigInt(value)
      return n < 2n ** 256n ? n : null
    }
  } catch {
    // Not a number: left out.
  }
  return null
}

/** An address checksummed; null for anything else, a mixed-case one with a wrong checksum too. */
function checksummed(value: unknown): Hex | null {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value)) return null
  try {
    return getAddress(value) as Hex
  } catch {
    return null
  }
}

/** The fields a permit's type must have, by name and type (EIP-2612). */
const PERMIT_FIELDS: Record<string, string> = {
  owner: 'address',
  spender: 'address',
  value: 'uint256',
  nonce: 'uint256',
  deadline: 'uint256',
}

function permitOf(data: Record<string, unknown>): TypedDataSummary['permit'] {
  if (data.primaryType !== 'Permit') return null
  const fields = record(data.types)?.Permit
  if (!Array.isArray(fields) || fields.length !== Object.keys(PERMIT_FIELDS).length) return null
  for (const field of fields) {
    const f = record(field)
    if (!f || typeof f.name !== 'string' || PERMIT_FIELDS[f.name] !== f.type) return null
  }
  const message = record(data.message)
  const owner = checksummed(message?.owner)
  const spender = checksummed(message?.spender)
  const value = uint(message?.value)
  const deadline = uint(message?.deadline)
  if (!owner || !spender || value === null || deadline === null) return null
  return { owner, spender, value, deadline, unlimited: value >= UNLIMITED_ALLOWANCE }
}

/** The typed data's domain and permit, from its object or JSON; null when it is neither. */
export function summarizeTypedData(
  typedData: Record<string, unknown> | string,
): TypedDataSummary | null {
  let data: Record<string, unknown> | null
  try {
    data = record(typeof typedData === 'string' ? JSON.parse(typedData) : typedData)
  } catch {
    return null
  }
  if (!data) return null
  const domain = record(data.domain) ?? {}
  const id = uint(domain.chainId)
  const chainId = id !== null && id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : null
  return {
    name: typeof domain.name === 'string' ? domain.name : null,
    version: typeof domain.version === 'string' ? domain.version : null,
    chain: chainId === null ? null : (getChain(chainId)?.name ?? `Chain ${chainId}`),
    verifyingContract: checksummed(domain.verifyingContract),
    permit: permitOf(data),
  }
}
