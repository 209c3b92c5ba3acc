/**
 * The passcode scheme's OPRF (RFC 9497, ristretto255): each passcode wallet's key derived from
 * the server secret and a random per-wallet nonce (sealed), so neither a copy of the database nor
 * a client can evaluate it.
 */
import { LatchError } from '@latch/shared'
import { ristretto255_oprf } from '@noble/curves/ed25519.js'
import type { Deps } from '../context.ts'

const OPRF_INFO = new TextEncoder().encode('latch wallet passcode')

/** The seed of a wallet's OPRF key: the server secret and the nonce both needed. */
export function oprfSeed(secrets: Deps['secrets'], nonce: string): string {
  return secrets.hmac(`wallet-oprf:${nonce}`)
}

/** The wallet's OPRF secret key from its seed (hex). */
function oprfKey(seed: string): Uint8Array {
  const bytes = new Uint8Array(Buffer.from(seed, 'hex'))
  return ristretto255_oprf.oprf.deriveKeyPair(bytes, OPRF_INFO).secretKey
}

export function evaluate(seed: string, blinded: string): string {
  try {
    const out = ristretto255_oprf.oprf.blindEvaluate(
      oprfKey(seed),
      new Uint8Array(Buffer.from(blinded, 'hex')),
    )
    return Buffer.from(out).toString('hex')
  } catch {
    throw LatchError.of('invalid_data', {
      message: 'Request body is invalid: blinded: not a valid group element',
    })
  }
}
