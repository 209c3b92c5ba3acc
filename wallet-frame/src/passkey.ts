/**
 * Recovery by passkey (README, "Recovery by passkey"): the frame asks a passkey for its PRF
 * extension's output under a per-wallet salt, derives an AES-256-GCM key from it with HKDF, and
 * seals a share bound to the user, the wallet and the credential (seal.ts). The PRF output, the
 * key and the plain share stay in local variables; the server receives the sealing only.
 *
 * The ceremony itself is behind `PasskeyAuthenticator`, so the same sealing runs in the frame
 * (navigator.credentials, `browserAuthenticator`) and in tests (a software authenticator).
 */
import { isLatchError, LatchError } from '@latch/shared'
import { openAesGcm, sealAesGcm } from './seal.ts'

const encoder = new TextEncoder()

/** HKDF's info: what the derived key is for (a PRF output used elsewhere derives another key). */
export const PASSKEY_KEY_INFO = 'latch passkey recovery key v1'

/** Who a sealing belongs to: it opens only for this user, wallet and credential. */
export interface PasskeyBinding {
  userId: string
  address: string
  /** base64url, as WebAuthn's `id`. */
  credentialId: string
}

/** The associated data of a sealing: purpose, user, wallet, credential (one per line). */
export function passkeyAssociatedData(b: PasskeyBinding): Uint8Array {
  return encoder.encode(
    ['latch-passkey-recovery', b.userId, b.address.toLowerCase(), b.credentialId].join('\n'),
  )
}

/** HKDF-SHA-256 of the PRF output (no salt: the PRF salt already made it per wallet). */
async function sealingKey(prf: Uint8Array, usage: KeyUsage): Promise<CryptoKey> {
  if (prf.length !== 32) {
    throw LatchError.of('passkey_prf_unsupported')
  }
  const ikm = await crypto.subtle.importKey('raw', new Uint8Array(prf), 'HKDF', false, [
    'deriveKey',
  ])
  return crypto.subtle.deriveKey(
    {
      name: 'HKDF',
      hash: 'SHA-256',
      salt: new Uint8Array(0),
      info: encoder.encode(PASSKEY_KEY_INFO),
    },
    ikm,
    { name: 'AES-GCM', length: 256 },
    false,
    [usage],
  )
}

/** AES-256-GCM of `share` under the key derived from `prf` (seal.ts: 12-byte IV, ciphertext, tag). */
export async function sealWithPasskey(
  prf: Uint8Array,
  share: Uint8Array,
  binding: PasskeyBinding,
): Promise<Uint8Array> {
  return sealAesGcm(await sealingKey(prf, 'encrypt'), share, passkeyAssociatedData(binding))
}

/** Opens a sealing; another PRF output, user, wallet or credential, or a changed byte, refuses. */
export async function openWithPasskey(
  prf: Uint8Array,
  sealed: Uint8Array,
  binding: PasskeyBinding,
): Promise<Uint8Array> {
  const share = await openAesGcm(sealingKey(prf, 'decrypt'), sealed, passkeyAssociatedData(binding))
  if (share) return share
  throw LatchError.of('embedded_wallet_error', {
    message: 'The recovery share could not be decrypted with this passkey',
  })
}

export const toBase64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')

export function fromBase64url(text: string): Uint8Array {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/')
  return Uint8Array.from(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0))
}

/** A passkey's answer: which credential, and its PRF output for the salt asked. */
export interface PrfResult {
  credentialId: string
  prf: Uint8Array
}

/** The WebAuthn ceremonies the frame needs. Both reject with a LatchError. */
export interface PasskeyAuthenticator {
  /** Registers a new passkey for this wallet and answers its PRF output for `salt`. */
  create(o: {
    rpId: string
    rpName: string
    userName: string
    salt: Uint8Array
  }): Promise<PrfResult>
  /** Asks one of `credentials` (each with its own salt) for its PRF output. */
  get(o: {
    rpId: string
    credentials: { credentialId: string; salt: Uint8Array }[]
  }): Promise<PrfResult>
}

