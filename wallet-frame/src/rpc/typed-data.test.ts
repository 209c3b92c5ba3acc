import { LatchError } from '@latch/shared'
import { bytesToHex } from '@noble/hashes/utils.js'
import fc from 'fast-check'
import { hashTypedData, type TypedDataDefinition } from 'viem'
import { describe, expect, it } from 'vitest'
import { typedDataDigest } from './typed-data.ts'

const ours = (data: unknown) => typedDataDigest(data)
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

describe('typedDataDigest (EIP-712, ethers TypedDataEncoder after strict checks)', () => {
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
      expect(() => ours(base(type, value)), type).toThrow(LatchError)
    }
    expect(() => ours({ ...SPEC_MAIL, primaryType: 'Letter' })).toThrow(
      'primaryType Letter is not among the types',
    )
    expect(() => ours({ ...SPEC_MAIL, message: { ...SPEC_MAIL.message, to: 'Bob' } })).toThrow(
      'message.to is not a Person',
    )
  })

  /** SPEC_MAIL with one thing changed by `edit` (a deep copy, so each case breaks one value). */
  const broken = (edit: (d: typeof SPEC_MAIL & Record<string, unknown>) => void) => {
    const d = structuredClone(SPEC_MAIL) as typeof SPEC_MAIL & Record<string, unknown>
    edit(d)
    return d
  }
  const types = (d: { types: unknown }) =>
    d.types as Record<string, { name: string; type: string }[]>

  it('error: what ethers would coerce or hash differently from viem is refused before signing', () => {
    // A wrong EIP-55 checksum (the last letter's case flipped) in the message and in the domain.
    const wrong = '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8Dd826'
    const cases: [string, unknown, string][] = [
      [
        'message address checksum',
        broken((d) => {
          d.message.from.wallet = wrong
        }),
        'wrong EIP-55 checksum',
      ],
      [
        'verifyingContract checksum',
        broken((d) => {
          d.domain.verifyingContract = '0xcCCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC'
        }),
        'wrong EIP-55 checksum',
      ],
      [
        'uint without width',
        broken((d) => {
          types(d).Person = [
            { name: 'name', type: 'string' },
            { name: 'wallet', type: 'uint' },
          ]
        }),
        'unknown type "uint"',
      ],
      [
        'int without width',
        broken((d) => {
          types(d).Person = [
            { name: 'name', type: 'string' },
            { name: 'wallet', type: 'int' },
          ]
        }),
        'unknown type "int"',
      ],
      [
        'uint08',
        broken((d) => {
          types(d).Person = [
            { name: 'name', type: 'string' },
            { name: 'wallet', type: 'uint08' },
          ]
        }),
        'unknown type "uint08"',
      ],
      [
        'bytes032',
        broken((d) => {
          types(d).Person = [
            { name: 'name', type: 'string' },
            { name: 'wallet', type: 'bytes032' },
          ]
        }),
        'unknown type "bytes032"',
      ],
      [
        'array length with a leading zero',
        broken((d) => {
          types(d).Person = [
            { name: 'name', type: 'string' },
            { name: 'wallet', type: 'address[02]' },
          ]
        }),
        'unknown type',
      ],
      [
        'struct named uint256',
        broken((d) => {
          types(d).uint256 = [{ name: 'x', type: 'string' }]
        }),
        '"uint256" cannot name a struct',
      ],
      [
        'struct name with a space',
        broken((d) => {
          types(d)['Person x'] = [{ name: 'x', type: 'string' }]
        }),
        'cannot name a struct',
      ],
      [
        'struct name with parentheses',
        broken((d) => {
          types(d)['P(string a)'] = [{ name: 'x', type: 'string' }]
        }),
        'cannot name a struct',
      ],
      [
        'field name with a comma',
        broken((d) => {
          types(d).Person = [
            { name: 'name,string b', type: 'string' },
            { name: 'wallet', type: 'address' },
          ]
        }),
        'cannot name a field',
      ],
      [
        'duplicate field',
        broken((d) => {
          types(d).Person = [
            { name: 'name', type: 'string' },
            { name: 'name', type: 'string' },
          ]
        }),
        'names name twice',
      ],
      [
        'bool as a string',
        broken((d) => {
          types(d).Person = [
            { name: 'name', type: 'string' },
            { name: 'wallet', type: 'bool' },
          ]
          ;(d.message.from as Record<string, unknown>).wallet = 'false'
        }),
        'not true or false',
      ],
      [
        'missing field',
        broken((d) => {
          delete (d.message.from as Record<string, unknown>).wallet
        }),
        'message.from.wallet is missing',
      ],
      [
        'extra field',
        broken((d) => {
          ;(d.message as Record<string, unknown>).cc = 'x'
        }),
        'cc is not a field of Mail',
      ],
      [
        'unknown domain field',
        broken((d) => {
          ;(d.domain as Record<string, unknown>).foo = 'x'
        }),
        'unknown field foo',
      ],
      [
        'EIP712Domain out of order',
        broken((d) => {
          types(d).EIP712Domain = [
            { name: 'version', type: 'string' },
            { name: 'name', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ]
        }),
        'EIP712Domain must list',
      ],
      [
        'EIP712Domain with a field not given',
        broken((d) => {
          delete (d.domain as Record<string, unknown>).version
        }),
        'EIP712Domain must list',
      ],
      [
        'recursive struct',
        broken((d) => {
          types(d).Person = [
            { name: 'name', type: 'string' },
            { name: 'kids', type: 'Person[]' },
          ]
        }),
        'contains itself',
      ],
      [
        'lone surrogate',
        broken((d) => {
          d.message.contents = 'a\ud800'
        }),
        'not valid Unicode',
      ],
      [
        'domain alone',
        broken((d) => {
          d.primaryType = 'EIP712Domain'
        }),
        'a domain alone',
      ],
    ]
    for (const [what, data, message] of cases) {
      expect(() => ours(data), what).toThrow(message)
    }
  })

  it('drops types the message does not use (ethers refuses them; the digest is the same without)', () => {
    const extra = broken((d) => {
      types(d).Unused = [{ name: 'x', type: 'string' }]
    })
    expect(ours(extra)).toBe(ours(SPEC_MAIL))
  })
})
