/**
 * The frame's signing against an independent implementation (viem): generated inputs of every
 * method give the same digest, the same signature and the same raw transaction; and each
 * generated input with one value broken (a checksum, a type name, a width, a length, a coercible
 * type, an unknown field) is refused, never signed. Recursive structs, which ethers cannot
 * encode, are refused too. The inputs come from fast-check with fixed seeds, so a failure repeats.
 * Each property also counts the kinds of input it generated and checks that every kind (each
 * method, transaction type and way of breaking an input) came up many times, so the number of
 * runs is enough for what the property claims.
 */
import { CHAINS, type Hex, isLatchError } from '@latch/shared'
import fc from 'fast-check'
import {
  bytesToHex,
  getAddress,
  hashMessage,
  hashTypedData,
  hexToBytes,
  recoverAddress,
  recoverTransactionAddress,
  type TransactionSerializable,
  type TypedDataDefinition,
} from 'viem'
import { privateKeyToAccount, signMessage, signTypedData } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import type { KeyHolder } from './rpc/call.ts'
import { walletRpc } from './rpc/dispatch.ts'
import { signTransactionFields } from './rpc/transaction.ts'
import { typedDataDigest } from './rpc/typed-data.ts'

/**
 * Runs per property: enough for the rarest kind of input of each to come up EACH_KIND_AT_LEAST
 * times with its seed (the tally checks it, so a change of the generators that makes a kind
 * rarer fails the property rather than thinning its coverage unseen). The rarest are a typed
 * data's address field with a checksum to break and a deploying type 1 or type 2 transaction.
 */
const RUNS = { messages: 250, typedData: 500, transactions: 650 } as const
/** How often each kind of generated input must have come up in a property's runs. */
const EACH_KIND_AT_LEAST = 25

/** Counts generated inputs by kind, and checks every expected kind came up often enough. */
function tally() {
  const counts = new Map<string, number>()
  return {
    add(kind: string) {
      counts.set(kind, (counts.get(kind) ?? 0) + 1)
    },
    expectEach(kinds: readonly string[]) {
      const seen = Object.fromEntries(kinds.map((k) => [k, counts.get(k) ?? 0]))
      const few = Object.entries(seen).filter(([, n]) => n < EACH_KIND_AT_LEAST)
      expect(few, `kinds generated fewer than ${EACH_KIND_AT_LEAST} times`).toEqual([])
      // Nothing counted under a name the test does not expect (a renamed kind would hide).
      expect([...counts.keys()].filter((k) => !kinds.includes(k))).toEqual([])
    },
  }
}

/** Eight keys (viem's accounts give each address); each case signs with one of them. */
const KEYS = Array.from({ length: 8 }, (_, i) => {
  const privateKey =
    `0x${(BigInt(i + 1) * 0x9e3779b97f4a7c15f39cc0605cedc834n).toString(16).padStart(64, '0')}` as Hex
  return { privateKey, address: privateKeyToAccount(privateKey).address }
})

const holder: KeyHolder = {
  async withKey(params, use) {
    const found = KEYS.find((k) => k.address === params.address)
    if (!found) throw new Error('no such key')
    const key = hexToBytes(found.privateKey)
    try {
      return await use(key)
    } finally {
      key.fill(0)
    }
  },
}

const rpc = walletRpc({
  wallet: holder,
  chain: () => {
    throw new Error('signing reads no chain')
  },
  defaultChainId: 1,
})

function call(address: Hex, method: string, params: unknown): Promise<unknown> {
  return rpc({ address, accessToken: 't', request: { method, params } }).then((r) => r.response)
}

async function refused(p: Promise<unknown>): Promise<boolean> {
  try {
    await p
    return false
  } catch (e) {
    return isLatchError(e)
  }
}

/** A mixed-case address whose checksum is wrong: one letter of a checksummed one flipped. */
function wrongChecksum(address: string, pick: number): string | undefined {
  const letters = [...address.slice(2)].flatMap((c, i) => (/[a-fA-F]/.test(c) ? [i + 2] : []))
  for (let k = 0; k < letters.length; k++) {
    const i = letters[(pick + k) % letters.length] as number
    const c = address[i] as string
    const flipped =
      address.slice(0, i) +
      (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) +
      address.slice(i + 1)
    const body = flipped.slice(2)
    if (/[a-f]/.test(body) && /[A-F]/.test(body)) return flipped
  }
  return undefined
}

