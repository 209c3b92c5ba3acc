/**
 * The frame's side of the passcode scheme (README, "The passcode scheme"). The passcode is
 * stretched with Argon2id, then run through an OPRF (RFC 9497, ristretto255) keyed by a
 * per-wallet key only the server can compute. Only the OPRF output F yields the key that
 * encrypts the recovery share and the verifier that makes the server release it, so neither a
 * copy of the database nor anything a client sees lets anyone test a passcode offline: each
 * guess needs one server evaluation, and the server counts them.
 */

import { LatchError } from '@latch/shared'
import { ristretto255_oprf } from '@noble/curves/ed25519.js'
import { argon2idAsync } from '@noble/hashes/argon2.js'
import { hkdf } from '@noble/hashes/hkdf.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { openAesGcm, sealAesGcm } from './seal.ts'

/** OWASP's minimum for Argon2id: 19 MiB, 2 passes, 1 lane. Pure JS: no WebAssembly in the CSP. */
export const KDF_PARAMS = { m: 19 * 1024, t: 2, p: 1 } as const
export type KdfParams = { m: number; t: number; p: number }

const encoder = new TextEncoder()

/** The memory-hard stretch of a passcode under the wallet's salt. */
export function stretch(
  passcode: string,
  salt: Uint8Array,
  params: KdfParams = KDF_PARAMS,
): Promise<Uint8Array> {
  return argon2idAsync(encoder.encode(passcode), salt, { ...params, dkLen: 32 })
}

export interface Blinded {
  /** Kept in the frame: unblinds the server's answer. */
  blind: Uint8Array
  /** Sent to the server: a uniformly random group element, whatever the passcode. */
  blinded: Uint8Array
}

export function blind(stretched: Uint8Array): Blinded {
  return ristretto255_oprf.oprf.blind(stretched)
}

/** What the OPRF output yields: the recovery share's encryption key and the server's verifier. */
export interface PasscodeKeys {
  recoveryKey: Uint8Array
  verifier: Uint8Array
}

/** Unblinds the server's evaluation and derives both keys from the OPRF output. */
export function finish(stretched: Uint8Array, b: Blinded, evaluated: Uint8Array): PasscodeKeys {
  let output: Uint8Array
  try {
    output = ristretto255_oprf.oprf.finalize(stretched, b.blind, evaluated)
  } catch {
    throw LatchError.of('embedded_wallet_error', {
      message: 'The server answered an invalid passcode evaluation',
    })
  }
  return {
    recoveryKey: hkdf(sha256, output, undefined, encoder.encode('latch recovery key'), 32),
    verifier: hkdf(sha256, output, undefined, encoder.encode('latch recovery verifier'), 32),
  }
}

async function aesKey(raw: Uint8Array, usage: KeyUsage): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', new Uint8Array(raw), 'AES-GCM', false, [usage])
}

/**
 * AES-256-GCM of a share under a recovery key, bound to the wallet's address (a ciphertext of
 * one wallet does not open as another's): 12-byte IV, then ciphertext and tag.
 */
export async function sealShare(key: Uint8Array, share: Uint8Array, address: string) {
  return sealAesGcm(await aesKey(key, 'encrypt'), share, encoder.encode(address.toLowerCase()))
}

export async function openShare(
  key: Uint8Array,
  sealed: Uint8Array,
  address: string,
): Promise<Uint8Array> {
  const share = await openAesGcm(
    aesKey(key, 'decrypt'),
    sealed,
    encoder.encode(address.toLowerCase()),
  )
  if (share) return share
  throw LatchError.of('embedded_wallet_error', {
    message: 'The recovery share could not be decrypted',
  })
}
