import { isLatchError } from '@latch/shared'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { describe, expect, it } from 'vitest'
import { addressOf, checksum, combineShares, newPrivateKey, splitKey } from './keys.ts'

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (e) {
    expect(isLatchError(e)).toBe(true)
    return (e as Error).message
  }
  throw new Error('expected a refusal')
}

describe('keys', () => {
  it('derives the address of a known key (EIP-55 checksummed)', () => {
    // The address of private key 1 is well known.
    const one = new Uint8Array(32)
    one[31] = 1
    expect(addressOf(one)).toBe('0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf')
  })

  it('checksums the EIP-55 test vectors', () => {
    for (const a of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(checksum(a.toLowerCase())).toBe(a)
    }
  })

  it('draws distinct valid keys', () => {
    const a = newPrivateKey()
    const b = newPrivateKey()
    expect(a).toHaveLength(32)
    expect(secp256k1.utils.isValidSecretKey(a)).toBe(true)
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false)
  })

  it('rebuilds the key from any two of the three shares', async () => {
    const key = newPrivateKey()
    const address = addressOf(key)
    const { device, auth, recovery } = await splitKey(key)
    for (const pair of [
      [device, auth],
      [auth, device],
      [device, recovery],
      [auth, recovery],
      [device, auth, recovery],
    ]) {
      expect(await combineShares(pair, address)).toEqual(key)
    }
  })

  it('no single share equals or contains the key', async () => {
    const key = newPrivateKey()
    const shares = await splitKey(key)
    for (const share of Object.values(shares)) {
      expect(Buffer.from(share).includes(Buffer.from(key))).toBe(false)
    }
  })

  it('refuses a share with a flipped byte or bit, in any position', async () => {
    const key = newPrivateKey()
    const address = addressOf(key)
    const { device, auth } = await splitKey(key)
    for (let i = 0; i < 32; i++) {
      const tampered = new Uint8Array(device)
      tampered[i] = (tampered[i] ?? 0) ^ (1 << (i % 8))
      expect(await refusal(combineShares([tampered, auth], address))).toMatch(/do not match/)
    }
    // The x coordinate itself.
    const tampered = new Uint8Array(auth)
    tampered[32] = (tampered[32] ?? 0) ^ 1
    if (tampered[32] !== device[32] && tampered[32] !== 0) {
      expect(await refusal(combineShares([device, tampered], address))).toMatch(/do not match/)
    }
  })

  it("refuses another wallet's share, and a swapped wallet address", async () => {
    const a = newPrivateKey()
    const b = newPrivateKey()
    const sa = await splitKey(a)
    const sb = await splitKey(b)
    let foreign = sb.auth
    // Shares of two wallets may share an x coordinate by chance; pick one that does not.
    if (foreign[32] === sa.device[32]) foreign = sb.recovery
    expect(await refusal(combineShares([sa.device, foreign], addressOf(a)))).toMatch(/do not match/)
    expect(await refusal(combineShares([sa.device, sa.auth], addressOf(b)))).toMatch(
      /another address/,
    )
  })

  it('refuses too few shares, a duplicate and a wrong length', async () => {
    const key = newPrivateKey()
    const address = addressOf(key)
    const { device } = await splitKey(key)
    expect(await refusal(combineShares([device], address))).toMatch(/two shares are needed/)
    expect(await refusal(combineShares([], address))).toMatch(/two shares are needed/)
    expect(await refusal(combineShares([device, new Uint8Array(device)], address))).toMatch(/twice/)
    expect(await refusal(combineShares([device, device.subarray(1)], address))).toMatch(
      /wrong length/,
    )
  })
})