const key = fc.constantFrom(...KEYS)
const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => getAddress(bytesToHex(b)))
const hexOf = (b: Uint8Array) => bytesToHex(b)

describe('personal_sign and eth_sign against viem', () => {
  it(`signs ${RUNS.messages} generated messages (text, unicode, bytes) to viem's hash and signature; a wrong checksum is refused`, async () => {
    const kinds = tally()
    await fc.assert(
      fc.asyncProperty(
        key,
        fc.oneof(
          fc.string({ minLength: 1, maxLength: 80, unit: 'grapheme' }),
          fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/^0x/.test(s)),
          fc.uint8Array({ minLength: 1, maxLength: 120 }).map(hexOf),
        ),
        fc.boolean(),
        fc.nat(),
        async (k, message, personal, pick) => {
          const expectedMessage = /^0x([0-9a-fA-F]{2})+$/.test(message)
            ? { raw: message as Hex }
            : message
          const method = personal ? 'personal_sign' : 'eth_sign'
          kinds.add(`${method} ${typeof expectedMessage === 'string' ? 'text' : 'bytes'}`)
          const params = (a: string) => (personal ? [message, a] : [a, message])
          const ours = await call(k.address, method, params(k.address))
          expect(ours).toBe(
            await signMessage({ message: expectedMessage, privateKey: k.privateKey }),
          )
          // The digest too: the signature recovers the wallet over viem's EIP-191 hash.
          expect(
            await recoverAddress({ hash: hashMessage(expectedMessage), signature: ours as Hex }),
          ).toBe(k.address)
          const wrong = wrongChecksum(k.address, pick)
          if (wrong) {
            kinds.add('wrong checksum')
            expect(await refused(call(k.address, method, params(wrong)))).toBe(true)
          }
        },
      ),
      { numRuns: RUNS.messages, seed: 21_001 },
    )
    kinds.expectEach([
      'personal_sign text',
      'personal_sign bytes',
      'eth_sign text',
      'eth_sign bytes',
      'wrong checksum',
    ])
  }, 300_000)
})

// Typed data: a generated set of structs (each may use the ones after it, so no cycle), values
// for each type, and a domain with any subset of its five fields.

type Field = { name: string; type: string }
const ATOMICS = [
  'address',
  'bool',
  'string',
  'bytes',
  'bytes1',
  'bytes4',
  'bytes20',
  'bytes32',
  'uint8',
  'uint32',
  'uint64',
  'uint128',
  'uint256',
  'int8',
  'int64',
  'int136',
  'int256',
]

function arbOf(type: string, structs: Record<string, Field[]>): fc.Arbitrary<unknown> {
  const array = /^(.*)\[(\d*)\]$/.exec(type)
  if (array) {
    const inner = arbOf(array[1] as string, structs)
    const n = array[2] ? Number(array[2]) : undefined
    return fc.array(inner, n === undefined ? { maxLength: 3 } : { minLength: n, maxLength: n })
  }
  const fields = structs[type]
  if (fields) {
    return fc.record(Object.fromEntries(fields.map((f) => [f.name, arbOf(f.type, structs)])))
  }
  if (type === 'address') return address
  if (type === 'bool') return fc.boolean()
  if (type === 'string') return fc.string({ maxLength: 30, unit: 'grapheme' })
  if (type === 'bytes') return fc.uint8Array({ maxLength: 70 }).map(hexOf)
  const bytesN = /^bytes(\d+)$/.exec(type)
  if (bytesN) {
    const n = Number(bytesN[1])
    return fc.uint8Array({ minLength: n, maxLength: n }).map(hexOf)
  }
  const bits = BigInt(type.replace(/^u?int/, ''))
  const [min, max] = type.startsWith('int')
    ? [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n]
    : [0n, (1n << bits) - 1n]
  const n = fc.oneof(fc.constantFrom(min, max, 0n), fc.bigInt({ min, max }))
  // Integers come as bigints, decimal strings, hex strings (non-negative) and safe numbers.
  return n.chain((v) =>
    fc.constantFrom<unknown>(
      v,
      v.toString(),
      ...(v >= 0n ? [`0x${v.toString(16)}`] : []),
      ...(v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
        ? [Number(v)]
        : []),
    ),
  )
}

