/**
 * The frame's passkey sealing (WebCrypto HKDF + AES-GCM, as the frame runs it) against an
 * independent implementation on node:crypto, on generated inputs: each opens what the other
 * sealed, and both refuse the same tampering (another credential, user, wallet, PRF output, or
 * any changed byte).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, randomInt } from 'node:crypto'
import { isLatchError } from '@latch/shared'
import { expect, test } from 'vitest'
import {
  fromBase64url,
  openWithPasskey,
  type PasskeyBinding,
  sealWithPasskey,
  toBase64url,
} from './passkey.ts'

/** The documented scheme (docs/architecture.md), written again with Node's own primitives. */
function nodeKey(prf: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', prf, Buffer.alloc(0), 'latch passkey recovery key v1', 32))
}
function nodeAad(b: PasskeyBinding): Buffer {
  return Buffer.from(
    `latch-passkey-recovery\n${b.userId}\n${b.address.toLowerCase()}\n${b.credentialId}`,
    'utf8',
  )
}
function nodeSeal(prf: Uint8Array, share: Uint8Array, b: PasskeyBinding): Uint8Array {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', nodeKey(prf), iv)
  cipher.setAAD(nodeAad(b))
  const body = Buffer.concat([cipher.update(share), cipher.final()])
  return new Uint8Array(Buffer.concat([iv, body, cipher.getAuthTag()]))
}
function nodeOpen(prf: Uint8Array, sealed: Uint8Array, b: PasskeyBinding): Uint8Array | null {
  try {
    const buf = Buffer.from(sealed)
    const decipher = createDecipheriv('aes-256-gcm', nodeKey(prf), buf.subarray(0, 12))
    decipher.setAAD(nodeAad(b))
    decipher.setAuthTag(buf.subarray(buf.length - 16))
    return new Uint8Array(
      Buffer.concat([decipher.update(buf.subarray(12, buf.length - 16)), decipher.final()]),
    )
  } catch {
    return null
  }
}
async function frameOpen(prf: Uint8Array, sealed: Uint8Array, b: PasskeyBinding) {
  try {
    return await openWithPasskey(prf, sealed, b)
  } catch (e) {
    if (isLatchError(e)) return null
    throw e
  }
}

const hex = (n: number) => `0x${randomBytes(n).toString('hex')}`
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789é\n '
/** Ids of any length and alphabet, new lines and non-ASCII included (the data is joined by '\n'). */
const text = () =>
  Array.from({ length: randomInt(1, 40) }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')

function binding(): PasskeyBinding {
  return {
    userId: text(),
    // Mixed case: the sealing binds the address whatever its checksum case.
    address: `0x${randomBytes(20).toString('hex').toUpperCase()}`,
    credentialId: toBase64url(randomBytes(randomInt(16, 128))),
  }
}

test('property: the frame and node:crypto open each other’s sealings, 300 generated inputs', async () => {
  for (let i = 0; i < 300; i++) {
    const prf = new Uint8Array(randomBytes(32))
    const share = new Uint8Array(randomBytes(i % 3 === 0 ? 33 : randomInt(1, 80)))
    const b = binding()
    const lower = { ...b, address: b.address.toLowerCase() }
    const byFrame = await sealWithPasskey(prf, share, b)
    expect(byFrame.length).toBe(12 + share.length + 16)
    expect(nodeOpen(prf, byFrame, lower)).toEqual(share)
    const byNode = nodeSeal(prf, share, b)
    expect(await openWithPasskey(prf, byNode, lower)).toEqual(share)
  }
})

test('property: both refuse another credential, user, wallet, PRF output or any changed byte', async () => {
  for (let i = 0; i < 200; i++) {
    const prf = new Uint8Array(randomBytes(32))
    const share = new Uint8Array(randomBytes(33))
    const b = binding()
    const sealed = i % 2 === 0 ? await sealWithPasskey(prf, share, b) : nodeSeal(prf, share, b)
    const flipped = sealed.slice()
    const at = randomInt(flipped.length)
    flipped[at] = (flipped[at] ?? 0) ^ (1 << randomInt(8))
    const otherPrf = prf.slice()
    const bit = randomInt(32)
    otherPrf[bit] = (otherPrf[bit] ?? 0) ^ 1
    const cases: [Uint8Array, Uint8Array, PasskeyBinding][] = [
      [prf, sealed, { ...b, credentialId: toBase64url(randomBytes(32)) }],
      [prf, sealed, { ...b, credentialId: `${b.credentialId}A` }],
      [prf, sealed, { ...b, userId: `${b.userId}x` }],
      [prf, sealed, { ...b, userId: text() + b.userId }],
      [prf, sealed, { ...b, address: hex(20) }],
      [otherPrf, sealed, b],
      [prf, flipped, b],
      [prf, sealed.slice(0, sealed.length - 1), b],
    ]
    for (const [p, s, bind] of cases) {
      expect(nodeOpen(p, s, bind)).toBeNull()
      expect(await frameOpen(p, s, bind)).toBeNull()
    }
    // And the untouched one still opens in both: the refusals are the tampering's.
    expect(nodeOpen(prf, sealed, b)).toEqual(share)
    expect(await frameOpen(prf, sealed, b)).toEqual(share)
  }
})

test('behavior: a PRF output that is not 32 bytes is refused as no PRF; base64url round trips', async () => {
  const b = binding()
  await expect(sealWithPasskey(new Uint8Array(16), new Uint8Array(33), b)).rejects.toMatchObject({
    code: 'passkey_prf_unsupported',
  })
  for (let i = 0; i < 100; i++) {
    const bytes = new Uint8Array(randomBytes(randomInt(0, 70)))
    const encoded = toBase64url(bytes)
    expect(encoded).toBe(Buffer.from(bytes).toString('base64url'))
    expect(fromBase64url(encoded)).toEqual(bytes)
  }
})
