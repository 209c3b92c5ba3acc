import { isLatchError } from '@latch/shared'
import { ristretto255_oprf } from '@noble/curves/ed25519.js'
import { describe, expect, it } from 'vitest'
import { blind, finish, KDF_PARAMS, openShare, sealShare, stretch } from './passcode.ts'
import { shareStore } from './wallet.ts'

const cheap = { m: 64, t: 1, p: 1 }
const salt = new Uint8Array(16).fill(1)
const server = ristretto255_oprf.oprf.generateKeyPair()
const evaluate = (blinded: Uint8Array, key = server.secretKey) =>
  ristretto255_oprf.oprf.blindEvaluate(key, blinded)

async function keysFor(passcode: string, key = server.secretKey) {
  const stretched = await stretch(passcode, salt, cheap)
  const b = blind(stretched)
  return { b, keys: finish(stretched, b, evaluate(b.blinded, key)) }
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')

describe('passcode scheme', () => {
  it("stretches with Argon2id at OWASP's minimum (19 MiB, t=2): deterministic, salted", async () => {
    expect(KDF_PARAMS).toEqual({ m: 19 * 1024, t: 2, p: 1 })
    const a = await stretch('abc123', salt)
    expect(a).toHaveLength(32)
    expect(hex(await stretch('abc123', salt))).toBe(hex(a))
    expect(hex(await stretch('abc123', new Uint8Array(16).fill(2)))).not.toBe(hex(a))
  })

  it('the same passcode gives the same keys through any blind; another passcode or server key does not', async () => {
    const one = await keysFor('abc123')
    const two = await keysFor('abc123')
    expect(hex(one.b.blinded)).not.toBe(hex(two.b.blinded))
    expect(hex(one.keys.recoveryKey)).toBe(hex(two.keys.recoveryKey))
    expect(hex(one.keys.verifier)).toBe(hex(two.keys.verifier))
    expect(hex(one.keys.verifier)).not.toBe(hex(one.keys.recoveryKey))
    const other = await keysFor('abc124')
    expect(hex(other.keys.verifier)).not.toBe(hex(one.keys.verifier))
    // Without the wallet's server key (here: any other key) the right passcode yields nothing.
    const foreign = await keysFor('abc123', ristretto255_oprf.oprf.generateKeyPair().secretKey)
    expect(hex(foreign.keys.verifier)).not.toBe(hex(one.keys.verifier))
  })

  it('what the server sees is a random element: the blinded passcode says nothing of it', async () => {
    // The same and different passcodes give elements that never repeat.
    const seen = new Set<string>()
    for (const pin of ['abc123', 'abc123', 'zzz999', 'zzz999']) {
      seen.add(hex((await keysFor(pin)).b.blinded))
    }
    expect(seen.size).toBe(4)
  })

  it('refuses an invalid evaluation with a clear error', async () => {
    const stretched = await stretch('abc123', salt, cheap)
    const b = blind(stretched)
    const bad = new Uint8Array(32).fill(0xff)
    expect(() => finish(stretched, b, bad)).toThrow(/invalid passcode evaluation/)
  })

  it('seals a share to its key and address; any other key, address or a flipped byte is refused', async () => {
    const { keys } = await keysFor('abc123')
    const share = crypto.getRandomValues(new Uint8Array(33))
    const address = '0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf'
    const sealed = await sealShare(keys.recoveryKey, share, address)
    expect(sealed).toHaveLength(12 + 33 + 16)
    expect(hex(await openShare(keys.recoveryKey, sealed, address.toLowerCase()))).toBe(hex(share))
    const wrong = (await keysFor('abc124')).keys.recoveryKey
    for (const attempt of [
      () => openShare(wrong, sealed, address),
      () => openShare(keys.recoveryKey, sealed, '0x0000000000000000000000000000000000000001'),
      () =>
        openShare(
          keys.recoveryKey,
          sealed.map((b, i) => (i === 20 ? b ^ 1 : b)),
          address,
        ),
    ]) {
      const e = await attempt().then(
        () => null,
        (err: unknown) => err,
      )
      expect(isLatchError(e)).toBe(true)
      expect((e as Error).message).toBe('The recovery share could not be decrypted')
    }
  })
})

describe('device share store', () => {
  class MemoryStorage {
    data = new Map<string, string>()
    getItem = (k: string) => this.data.get(k) ?? null
    setItem = (k: string, v: string) => void this.data.set(k, v)
    removeItem = (k: string) => void this.data.delete(k)
  }

  it('persists where storage is allowed (a reload finds the share)', () => {
    const storage = new MemoryStorage() as unknown as Storage
    const a = shareStore('app', () => storage)
    expect(a.persistent).toBe(true)
    a.set('0xAbC', new Uint8Array([1, 2, 3]))
    const reloaded = shareStore('app', () => storage)
    expect(reloaded.get('0xabc')).toEqual(new Uint8Array([1, 2, 3]))
    // Another app's frame does not see it.
    expect(shareStore('other', () => storage).get('0xabc')).toBeUndefined()
  })

  it('falls back to memory where the browser refuses storage (SecurityError): the next load is a new device', () => {
    const refuse = (): Storage => {
      throw new DOMException('Access is denied for this document.', 'SecurityError')
    }
    const a = shareStore('app', refuse)
    expect(a.persistent).toBe(false)
    a.set('0xabc', new Uint8Array([4]))
    expect(a.get('0xabc')).toEqual(new Uint8Array([4]))
    expect(shareStore('app', refuse).get('0xabc')).toBeUndefined()
  })
})