const typeOf = (structNames: string[]) =>
  fc
    .tuple(
      fc.constantFrom(...ATOMICS, ...structNames),
      fc.constantFrom('', '', '', '[]', '[2]', '[1][]'),
    )
    .map(([t, suffix]) => t + suffix)

/** Struct i may use structs i+1… only: nested, never recursive. */
const structsArb = fc.integer({ min: 1, max: 4 }).chain((count) => {
  const names = Array.from({ length: count }, (_, i) => `S${i}x`)
  return fc
    .tuple(
      ...names.map((_, i) =>
        fc.uniqueArray(
          fc.tuple(fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,6}$/), typeOf(names.slice(i + 1))),
          { minLength: 1, maxLength: 4, selector: ([n]) => n },
        ),
      ),
    )
    .map((lists) =>
      Object.fromEntries(
        lists.map((l, i) => [names[i], l.map(([name, type]) => ({ name, type }))]),
      ),
    )
})

const DOMAIN_TYPES: Field[] = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
  { name: 'salt', type: 'bytes32' },
]

const domainArb = fc.record(
  {
    name: fc.string({ maxLength: 20, unit: 'grapheme' }),
    version: fc.string({ maxLength: 5 }),
    chainId: fc.oneof(
      fc.constantFrom(1, 137, 8453),
      fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
    ),
    verifyingContract: address,
    salt: fc.uint8Array({ minLength: 32, maxLength: 32 }).map(hexOf),
  },
  { requiredKeys: [] },
)

/** Drops the S…x structs the primary does not use (viem hashes the same either way). */
const typedDataArb = fc
  .tuple(structsArb, domainArb, fc.boolean())
  .chain(([structs, domain, declareDomain]) =>
    arbOf('S0x', structs).map((message) => ({
      types: {
        ...(declareDomain && {
          EIP712Domain: DOMAIN_TYPES.filter(
            (f) => (domain as Record<string, unknown>)[f.name] !== undefined,
          ),
        }),
        ...structs,
      },
      primaryType: 'S0x',
      domain,
      message,
    })),
  )

type Typed = {
  types: Record<string, Field[]>
  primaryType: string
  domain: Record<string, unknown>
  message: Record<string, unknown>
}

/** viem with the domain's type as ethers derives it (viem takes it from `types` when declared). */
function viemDigest(d: Typed): Hex {
  return hashTypedData(d as unknown as TypedDataDefinition)
}

/** One value of the data broken, each a way the issue found input signed that must not be. */
function breakings(d: Typed, pick: number): { what: string; data: Typed }[] {
  const out: { what: string; data: Typed }[] = []
  const copy = () => structuredClone(d)
  const withField = (edit: (f: Field) => string | undefined, what: string) => {
    const data = copy()
    for (const [name, fields] of Object.entries(data.types)) {
      if (name === 'EIP712Domain') continue
      for (const f of fields) {
        const t = edit(f)
        if (t !== undefined) {
          f.type = t
          out.push({ what, data })
          return
        }
      }
    }
  }
  withField(
    (f) => (/^uint256/.test(f.type) ? f.type.replace('uint256', 'uint') : undefined),
    'uint without width',
  )
  withField(
    (f) => (/^int256/.test(f.type) ? f.type.replace('int256', 'int') : undefined),
    'int without width',
  )
  withField(
    (f) => (/^uint8/.test(f.type) ? f.type.replace('uint8', 'uint08') : undefined),
    'uint08',
  )
  withField(
    (f) => (/^bytes32/.test(f.type) ? f.type.replace('bytes32', 'bytes032') : undefined),
    'bytes032',
  )
  for (const [what, name] of [
    ['struct named uint256', 'uint256'],
    ['struct name with a space', 'S x'],
    ['struct name with parentheses', 'S(uint256 a)'],
  ] as const) {
    const data = copy()
    data.types[name] = [{ name: 'a', type: 'uint256' }]
    out.push({ what, data })
  }
  {
    const data = copy()
    const first = data.types.S0x as Field[]
    first.push({ ...(first[0] as Field) })
    out.push({ what: 'duplicate field', data })
  }
  {
    const data = copy()
    ;(data.message as Record<string, unknown>).zzExtra = 1
    out.push({ what: 'unknown message field', data })
  }
  {
    const data = copy()
    const first = (data.types.S0x as Field[])[0] as Field
    delete data.message[first.name]
    out.push({ what: 'missing message field', data })
  }
  {
    const data = copy()
    const first = (data.types.S0x as Field[])[0] as Field
    data.message[first.name] = first.type === 'bool' ? 'true' : first.type === 'string' ? 5 : true
    out.push({ what: 'coercible value', data })
  }
  if (typeof d.domain.verifyingContract === 'string') {
    const wrong = wrongChecksum(d.domain.verifyingContract, pick)
    if (wrong) {
      const data = copy()
      data.domain.verifyingContract = wrong
      out.push({ what: 'verifyingContract checksum', data })
    }
  }
  const addressField = (d.types.S0x as Field[]).find((f) => f.type === 'address')
  if (addressField) {
    const wrong = wrongChecksum(d.message[addressField.name] as string, pick)
    if (wrong) {
      const data = copy()
      data.message[addressField.name] = wrong
      out.push({ what: 'address checksum', data })
    }
  }
  const bytesField = (d.types.S0x as Field[]).find((f) => /^bytes\d+$/.test(f.type))
  if (bytesField) {
    const data = copy()
    data.message[bytesField.name] = `${data.message[bytesField.name]}00`
    out.push({ what: 'bytesN length', data })
  }
  if (d.types.EIP712Domain && d.types.EIP712Domain.length > 1) {
    const data = copy()
    ;(data.types.EIP712Domain as Field[]).reverse()
    out.push({ what: 'EIP712Domain order', data })
  }
  return out
}

