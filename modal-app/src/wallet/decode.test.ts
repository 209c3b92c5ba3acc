// @vitest-environment node
/**
 * The review screens' decoding (decode.ts, on viem) checked against an independent
 * implementation: ethers v6 encodes random ERC-20 calls and decode.ts must read back exactly
 * what was encoded; malformed or non-canonical calldata is refused (null), never half-read.
 */
import { randomBytes } from 'node:crypto'
import { getAddress, Interface, MaxUint256 } from 'ethers'
import { describe, expect, test } from 'vitest'
import { decodeCalldata, summarizeTypedData, UNLIMITED_ALLOWANCE } from './decode.ts'

const erc20 = new Interface([
  'function transfer(address to, uint256 amount)',
  'function approve(address spender, uint256 amount)',
  'function transferFrom(address from, address to, uint256 amount)',
  'function balanceOf(address owner)',
])

const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`)
/** Amounts across the range: small, 128-bit, full 256-bit, and the edges that matter. */
function randomAmount(i: number): bigint {
  const edges = [0n, 1n, UNLIMITED_ALLOWANCE - 1n, UNLIMITED_ALLOWANCE, MaxUint256]
  if (i < edges.length) return edges[i] as bigint
  const bytes = [1, 16, 32][i % 3] as number
  return BigInt(`0x${randomBytes(bytes).toString('hex')}`)
}

describe('decodeCalldata against ethers', () => {
  test('behavior: 300 random transfer, approve and transferFrom calls read back as ethers encoded them', () => {
    for (let i = 0; i < 300; i++) {
      const amount = randomAmount(i % 100)
      const [a, b] = [randomAddress(), randomAddress()]
      const kind = i % 3
      if (kind === 0) {
        const data = erc20.encodeFunctionData('transfer', [a, amount])
        expect(decodeCalldata(data)).toEqual({ name: 'transfer', to: a, amount })
      } else if (kind === 1) {
        const data = erc20.encodeFunctionData('approve', [a, amount])
        expect(decodeCalldata(data)).toEqual({
          name: 'approve',
          spender: a,
          amount,
          unlimited: amount >= 2n ** 255n,
        })
        // Upper-case hex is the same bytes.
        expect(decodeCalldata(`0x${data.slice(2).toUpperCase()}`)).toMatchObject({ amount })
      } else {
        const data = erc20.encodeFunctionData('transferFrom', [a, b, amount])
        expect(decodeCalldata(data)).toEqual({ name: 'transferFrom', from: a, to: b, amount })
      }
    }
  })

  test('behavior: max uint256 and anything from 2^255 up read as unlimited; just under does not', () => {
    const spender = randomAddress()
    const approve = (amount: bigint) =>
      decodeCalldata(erc20.encodeFunctionData('approve', [spender, amount]))
    expect(approve(MaxUint256)).toMatchObject({ unlimited: true })
    expect(approve(2n ** 255n)).toMatchObject({ unlimited: true })
    expect(approve(2n ** 255n - 1n)).toMatchObject({ unlimited: false })
  })

  test('error: malformed, truncated, padded, dirty or other calldata is refused', () => {
    const to = randomAddress()
    const good = erc20.encodeFunctionData('transfer', [to, 5n])
    const dirty = `${good.slice(0, 10)}${'ff'.repeat(12)}${good.slice(34)}`
    for (const data of [
      undefined,
      '',
      '0x',
      '0xa9059cbb',
      good.slice(0, -2),
      `${good}00`,
      `${good}${'00'.repeat(32)}`,
      `${good.slice(0, -1)}`,
      `${good.slice(0, -2)}zz`,
      dirty,
      erc20.encodeFunctionData('balanceOf', [to]),
      `0x12345678${good.slice(10)}`,
      // An approve whose amount runs past 256 bits cannot be (ethers would not encode it).
      `0x095ea7b3${good.slice(10, 74)}`,
    ]) {
      expect(decodeCalldata(data)).toBeNull()
    }
    // Random bytes behind each selector: refused unless they happen to be canonical.
    for (let i = 0; i < 200; i++) {
      const selector = ['0xa9059cbb', '0x095ea7b3', '0x23b872dd'][i % 3] as string
      const body = randomBytes(1 + (i % 100)).toString('hex')
      const decoded = decodeCalldata(`${selector}${body}`)
      if (decoded !== null) {
        const name = decoded.name
        const args =
          decoded.name === 'transferFrom'
            ? [decoded.from, decoded.to, decoded.amount]
            : [decoded.name === 'approve' ? decoded.spender : decoded.to, decoded.amount]
        expect(erc20.encodeFunctionData(name, args)).toBe(`${selector}${body}`)
      }
    }
  })
})

describe('summarizeTypedData', () => {
  const permitTypes = {
    Permit: [
      { name: 'owner', type: 'address' },
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'nonce', type: 'uint256' },
      { name: 'deadline', type: 'uint256' },
    ],
  }
  const permit = (value: string, domain: Record<string, unknown> = {}) => ({
    domain: { name: 'USD Coin', version: '2', chainId: 1, ...domain },
    types: permitTypes,
    primaryType: 'Permit',
    message: {
      owner: `0x${'12'.repeat(20)}`,
      spender: `0x${'34'.repeat(20)}`,
      value,
      nonce: 0,
      deadline: '0x70000000',
    },
  })

  test('behavior: the domain by name, chain name and checksummed contract; JSON reads the same', () => {
    const contract = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'
    const data = permit('1000', { verifyingContract: contract })
    const expected = {
      name: 'USD Coin',
      version: '2',
      chain: 'Ethereum',
      verifyingContract: getAddress(contract),
      permit: { value: 1000n, unlimited: false, spender: getAddress(`0x${'34'.repeat(20)}`) },
    }
    expect(summarizeTypedData(data)).toMatchObject(expected)
    expect(summarizeTypedData(JSON.stringify(data))).toMatchObject(expected)
    expect(summarizeTypedData(permit('1', { chainId: 424242 }))?.chain).toBe('Chain 424242')
    expect(summarizeTypedData(permit('1', { chainId: '0x1' }))?.chain).toBe('Ethereum')
  })

  test('behavior: a permit of max uint256 (decimal or hex) or from 2^255 is unlimited', () => {
    expect(summarizeTypedData(permit(MaxUint256.toString()))?.permit?.unlimited).toBe(true)
    expect(summarizeTypedData(permit(`0x${'f'.repeat(64)}`))?.permit?.unlimited).toBe(true)
    expect(summarizeTypedData(permit((2n ** 255n).toString()))?.permit?.unlimited).toBe(true)
    expect(summarizeTypedData(permit((2n ** 255n - 1n).toString()))?.permit?.unlimited).toBe(false)
  })

  test('error: not typed data, or a Permit whose type differs from EIP-2612, decodes no permit', () => {
    expect(summarizeTypedData('not json')).toBeNull()
    expect(summarizeTypedData('[1]')).toBeNull()
    const extraField = {
      ...permit('1'),
      types: { Permit: [...permitTypes.Permit, { name: 'x', type: 'uint8' }] },
    }
    expect(summarizeTypedData(extraField)?.permit).toBeNull()
    const renamed = {
      ...permit('1'),
      types: {
        Permit: permitTypes.Permit.map((f) => (f.name === 'value' ? { ...f, type: 'int256' } : f)),
      },
    }
    expect(summarizeTypedData(renamed)?.permit).toBeNull()
    expect(summarizeTypedData(permit((2n ** 256n).toString()))?.permit).toBeNull()
    expect(summarizeTypedData({ domain: 'x' })).toMatchObject({
      name: null,
      chain: null,
      verifyingContract: null,
      permit: null,
    })
  })
})
