/** Secrets derived from the server secret: code HMACs, encryption at rest, token hashes, ids. */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  randomInt,
  timingSafeEqual,
} from 'node:crypto'
import { APP_ID_LENGTH, VERIFICATION_CODE_LENGTH } from '@latch/shared'

export interface Secrets {
  /** HMAC of a value under the code key (hex). */
  hmac(value: string): string
  /**
   * AES-256-GCM under the encryption key: 'v1.<iv>.<tag>.<ciphertext>' in base64url. With
   * `aad` (associated data: what the value is and where it belongs) the value is 'v2.…' and
   * opens only with the same `aad`; a v2 value never opens without one, nor a v1 value with one.
   */
  encrypt(plaintext: string, aad?: string): string
  decrypt(sealed: string, aad?: string): string
  /**
   * HMAC-SHA-256 (base64url) of `value` under a key of its own per `purpose`, so a MAC made for
   * one purpose is never valid for another and none is a code HMAC.
   */
  mac(purpose: string, value: string): string
  /**
   * Opens a sealed value as `decrypt` does, and says whether it took the previous secret (a
   * value not yet sealed again by `latch secret rotate`).
   */
  open(sealed: string, aad?: string): { value: string; previous: boolean }
  /**
   * The same under the previous secret (`LATCH_SECRET_PREVIOUS`) while a rotation is under way,
   * else null: checks of MACs and HMACs made before the switch try it second.
   */
  readonly previous: Secrets | null
}

function derive(secret: string, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'latch', label, 32))
}

/**
 * The secrets of `secret`; with `previous` (a rotation under way) values sealed under the old
 * secret still open, and everything new is sealed and MACed under `secret`.
 */
export function createSecrets(secret: string, previous?: string | null): Secrets {
  const current = secretsOf(secret, null)
  if (!previous || previous === secret) return current
  return secretsOf(secret, secretsOf(previous, null))
}

function secretsOf(secret: string, previous: Secrets | null): Secrets {
  const hmacKey = derive(secret, 'verification-codes')
  const encKey = derive(secret, 'encryption-at-rest')
  const macKeys = new Map<string, Buffer>()
  function decrypt(sealed: string, aad?: string): string {
    const [version, iv, tag, data] = sealed.split('.')
    if (version !== (aad === undefined ? 'v1' : 'v2') || !iv || !tag || data === undefined) {
      throw new Error('Unreadable sealed value')
    }
    const decipher = createDecipheriv('aes-256-gcm', encKey, Buffer.from(iv, 'base64url'))
    if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([
      decipher.update(Buffer.from(data, 'base64url')),
      decipher.final(),
    ]).toString('utf8')
  }
  function open(sealed: string, aad?: string): { value: string; previous: boolean } {
    try {
      return { value: decrypt(sealed, aad), previous: false }
    } catch (e) {
      if (!previous) throw e
      // The authentication tag decides: a value sealed under the other key never opens here.
      return { value: previous.decrypt(sealed, aad), previous: true }
    }
  }
  return {
    previous,
    open,
    hmac: (value) => createHmac('sha256', hmacKey).update(value).digest('hex'),
    encrypt(plaintext, aad) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', encKey, iv)
      if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'))
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      const parts = [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64url'))
      return `${aad === undefined ? 'v1' : 'v2'}.${parts.join('.')}`
    },
    decrypt: (sealed, aad) => open(sealed, aad).value,
    mac(purpose, value) {
      const key = macKeys.get(purpose) ?? derive(secret, `mac:${purpose}`)
      macKeys.set(purpose, key)
      return createHmac('sha256', key).update(value).digest('base64url')
    },
  }
}

/**
 * Which secret made `presented`, the MAC of `value` for `purpose`: 'current', 'previous' (made
 * before a rotation that is under way), or null (neither; constant-time against each).
 */
export function macMade(
  secrets: Secrets,
  purpose: string,
  value: string,
  presented: string,
): 'current' | 'previous' | null {
  if (sameSecret(presented, secrets.mac(purpose, value))) return 'current'
  if (secrets.previous && sameSecret(presented, secrets.previous.mac(purpose, value))) {
    return 'previous'
  }
  return null
}

/** Constant-time comparison of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && timingSafeEqual(x, y)
}

/** SHA-256 (hex) of an opaque token: refresh and fork tokens are stored only this way. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** 256 random bits, base64url. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url')
}

/** Six digits from a CSPRNG. */
export function randomCode(): string {
  return String(randomInt(0, 10 ** VERIFICATION_CODE_LENGTH)).padStart(
    VERIFICATION_CODE_LENGTH,
    '0',
  )
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** A random lowercase alphanumeric id; apps get APP_ID_LENGTH characters. */
export function randomId(length = APP_ID_LENGTH): string {
  let out = ''
  for (let i = 0; i < length; i++) out += ID_ALPHABET[randomInt(0, ID_ALPHABET.length)]
  return out
}

/** Constant-time comparison of two MACs or other secret strings of public length. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8')
  const y = Buffer.from(b, 'utf8')
  return x.length === y.length && timingSafeEqual(x, y)
}