describe('eth_signTypedData_v4 against viem', () => {
  it(`gives viem's digest and signature for ${RUNS.typedData} generated typed data, and refuses each with one value broken`, async () => {
    let brokenCount = 0
    const kinds = tally()
    await fc.assert(
      fc.asyncProperty(key, typedDataArb, fc.nat(), fc.boolean(), async (k, data, pick, asJson) => {
        const d = data as unknown as Typed
        const digest = viemDigest(d)
        expect(typedDataDigest(d)).toBe(digest)
        const params = asJson
          ? JSON.stringify(d, (_, v) => (typeof v === 'bigint' ? v.toString() : v))
          : d
        const ours = await call(k.address, 'eth_signTypedData_v4', [k.address, params])
        expect(ours).toBe(
          await signTypedData({
            ...(d as unknown as TypedDataDefinition),
            privateKey: k.privateKey,
          }),
        )
        for (const { what, data: bad } of breakings(d, pick)) {
          brokenCount++
          kinds.add(what)
          expect(
            await refused(call(k.address, 'eth_signTypedData_v4', [k.address, bad])),
            what,
          ).toBe(true)
        }
      }),
      { numRuns: RUNS.typedData, seed: 21_002 },
    )
    expect(brokenCount).toBeGreaterThan(RUNS.typedData * 5)
    kinds.expectEach([
      'uint without width',
      'int without width',
      'uint08',
      'bytes032',
      'struct named uint256',
      'struct name with a space',
      'struct name with parentheses',
      'duplicate field',
      'unknown message field',
      'missing message field',
      'coercible value',
      'verifyingContract checksum',
      'address checksum',
      'bytesN length',
      'EIP712Domain order',
    ])
  }, 300_000)

  it('refuses recursive structs (viem hashes them; ethers has no encoding for them)', async () => {
    const k = KEYS[0] as (typeof KEYS)[number]
    const data = {
      types: {
        Node: [
          { name: 'v', type: 'uint256' },
          { name: 'kids', type: 'Node[]' },
        ],
      },
      primaryType: 'Node',
      domain: { name: 'tree' },
      message: { v: 1, kids: [{ v: 2, kids: [] }] },
    }
    expect(viemDigest(data)).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await refused(call(k.address, 'eth_signTypedData_v4', [k.address, data]))).toBe(true)
  })
})

// Transactions.

const SUPPORTED = CHAINS.map((c) => c.id)
const qty = (max: bigint) => fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max }))
/** A quantity as the request may carry it: bigint, safe number, hex, hex with leading zeros. */
const asQuantity = (n: bigint) =>
  fc.constantFrom<unknown>(
    n,
    `0x${n.toString(16)}`,
    `0x000${n.toString(16)}`,
    ...(n <= BigInt(Number.MAX_SAFE_INTEGER) ? [Number(n)] : []),
  )

