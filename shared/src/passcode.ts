import { PASSCODE_ALPHABET, PASSCODE_LENGTH } from './constants.ts'

/** The largest multiple of the alphabet size under 256: bytes at or above it are redrawn. */
const LIMIT = 256 - (256 % PASSCODE_ALPHABET.length)

/**
 * A passcode of 6 letters and digits drawn with secure random bytes and no modulo bias. A draw
 * that isWeakPasscode refuses (about 4 in a million) is drawn again, so a generated passcode is
 * never refused when the wallet is created with it.
 * @example generatePasscode() // 'q3ZL9a'
 */
export function generatePasscode(random: (bytes: Uint8Array<ArrayBuffer>) => void = fill): string {
  for (;;) {
    const out = draw(random)
    if (!isWeakPasscode(out)) return out
  }
}

function draw(random: (bytes: Uint8Array<ArrayBuffer>) => void): string {
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

/**
 * The most common 6-character passcodes people choose, lowercased. Refused when a passcode is
 * chosen (validateNewPasscode), never when one is entered to recover: a wallet made before this
 * list keeps its passcode. Short on purpose: the shapes below catch the rest of the usual picks.
 */
export const COMMON_PASSCODES: ReadonlySet<string> = new Set([
  '123456',
  '654321',
  '123123',
  '121212',
  '112233',
  '123321',
  '111222',
  '159753',
  '147258',
  '696969',
  'abc123',
  '123abc',
  'abc321',
  'qwe123',
  'asd123',
  'a1b2c3',
  '1a2b3c',
  '1q2w3e',
  'q1w2e3',
  'zaq12w',
  'qwerty',
  'azerty',
  'qwertz',
  'asdfgh',
  'zxcvbn',
  'qazwsx',
  'passwd',
  'pass12',
  'pass01',
  'passw0',
  'pa55wd',
  'secret',
  'admin1',
  'login1',
  'test12',
  'iloveu',
  'monkey',
  'dragon',
  'master',
  'shadow',
  'wallet',
  'crypto',
])

const RUNS = ['0123456789', 'abcdefghijklmnopqrstuvwxyz']

/**
 * A passcode on the common list, or of a shape people pick for ease (case ignored): one
 * character six times (`aaaaaa`, `000000`), a straight run up or down (`234567`, `fedcba`),
 * or two or three characters repeated (`ababab`, `xyzxyz`).
 * @example isWeakPasscode('Qwerty') // true
 */
export function isWeakPasscode(passcode: string): boolean {
  const p = passcode.toLowerCase()
  if (COMMON_PASSCODES.has(p)) return true
  for (const unit of [1, 2, 3]) {
    if (p.length > unit && p === p.slice(0, unit).repeat(p.length / unit)) return true
  }
  const reversed = [...p].reverse().join('')
  return RUNS.some((run) => run.includes(p) || run.includes(reversed))
}
