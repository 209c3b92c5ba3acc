import { expect, test } from 'vitest'
import { CHAINS, DEFAULT_CHAIN, getChain, isSupportedChainId } from './chains.ts'
import {
  explorerAddressUrl,
  explorerTransactionUrl,
  formatEth,
  formatFiat,
  truncateAddress,
} from './format.ts'

test('behavior: fiat to 2 decimals, under a cent reads < USD $0.01', () => {
  expect(formatFiat(0)).toBe('< USD $0.01')
  expect(formatFiat(0.004)).toBe('< USD $0.01')
  expect(formatFiat(0.01)).toBe('USD $0.01')
  expect(formatFiat(1234.5)).toBe('USD $1,234.50')
})

test('behavior: ETH up to 8 decimals, trailing zeros trimmed', () => {
  expect(formatEth(0n)).toBe('0')
  expect(formatEth(10n ** 18n)).toBe('1')
  expect(formatEth(1_500_000_000_000_000_000n)).toBe('1.5')
  expect(formatEth(123_456_789_012_345_678n)).toBe('0.12345679')
  expect(formatEth(1n)).toBe('0')
  expect(formatEth(10_000_000_000n)).toBe('0.00000001')
})

test('behavior: addresses are truncated', () => {
  expect(truncateAddress('0x1234567890abcdef1234567890abcdef12345678')).toBe('0x1234…5678')
})

test('behavior: the 13 supported chains', () => {
  expect(CHAINS.map((c) => c.id)).toEqual([
    1, 5, 10, 420, 137, 80001, 42161, 421613, 42220, 44787, 314, 314159, 84531,
  ])
  expect(isSupportedChainId(10)).toBe(true)
  expect(isSupportedChainId(31337)).toBe(false)
  expect(DEFAULT_CHAIN.id).toBe(1)
})

test('param: per-chain overrides', () => {
  const chain = getChain(1, { 1: { rpcUrl: 'http://127.0.0.1:8545' } })
  expect(chain?.rpcUrl).toBe('http://127.0.0.1:8545')
  expect(chain?.explorerUrl).toBe('https://etherscan.io')
  expect(getChain(1)?.rpcUrl).not.toBe('http://127.0.0.1:8545')
})

test('behavior: explorer links', () => {
  expect(explorerAddressUrl(1, '0xabc')).toBe('https://etherscan.io/address/0xabc')
  expect(explorerTransactionUrl(10, '0xdef')).toBe('https://optimistic.etherscan.io/tx/0xdef')
  expect(explorerAddressUrl(31337, '0xabc')).toBeUndefined()
})
