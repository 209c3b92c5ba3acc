import { LatchError } from '@latch/shared'
import { importPKCS8, SignJWT } from 'jose'

export interface AppleKey {
  teamId: string
  keyId: string
  /** The .p8 file Apple hands out: a PKCS#8 PEM of a P-256 key. */
  privateKey: string
}

const APPLE_AUDIENCE = 'https://appleid.apple.com'
/** Apple refuses a client secret that lives longer than 6 months (15777000 s). */
export const APPLE_SECRET_MAX_LIFETIME_S = 15_777_000
/** Secrets are minted per token request, so a short life is enough. */
const LIFETIME_S = 10 * 60

/**
 * Apple's client secret: an ES256 JWT signed with the team's key (iss team id, sub client id,
 * aud https://appleid.apple.com, kid the key id).
 * @example await appleClientSecret('com.example.web', { teamId, keyId, privateKey })
 */
export async function appleClientSecret(
  clientId: string,
  key: AppleKey,
  now: number = Math.floor(Date.now() / 1000),
  lifetimeS: number = LIFETIME_S,
): Promise<string> {
  if (lifetimeS <= 0 || lifetimeS > APPLE_SECRET_MAX_LIFETIME_S) {
    throw new RangeError('Apple client secrets live at most 6 months')
  }
  let signingKey: CryptoKey
  try {
    signingKey = await importPKCS8(key.privateKey, 'ES256')
  } catch (cause) {
    throw LatchError.of('method_not_available', {
      message: 'The Apple private key is not a valid ES256 .p8 key',
      cause,
    })
  }
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: key.keyId })
    .setIssuer(key.teamId)
    .setSubject(clientId)
    .setAudience(APPLE_AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + lifetimeS)
    .sign(signingKey)
}
