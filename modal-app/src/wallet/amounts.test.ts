import { describe, expect, test } from 'vitest'
import {
  coinText,
  estimatedFee,
  fiatText,
  isPlainTransfer,
  overBalance,
  usdValue,
} from './amounts.ts'

const ETHER = 10n ** 18n

describe('coin amounts', () => {
  test('behavior: up to 8 decimals, trailing zeros trimmed, with the symbol', () => {
    expect(coinText(ETHER / 100n, 'ETH')).toBe('0.01 ETH')
    expect(coinText(0n, 'ETH')).toBe('0 ETH')
    expect(coinText(1_234_567_891_234_567_891n, 'ETH')).toBe('1.23456789 ETH')
    expect(coinText(10n * ETHER, 'MATIC')).toBe('10 MATIC')
    expect(coinText(5n, 'ETH')).toBe('0 ETH')
  })
})

describe('dollars', () => {
  test('behavior: 2 decimals; under a cent reads < USD $0.01; no price, no line', () => {
    expect(fiatText(ETHER / 100n, 2500)).toBe('USD $25.00')
    expect(fiatText(ETHER, 1234.567)).toBe('USD $1,234.57')
    expect(fiatText(0n, 2500)).toBe('< USD $0.01')
    expect(fiatText(1_000_000n, 2500)).toBe('< USD $0.01')
    expect(fiatText(ETHER, null)).toBeNull()
  })

  test('edge: large amounts keep their cents', () => {
    expect(usdValue(123_456_789n * ETHER + ETHER / 2n, 2)).toBe(246_913_579)
    expect(fiatText(1_000_000n * ETHER + ETHER / 100n, 3000)).toBe('USD $3,000,000,030.00')
  })
})

describe('fee, transfer, balance', () => {
  test('behavior: the fee is the gas limit times the max fee, else the gas price', () => {
    expect(estimatedFee({ gasLimit: '0x5208', maxFeePerGas: '0x3b9aca00' })).toBe(
      21_000n * 1_000_000_000n,
    )
    expect(estimatedFee({ gasLimit: '0x5208', gasPrice: '0x2' })).toBe(42_000n)
    expect(estimatedFee({ gasLimit: '0x5208', maxFeePerGas: '0x3', gasPrice: '0x2' })).toBe(63_000n)
    expect(estimatedFee({})).toBe(0n)
  })

  test('behavior: a plain transfer has no call data', () => {
    expect(isPlainTransfer({})).toBe(true)
    expect(isPlainTransfer({ data: '0x' })).toBe(true)
    expect(isPlainTransfer({ data: '0xa9059cbb' })).toBe(false)
  })

  test('behavior: over the balance only when the balance is known and smaller', () => {
    expect(overBalance(2n, 1n)).toBe(true)
    expect(overBalance(1n, 1n)).toBe(false)
    expect(overBalance(2n, null)).toBe(false)
  })
})

test('param: amounts in the visitor locale through Intl; English as SPEC writes them', () => {
  const wei = 1_234_567_800_000_000_000_000n
  expect(coinText(wei, 'ETH', 18, 'en')).toBe('1234.5678 ETH')
  expect(coinText(wei, 'ETH', 18, 'de')).toBe('1.234,5678 ETH')
  // French groups with a narrow no-break space.
  expect(coinText(wei, 'ETH', 18, 'fr')).toBe('1\u202f234,5678 ETH')
  expect(fiatText(10n ** 18n, 25.1, 18, 'en')).toBe('USD $25.10')
  expect(fiatText(10n ** 18n, 25.1, 18, 'ja')).toBe('$25.10')
  expect(fiatText(10n ** 18n, 25.1, 18, 'de')).toBe('25,10\u00a0$')
  // Under a cent: SPEC's text in every language.
  expect(fiatText(1n, 25.1, 18, 'de')).toBe('< USD $0.01')
})
