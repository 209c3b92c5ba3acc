/**
 * What the frame signs for a batch of calls the app pays for: the batch itself (EIP-712, as
 * Latch's delegate contract hashes it: bound to the chain, the account as verifying contract, the
 * account's batch nonce and a deadline) and, the first time on a chain, the account's EIP-7702
 * authorization, which delegates ONLY to Latch's delegate: the address is this module's constant,
 * never an input, so nothing the modal sends can delegate the account to other code.
 *
 * Every input is checked strictly first, as rpc/transaction.ts checks a transaction; ethers hashes
 * and signs with a SigningKey made for the one signature (rpc/message.ts, signDigest).
 */
import {
  BATCH_DOMAIN,
  BATCH_TYPES,
  type BatchCall,
  type Hex,
  LATCH_DELEGATE_ADDRESS,
  LatchError,
  validateChainId,
} from '@latch/shared'
import { SigningKey } from 'ethers/crypto'
import { hashAuthorization, TypedDataEncoder } from 'ethers/hash'
import { checkedAddress } from '../rpc/call.ts'

/** The most calls in one batch (the server's limit too). */
export const MAX_BATCH_CALLS = 16
/** A deadline at most this far ahead (the server's limit too). */
export const MAX_BATCH_DEADLINE_S = 60 * 60

const HEX_BYTES = /^0x([0-9a-fA-F]{2})*$/
const UINT = /^(0|[1-9][0-9]{0,77})$/
const MAX_UINT256 = 2n ** 256n - 1n

function bad(message: string): LatchError {
  return LatchError.of('invalid_request_arguments', { message: `Invalid batch: ${message}` })
}

/** A batch as the frame signs it, every field checked. */
export interface CheckedBatch {
  chainId: number
  account: Hex
  calls: { to: Hex; value: bigint; data: Hex }[]
  nonce: bigint
  deadline: bigint
}

/** A whole number in 0..2^256-1 from decimal text, a 0x quantity or a bigint. */
function uint256(value: unknown, what: string): bigint {
  let n: bigint | null = null
  if (typeof value === 'bigint') n = value
  else if (typeof value === 'string' && UINT.test(value)) n = BigInt(value)
  else if (typeof value === 'string' && /^0x(0|[1-9a-fA-F][0-9a-fA-F]{0,63})$/.test(value)) {
    n = BigInt(value)
  }
  if (n === null || n < 0n || n > MAX_UINT256) {
    throw bad(`${what} must be a whole number as decimal text or a 0x quantity`)
  }
  return n
}

/** The batch, checked: refused with invalid_request_arguments naming what is wrong. */
export function checkBatch(input: {
  chainId: unknown
  account: unknown
  calls: unknown
  nonce: unknown
  deadline: unknown
}): CheckedBatch {
  if (typeof input.chainId !== 'number' || !Number.isSafeInteger(input.chainId)) {
    throw bad('chainId must be a number')
  }
  const chain = validateChainId(input.chainId)
  if (!chain.ok) throw chain.error
  const account = checkedAddress(input.account, 'Invalid batch: account')
  if (!Array.isArray(input.calls) || input.calls.length === 0) {
    throw bad('calls must be a list of at least one call')
  }
  if (input.calls.length > MAX_BATCH_CALLS) {
    throw bad(`at most ${MAX_BATCH_CALLS} calls`)
  }
  const calls = input.calls.map((raw: unknown, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw bad(`call ${i + 1} must be an object`)
    }
    const c = raw as Partial<Record<keyof BatchCall, unknown>>
    for (const field of Object.keys(raw)) {
      if (field !== 'to' && field !== 'value' && field !== 'data') {
        throw bad(`call ${i + 1} has an unknown field ${field.slice(0, 64)}`)
      }
    }
    const to = checkedAddress(c.to, `Invalid batch: call ${i + 1} to`)
    const value = c.value === undefined ? 0n : uint256(c.value, `call ${i + 1} value`)
    const data = c.data === undefined ? '0x' : c.data
    if (typeof data !== 'string' || !HEX_BYTES.test(data)) {
      throw bad(`call ${i + 1} data must be 0x-prefixed hex bytes`)
    }
    return { to, value, data: data.toLowerCase() as Hex }
  })
  const nonce = uint256(input.nonce, 'nonce')
  if (typeof input.deadline !== 'number' || !Number.isSafeInteger(input.deadline)) {
    throw bad('deadline must be unix seconds')
  }
  if (input.deadline <= 0) throw bad('deadline must be unix seconds')
  return { chainId: chain.value, account, calls, nonce, deadline: BigInt(input.deadline) }
}

/** The EIP-712 digest of a checked batch, as the delegate's batchDigest() computes it. */
export function batchDigest(batch: CheckedBatch): Hex {
  return TypedDataEncoder.hash(
    { ...BATCH_DOMAIN, chainId: batch.chainId, verifyingContract: batch.account },
    { Batch: [...BATCH_TYPES.Batch], Call: [...BATCH_TYPES.Call] },
    { calls: batch.calls, nonce: batch.nonce, deadline: batch.deadline },
  ) as Hex
}

/** The EIP-7702 authorization the frame signs: to Latch's delegate, on one chain, never 0. */
export interface DelegationRequest {
  chainId: number
  /** The account's transaction nonce: an authorization is good for that nonce only. */
  nonce: number
}

/** The digest of an authorization delegating to Latch's delegate (0x05 ‖ rlp([chain, address, nonce])). */
export function authorizationDigest(request: DelegationRequest): Hex {
  if (!Number.isSafeInteger(request.chainId) || request.chainId <= 0) {
    // Chain id 0 would let the delegation be replayed on every chain.
    throw bad('the authorization must name one chain')
  }
  if (!Number.isSafeInteger(request.nonce) || request.nonce < 0) {
    throw bad('the authorization nonce must be a whole number')
  }
  return hashAuthorization({
    address: LATCH_DELEGATE_ADDRESS,
    chainId: BigInt(request.chainId),
    nonce: BigInt(request.nonce),
  }) as Hex
}

/** What the server receives: the batch signature and, the first time, the authorization. */
export interface SignedBatch {
  signature: Hex
  authorization?: {
    address: Hex
    chainId: number
    nonce: number
    r: Hex
    s: Hex
    yParity: 0 | 1
  }
}

/**
 * Signs the batch and, when `delegation` is given, the authorization, with one rebuilt key.
 * The caller has checked the batch (checkBatch) and has the visitor's click.
 */
export function signBatch(
  batch: CheckedBatch,
  delegation: DelegationRequest | null,
  key: Uint8Array,
): SignedBatch {
  if (delegation && delegation.chainId !== batch.chainId) {
    throw bad('the authorization and the batch name different chains')
  }
  const signer = new SigningKey(key)
  const signature = signer.sign(batchDigest(batch)).serialized as Hex
  if (!delegation) return { signature }
  const sig = signer.sign(authorizationDigest(delegation))
  return {
    signature,
    authorization: {
      address: LATCH_DELEGATE_ADDRESS,
      chainId: delegation.chainId,
      nonce: delegation.nonce,
      r: sig.r as Hex,
      s: sig.s as Hex,
      yParity: sig.yParity,
    },
  }
}
