import { bytesToHex } from '@noble/hashes/utils.js'
import fc from 'fast-check'
import { hashTypedData, type TypedDataDefinition } from 'viem'
import { describe, expect, it } from 'vitest'
import { type TypedData, TypedDataError, typedDataHash } from './eip712.ts'

const ours = (data: unknown) => `0x${bytesToHex(typedDataHash(data as TypedData))}`
const viems = (data: unknown) => hashTypedData(data as TypedDataDefinition)

/** The example of EIP-712 itself. */
const SPEC_MAIL = {
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person' },
      { name: 'contents', type: 'string' },
    ],
  },
  primaryType: 'Mail',
  domain: {
    name: 'Ether Mail',
    version: '1',
    chainId: 1,
    verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
  },
  message: {
    from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
    to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
    contents: 'Hello, Bob!',
  },
}

describe('typedDataHash (EIP-712)', () => {
  it("hashes EIP-712's own example to the hash the EIP gives", () => {
    expect(ours(SPEC_MAIL)).toBe(
      '0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2',
    )
    expect(viems(SPEC_MAIL)).toBe(ours(SPEC_MAIL))
  })

  it('agrees with viem on every kind of field', () => {
    const cases = [
      // The domain's types inferred from its fields (no EIP712Domain given), salt included.
      {
        types: { Ping: [{ name: 'n', type: 'uint8' }] },
        primaryType: 'Ping',
        domain: { name: 'x', chainId: 10n, salt: `0x${'ab'.repeat(32)}` },
        message: { n: 255 },
      },
      // Signed integers, fixed and dynamic bytes, bools, nested and fixed arrays, struct arrays,
      // dependencies sorted by name after the primary type.
      {
        types: {
          Order: [
            { name: 'maker', type: 'Party' },
            { name: 'legs', type: 'Leg[]' },
            { name: 'delta', type: 'int128' },
            { name: 'flag', type: 'bool' },
            { name: 'tag', type: 'bytes4' },
            { name: 'blob', type: 'bytes' },
            { name: 'grid', type: 'uint16[2][]' },
            { name: 'note', type: 'string' },
          ],
          Party: [
            { name: 'who', type: 'address' },
            { name: 'aliases', type: 'string[]' },
          ],
          Leg: [
            { name: 'amount', type: 'uint256' },
            { name: 'to', type: 'Party' },
          ],
        },
        primaryType: 'Order',
        domain: { name: 'Exchange', version: '2', chainId: 137 },
        message: {
          maker: { who: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', aliases: ['a', ''] },
          legs: [
            {
              amount: 2n ** 255n,
              to: { who: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', aliases: [] },
            },
          ],
          delta: -(2n ** 127n),
          flag: true,
          tag: '0xdeadbeef',
          blob: '0x',
          grid: [
            [1, 2],
            [65535, 0],
          ],
          note: 'ünïcödé ✓',
        },
      },
      // The domain alone.
      {
        types: {},
        primaryType: 'EIP712Domain',
        domain: { name: 'Only', version: '1' },
        message: {},
      },
    ]
    for (const data of cases) expect(ours(data), data.primaryType).toBe(viems(data))
  })

  it('agrees with viem on generated messages', () => {
    fc.assert(
      fc.property(
        fc.record({
          amount: fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }),
          delta: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
          text: fc.string({ maxLength: 40 }),
          blob: fc.uint8Array({ maxLength: 70 }),
          fixed: fc.uint8Array({ minLength: 32, maxLength: 32 }),
          on: fc.boolean(),
          list: fc.array(fc.nat(), { maxLength: 4 }),
        }),
        (m) => {
          const hex = (b: Uint8Array) => `0x${bytesToHex(b)}`
          const data = {
            types: {
              Item: [
                { name: 'amount', type: 'uint256' },
                { name: 'delta', type: 'int64' },
                { name: 'text', type: 'string' },
                { name: 'blob', type: 'bytes' },
                { name: 'fixed', type: 'bytes32' },
                { name: 'on', type: 'bool' },
                { name: 'list', type: 'uint32[]' },
              ],
            },
            primaryType: 'Item',
            domain: { name: 'Gen', chainId: 1 },
            message: { ...m, blob: hex(m.blob), fixed: hex(m.fixed) },
          }
          expect(ours(data)).toBe(viems(data))
        },
      ),
      { numRuns: 200, seed: 20_261_123 },
    )
  })

  it('error: values that do not fit their types are refused', () => {
    const base = (field: string, value: unknown) => ({
      types: { T: [{ name: 'v', type: field }] },
      primaryType: 'T',
      domain: { name: 'x' },
      message: { v: value },
    })
    const refused: [string, unknown][] = [
      ['address', 'nope'],
      ['address', '0x1234'],
      ['uint8', 256],
      ['uint8', -1],
      ['int8', 128],
      ['uint256', 1.5],
      ['uint256', 'ten'],
      ['bool', 'true'],
      ['bytes4', '0xdeadbeefaa'],
      ['bytes4', 'dead'],
      ['bytes', '0xabc'],
      ['string', 5],
      ['uint256[2]', [1]],
      ['uint256[]', 'x'],
      ['uint7', 1],
      ['bytes33', `0x${'00'.repeat(33)}`],
      ['Unknown', 1],
    ]
    for (const [type, value] of refused) {
      expect(() => typedDataHash(base(type, value) as TypedData), type).toThrow(TypedDataError)
    }
    expect(() => typedDataHash({ ...SPEC_MAIL, primaryType: 'Letter' } as TypedData)).toThrow(
      'primaryType Letter is not among the types',
    )
    expect(() =>
      typedDataHash({ ...SPEC_MAIL, message: { ...SPEC_MAIL.message, to: 'Bob' } } as TypedData),
    ).toThrow('Person value is not an object')
  })
})
