import { PASSCODE_ALPHABET, PASSCODE_LENGTH } from './constants.ts'

/** The largest multiple of the alphabet size under 256: bytes at or above it are redrawn. */
const LIMIT = 256 - (256 % PASSCODE_ALPHABET.length)

/**
 * A passcode of 6 letters and digits drawn with secure random bytes and no modulo bias.
 * @example generatePasscode() // 'q3ZL9a'
 */
export function generatePasscode(random: (bytes: Uint8Array<ArrayBuffer>) => void = fill): string {
  let out = ''
  const buffer = new Uint8Array(PASSCODE_LENGTH * 2)
  while (out.length < PASSCODE_LENGTH) {
    random(buffer)
    for (const byte of buffer) {
      if (byte >= LIMIT) continue
      out += PASSCODE_ALPHABET[byte % PASSCODE_ALPHABET.length]
      if (out.length === PASSCODE_LENGTH) break
    }
  }
  return out
}

function fill(bytes: Uint8Array<ArrayBuffer>): void {
  globalThis.crypto.getRandomValues(bytes)
}
