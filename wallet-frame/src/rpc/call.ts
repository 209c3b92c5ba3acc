/**
 * What one `latch:wallet:rpc` call is (its address, token and request), what answering it needs
 * of the wallet (its key for one operation) and of the chain, and the parameter checks every
 * method shares: an address is 20 bytes with a right checksum or refused, never coerced.
 */
import { type ChainClient, type Hex, LatchError } from '@latch/shared'
import { getAddress } from 'ethers/address'

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

export function bad(message: string): LatchError {
  return LatchError.of('invalid_request_arguments', { message })
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
export const HEX_BYTES = /^0x([0-9a-fA-F]{2})*$/

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

export function isWallet(value: unknown, wallet: Hex, what: string): boolean {
  return checkedAddress(value, what).toLowerCase() === wallet.toLowerCase()
}

export function paramList(
  params: unknown,
  method: string,
  shape: string,
  length: number,
): unknown[] {
  if (!Array.isArray(params) || params.length < length) {
    throw bad(`${method} takes ${shape}`)
  }
  return params
}