const accessListArb = fc.array(
  fc.record({
    address,
    storageKeys: fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }).map(hexOf), {
      maxLength: 3,
    }),
  }),
  { maxLength: 3 },
)

const txArb = fc.record({
  type: fc.constantFrom(0, 1, 2) as fc.Arbitrary<0 | 1 | 2>,
  chainId: fc.constantFrom(...SUPPORTED),
  nonce: fc.oneof(fc.constant(0), fc.nat({ max: 2 ** 40 })),
  gasLimit: qty(30_000_000n),
  to: fc.option(address, { nil: undefined }),
  value: qty((1n << 256n) - 1n),
  data: fc.uint8Array({ maxLength: 80 }).map(hexOf),
  gasPrice: qty(10n ** 13n),
  maxFeePerGas: qty(10n ** 13n),
  tipShare: fc.integer({ min: 0, max: 100 }),
  accessList: accessListArb,
})

interface GenTx {
  type: 0 | 1 | 2
  chainId: number
  nonce: number
  gasLimit: bigint
  to?: Hex
  value: bigint
  data: Hex
  gasPrice: bigint
  maxFeePerGas: bigint
  tipShare: number
  accessList: { address: Hex; storageKeys: Hex[] }[]
}

function viemTx(t: GenTx): TransactionSerializable {
  const tip = (t.maxFeePerGas * BigInt(t.tipShare)) / 100n
  const base = {
    chainId: t.chainId,
    nonce: t.nonce,
    gas: t.gasLimit,
    ...(t.to && { to: t.to }),
    value: t.value,
    data: t.data,
  }
  if (t.type === 2) {
    return {
      ...base,
      type: 'eip1559',
      maxFeePerGas: t.maxFeePerGas,
      maxPriorityFeePerGas: tip,
      accessList: t.accessList,
    }
  }
  if (t.type === 1)
    return { ...base, type: 'eip2930', gasPrice: t.gasPrice, accessList: t.accessList }
  return { ...base, type: 'legacy', gasPrice: t.gasPrice }
}

async function viemSigned(t: GenTx, privateKey: Hex): Promise<Hex> {
  return privateKeyToAccount(privateKey).signTransaction(viemTx(t))
}

