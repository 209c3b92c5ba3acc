/**
 * A software stand-in for a passkey authenticator with the PRF extension (CTAP2 hmac-secret), for
 * server tests that drive the wallet frame's own passkey code against the API. Each credential
 * has a random secret; its PRF output for a salt is HMAC-SHA-256(secret, SHA-256("WebAuthn
 * PRF\0" || salt)), as browsers hash the salt before the authenticator sees it. Handing the same
 * object to two devices is a synced passkey. The e2e spec uses Chromium's virtual authenticator.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { LatchError } from '@latch/shared'
import { type PasskeyAuthenticator, toBase64url } from '@latch/wallet-frame'

export interface SoftAuthenticator extends PasskeyAuthenticator {
  /** credential id → its secret (what the authenticator, and only it, holds). */
  readonly credentials: Map<string, Buffer>
  /** Every salt it was asked to evaluate, and the rpId of each ceremony. */
  readonly asked: { rpId: string; salts: string[] }[]
}

export function softAuthenticator(options: { prf?: boolean } = {}): SoftAuthenticator {
  const credentials = new Map<string, Buffer>()
  const asked: { rpId: string; salts: string[] }[] = []
  const prf = (secret: Buffer, salt: Uint8Array) =>
    new Uint8Array(
      createHmac('sha256', secret)
        .update(
          createHash('sha256')
            .update(Buffer.concat([Buffer.from('WebAuthn PRF\0'), salt]))
            .digest(),
        )
        .digest(),
    )
  return {
    credentials,
    asked,
    async create({ rpId, salt }) {
      asked.push({ rpId, salts: [Buffer.from(salt).toString('hex')] })
      const id = toBase64url(new Uint8Array(randomBytes(32)))
      const secret = randomBytes(32)
      credentials.set(id, secret)
      if (options.prf === false) throw LatchError.of('passkey_prf_unsupported')
      return { credentialId: id, prf: prf(secret, salt) }
    },
    async get({ rpId, credentials: allowed }) {
      asked.push({ rpId, salts: allowed.map((c) => Buffer.from(c.salt).toString('hex')) })
      for (const c of allowed) {
        const secret = credentials.get(c.credentialId)
        if (!secret) continue
        if (options.prf === false) throw LatchError.of('passkey_prf_unsupported')
        return { credentialId: c.credentialId, prf: prf(secret, c.salt) }
      }
      // A browser says NotAllowedError whether cancelled or no credential matched.
      throw LatchError.of('passkey_failed')
    },
  }
}
