/**
 * The frame's one way to seal a recovery share: AES-256-GCM under a key its caller derived,
 * bound to associated data that names what the sealing is for and whose it is. On the wire: a
 * fresh 12-byte IV, then the ciphertext and its tag. The passcode's and the passkey's sealings
 * differ only in where the key comes from and what they bind.
 */
import { isLatchError } from '@latch/shared'

/** Seals `plain` under `key`, bound to `associatedData`. */
export async function sealAesGcm(
  key: CryptoKey,
  plain: Uint8Array,
  associatedData: Uint8Array,
): Promise<Uint8Array> {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const data = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: new Uint8Array(associatedData) },
    key,
    new Uint8Array(plain),
  )
  const out = new Uint8Array(12 + data.byteLength)
  out.set(iv)
  out.set(new Uint8Array(data), 12)
  return out
}

/**
 * Opens what sealAesGcm sealed; null when it does not open (another key, other associated
 * data, a changed byte, a key that cannot be made), so each caller names its own refusal. A
 * LatchError from the key's derivation is a refusal already named and passes through.
 */
export async function openAesGcm(
  key: Promise<CryptoKey>,
  sealed: Uint8Array,
  associatedData: Uint8Array,
): Promise<Uint8Array | null> {
  try {
    const data = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: sealed.slice(0, 12), additionalData: new Uint8Array(associatedData) },
      await key,
      sealed.slice(12),
    )
    return new Uint8Array(data)
  } catch (e) {
    if (isLatchError(e)) throw e
    return null
  }
}