describe('eth_signTransaction against viem', () => {
  it(`serializes and signs ${RUNS.transactions} generated transactions of types 0, 1 and 2 to viem's bytes, and refuses each with one value broken`, async () => {
    const kinds = tally()
    await fc.assert(
      fc.asyncProperty(key, txArb, fc.nat(), fc.gen(), async (k, t, pick, g) => {
        kinds.add(`type ${t.type}${t.to ? '' : ' deploying'}`)
        const tip = (t.maxFeePerGas * BigInt(t.tipShare)) / 100n
        const request: Record<string, unknown> = {
          from: g(fc.constantFrom, k.address, k.address.toLowerCase()),
          type: g(fc.constantFrom, t.type, `0x${t.type}`, `0x0${t.type}`),
          chainId: t.chainId,
          nonce: t.nonce,
          gasLimit: g(asQuantity, t.gasLimit),
          ...(t.to && { to: t.to }),
          value: g(asQuantity, t.value),
          data: t.data,
          ...(t.type === 2
            ? {
                maxFeePerGas: g(asQuantity, t.maxFeePerGas),
                maxPriorityFeePerGas: g(asQuantity, tip),
              }
            : { gasPrice: g(asQuantity, t.gasPrice) }),
          ...(t.type !== 0 && { accessList: t.accessList }),
        }
        const expected = await viemSigned(t, k.privateKey)
        const ours = (await call(k.address, 'eth_signTransaction', [request])) as Hex
        expect(ours).toBe(expected)
        // viem reads the wallet back as the signer of the raw transaction.
        expect(await recoverTransactionAddress({ serializedTransaction: ours as never })).toBe(
          k.address,
        )

        const broken: [string, Record<string, unknown>][] = [
          ['type true', { ...request, type: true }],
          ['type [2]', { ...request, type: [t.type] }],
          ['type "2.0"', { ...request, type: `${t.type}.0` }],
          ['type ""', { ...request, type: '' }],
          ['type 4', { ...request, type: 4 }],
          ['authorizationList', { ...request, authorizationList: [] }],
          ['input', { ...request, input: t.data }],
          ['gas', { ...request, gas: request.gasLimit }],
          ['nonce as a decimal string', { ...request, nonce: String(t.nonce) }],
          ['negative value', { ...request, value: -1 }],
          ['odd-length data', { ...request, data: `${t.data}0` }],
          ['chainId as a string', { ...request, chainId: String(t.chainId) }],
          ['unsupported chain', { ...request, chainId: 999_999_999 }],
          [
            'another from',
            { ...request, from: KEYS[(KEYS.indexOf(k) + 1) % KEYS.length]?.address },
          ],
          t.type === 2
            ? ['gasPrice on type 2', { ...request, gasPrice: 1 }]
            : ['maxFeePerGas on a legacy family', { ...request, maxFeePerGas: 1 }],
        ]
        if (t.type === 2 && t.maxFeePerGas > 0n) {
          broken.push([
            'tip above max fee',
            { ...request, maxPriorityFeePerGas: t.maxFeePerGas + 1n },
          ])
        }
        if (t.type === 0) broken.push(['access list on type 0', { ...request, accessList: [] }])
        const wrongFrom = wrongChecksum(k.address, pick)
        if (wrongFrom) broken.push(['from checksum', { ...request, from: wrongFrom }])
        if (t.to) {
          const wrongTo = wrongChecksum(t.to, pick)
          if (wrongTo) broken.push(['to checksum', { ...request, to: wrongTo }])
        }
        const entry = t.accessList[0]
        if (t.type !== 0 && entry) {
          const wrong = wrongChecksum(entry.address, pick)
          if (wrong) {
            broken.push([
              'access list checksum',
              { ...request, accessList: [{ ...entry, address: wrong }, ...t.accessList.slice(1)] },
            ])
          }
          broken.push([
            'access list key length',
            { ...request, accessList: [{ ...entry, storageKeys: ['0x01'] }] },
          ])
        }
        for (const [what, bad] of broken) {
          kinds.add(what)
          expect(await refused(call(k.address, 'eth_signTransaction', [bad])), what).toBe(true)
        }
      }),
      { numRuns: RUNS.transactions, seed: 21_003 },
    )
    kinds.expectEach([
      ...[0, 1, 2].flatMap((type) => [`type ${type}`, `type ${type} deploying`]),
      'type true',
      'type [2]',
      'type "2.0"',
      'type ""',
      'type 4',
      'authorizationList',
      'input',
      'gas',
      'nonce as a decimal string',
      'negative value',
      'odd-length data',
      'chainId as a string',
      'unsupported chain',
      'another from',
      'gasPrice on type 2',
      'maxFeePerGas on a legacy family',
      'tip above max fee',
      'access list on type 0',
      'from checksum',
      'to checksum',
      'access list checksum',
      'access list key length',
    ])
  }, 300_000)

  it("signs large chain ids as viem does (the serialization, below the frame's chain check)", async () => {
    await fc.assert(
      fc.asyncProperty(
        key,
        txArb,
        fc.oneof(
          fc.bigInt({ min: 1n, max: (1n << 64n) - 1n }),
          fc.constant(BigInt(Number.MAX_SAFE_INTEGER)),
        ),
        async (k, t, chainId) => {
          const g = { ...t, chainId: Number(chainId) }
          if (!Number.isSafeInteger(g.chainId)) return
          const tip = (t.maxFeePerGas * BigInt(t.tipShare)) / 100n
          const key = hexToBytes(k.privateKey)
          const ours = signTransactionFields(
            {
              type: t.type,
              chainId: BigInt(g.chainId),
              nonce: t.nonce,
              gasLimit: t.gasLimit,
              to: t.to ?? null,
              value: t.value,
              data: t.data,
              gasPrice: t.type === 2 ? 0n : t.gasPrice,
              maxFeePerGas: t.type === 2 ? t.maxFeePerGas : 0n,
              maxPriorityFeePerGas: t.type === 2 ? tip : 0n,
              accessList: t.type === 0 ? [] : t.accessList,
            },
            key,
          )
          expect(ours).toBe(await viemSigned(g, k.privateKey))
        },
      ),
      { numRuns: 300, seed: 21_004 },
    )
  }, 300_000)
})