/** How long a ceremony may take before the frame gives up (the modal's call waits 60 s). */
const CEREMONY_MS = 50_000

/** A WebAuthn failure as the catalogue's: cancelled or timed out says so, never a raw DOMException. */
function ceremonyError(e: unknown): LatchError {
  if (isLatchError(e)) return e
  // The DOMException's name and text say which (NotAllowedError, SecurityError, …); the modal
  // hears only passkey_failed.
  console.warn('Latch wallet frame: the passkey ceremony failed', e)
  return LatchError.of('passkey_failed', { cause: e })
}

interface PrfOutputs {
  enabled?: boolean
  results?: { first?: BufferSource }
}

function prfOf(credential: PublicKeyCredential): PrfOutputs | undefined {
  return (credential.getClientExtensionResults() as { prf?: PrfOutputs }).prf
}

function bytesOf(source: BufferSource | undefined): Uint8Array | undefined {
  if (!source) return undefined
  return source instanceof ArrayBuffer
    ? new Uint8Array(source)
    : new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
}

/** The frame's own ceremonies, on navigator.credentials (the modal frames it with the permissions). */
export function browserAuthenticator(
  credentials: CredentialsContainer = navigator.credentials,
): PasskeyAuthenticator {
  async function get(o: {
    rpId: string
    credentials: { credentialId: string; salt: Uint8Array }[]
  }): Promise<PrfResult> {
    const evalByCredential: Record<string, { first: BufferSource }> = {}
    for (const c of o.credentials)
      evalByCredential[c.credentialId] = { first: new Uint8Array(c.salt) }
    let credential: Credential | null
    try {
      credential = await credentials.get({
        publicKey: {
          rpId: o.rpId,
          // Nothing is verified from the assertion: the PRF output opening the sealing is the
          // proof. The challenge is random only because WebAuthn requires one.
          challenge: crypto.getRandomValues(new Uint8Array(32)),
          allowCredentials: o.credentials.map((c) => ({
            type: 'public-key' as const,
            id: new Uint8Array(fromBase64url(c.credentialId)),
          })),
          userVerification: 'required',
          timeout: CEREMONY_MS,
          extensions: { prf: { evalByCredential } } as AuthenticationExtensionsClientInputs,
        },
      })
    } catch (e) {
      throw ceremonyError(e)
    }
    if (!(credential instanceof PublicKeyCredential)) throw LatchError.of('passkey_failed')
    const first = bytesOf(prfOf(credential)?.results?.first)
    if (!first) throw LatchError.of('passkey_prf_unsupported')
    return { credentialId: credential.id, prf: first }
  }

  return {
    get,
    async create(o) {
      let credential: Credential | null
      try {
        credential = await credentials.create({
          publicKey: {
            rp: { id: o.rpId, name: o.rpName },
            user: {
              // A handle of its own: this passkey is for recovery, not a sign-in account.
              id: crypto.getRandomValues(new Uint8Array(16)),
              name: o.userName,
              displayName: o.userName,
            },
            challenge: crypto.getRandomValues(new Uint8Array(32)),
            pubKeyCredParams: [
              { type: 'public-key', alg: -7 },
              { type: 'public-key', alg: -257 },
            ],
            authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
            timeout: CEREMONY_MS,
            extensions: {
              prf: { eval: { first: new Uint8Array(o.salt) } },
            } as AuthenticationExtensionsClientInputs,
          },
        })
      } catch (e) {
        throw ceremonyError(e)
      }
      if (!(credential instanceof PublicKeyCredential)) throw LatchError.of('passkey_failed')
      const prf = prfOf(credential)
      const first = bytesOf(prf?.results?.first)
      if (first) return { credentialId: credential.id, prf: first }
      // Most authenticators answer PRF only on an assertion: enabled means one will.
      if (!prf?.enabled) throw LatchError.of('passkey_prf_unsupported')
      return get({ rpId: o.rpId, credentials: [{ credentialId: credential.id, salt: o.salt }] })
    },
  }
}
