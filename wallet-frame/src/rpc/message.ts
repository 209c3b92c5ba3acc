/**
 * Signing with the key for one signature, and the EIP-191 message signature (personal_sign and
 * eth_sign) built on it.
 */
import { type Hex, validateSignMessage } from '@latch/shared'
import { SigningKey } from 'ethers/crypto'
import { hashMessage } from 'ethers/hash'
import { HEX_BYTES } from './call.ts'

/**
 * Signs a 32-byte digest with a SigningKey made for this one signature. ethers keeps the key as
 * a hex string inside it, which JavaScript cannot zero: the SigningKey is dropped at return, and
 * the caller zeroes the bytes it rebuilt.
 */
export function signDigest(digest: string, key: Uint8Array): ReturnType<SigningKey['sign']> {
  return new SigningKey(key).sign(digest)
}

/** A hex string is its bytes; any other string is its UTF-8. */
export function messageBytes(input: unknown): Uint8Array {
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
