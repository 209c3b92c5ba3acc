/**
 * The proof of possession a new in-app wallet carries: the new key signs (EIP-191
 * personal_sign) a text that names the address and a digest of everything the creation stores,
 * under a challenge the API sealed for this app and user. The API recovers the signer and
 * refuses a creation whose signer is not the address, so nobody can register an address whose
 * key they do not hold (a planted or squatted address), and the shares stored are the ones the
 * key's holder sent. The frame and the API build the text with these same two functions.
 */

/** What the digest covers: the creation request as the API receives it, and its challenge. */
export interface WalletCreationParts {
  challenge: string
  address: string
  chainId?: string | undefined
  authShare: string
  recovery: Readonly<Record<string, string>>
}

/** SHA-256 (hex) over a fixed-order rendering of the parts (WebCrypto: browsers and Node alike). */
export async function walletCreationDigest(parts: WalletCreationParts): Promise<string> {
  const recovery = Object.keys(parts.recovery)
    .sort()
    .map((k) => [k, parts.recovery[k]])
  const text = JSON.stringify([
    'latch wallet creation v1',
    parts.challenge,
    parts.address.toLowerCase(),
    parts.chainId ?? null,
    parts.authShare.toLowerCase(),
    recovery,
  ])
  const hash = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return Array.from(new Uint8Array(hash), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** The text the new key signs. */
export function walletCreationMessage(address: string, digest: string): string {
  return `Latch: create in-app wallet ${address.toLowerCase()}\nProof: ${digest}`
}
