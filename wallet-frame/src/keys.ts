/**
 * The wallet's key and its 2-of-3 shares. The private key exists only in memory here: it is
 * drawn, split and dropped at creation, and rebuilt from two shares for each use. `combine()`
 * does not know what it rebuilt, so every rebuild is checked against the wallet's address.
 */

import { LatchError } from '@latch/shared'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { getAddress } from 'ethers/address'
import { computeAddress } from 'ethers/transaction'
import { combine, split } from 'shamir-secret-sharing'

export type Hex = `0x${string}`

/** Bytes of a share: the 32 bytes of the key's polynomial values and one x coordinate. */
export const SHARE_BYTES = 33

/** The three shares of a wallet, each held by a different party. */
export interface WalletShares {
  /** Kept in wallet-origin storage (or frame memory where the browser refuses storage). */
  device: Uint8Array
  /** Kept by the server, sealed with the server secret, released to the owner's access token. */
  auth: Uint8Array
  /** Kept encrypted under the recovery method's key. */
  recovery: Uint8Array
}

/** A fresh secp256k1 private key from the platform's secure random source. */
export function newPrivateKey(): Uint8Array {
  return secp256k1.utils.randomSecretKey()
}

/** The EIP-55 checksummed address of a private key (ethers' computeAddress of its public key). */
export function addressOf(privateKey: Uint8Array): Hex {
  const publicKey = secp256k1.getPublicKey(privateKey, false)
  return computeAddress(`0x${bytesToHex(publicKey)}`) as Hex
}

/** EIP-55 (ethers' getAddress): the address with its checksum letters. */
export function checksum(address: string): Hex {
  return getAddress(address.startsWith('0x') ? address : `0x${address}`) as Hex
}

/** Splits a private key 2-of-3. */
export async function splitKey(privateKey: Uint8Array): Promise<WalletShares> {
  const [device, auth, recovery] = await split(new Uint8Array(privateKey), 3, 2)
  if (!device || !auth || !recovery) throw new Error('split returned fewer than 3 shares')
  return { device, auth, recovery }
}

function refused(why: string): LatchError {
  return LatchError.of('embedded_wallet_error', {
    message: `The wallet's key shares do not match this wallet (${why})`,
  })
}

/**
 * Rebuilds the private key from two shares and checks it is the key of `address`. A tampered,
 * swapped or foreign share, a duplicate or a missing share is refused with a clear error.
 */
export async function combineShares(shares: Uint8Array[], address: string): Promise<Uint8Array> {
  if (shares.length < 2) throw refused('two shares are needed')
  for (const share of shares) {
    if (share.length !== SHARE_BYTES) throw refused('a share has the wrong length')
  }
  const xs = new Set(shares.map((s) => s[SHARE_BYTES - 1]))
  if (xs.size !== shares.length) throw refused('the same share was given twice')
  let key: Uint8Array
  try {
    key = await combine(shares.map((s) => new Uint8Array(s)))
  } catch {
    throw refused('the shares cannot be combined')
  }
  let derived: Hex
  try {
    derived = addressOf(key)
  } catch {
    key.fill(0)
    throw refused('the combined value is not a valid key')
  }
  if (derived.toLowerCase() !== address.toLowerCase()) {
    key.fill(0)
    throw refused('the combined key belongs to another address')
  }
  return key
}

export function toHex(bytes: Uint8Array): string {
  return bytesToHex(bytes)
}

/** Bytes of a hex string (with or without 0x); refuses anything else. */
export function fromHex(hex: string): Uint8Array {
  const clean = hex.replace(/^0x/, '')
  if (!/^([0-9a-fA-F]{2})*$/.test(clean)) {
    throw LatchError.of('invalid_request_arguments', { message: 'A share is not valid hex' })
  }
  return hexToBytes(clean)
}
