import { expect, test } from 'vitest'
import {
  CHAINS,
  DEFAULT_CHAIN,
  DEFAULT_CHAIN_IDS,
  defaultChainOf,
  getChain,
  isSupportedChainId,
  SPEC_CHAIN_IDS,
} from './chains.ts'
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

test("behavior: today's networks are the default list; SPEC's 13 stay in the table by name", () => {
  // An app that chose no chains has these: no shut-down test network among them.
  expect(DEFAULT_CHAIN_IDS).toEqual([
    1, 10, 137, 42161, 8453, 42220, 314, 11155111, 84532, 11155420, 421614, 80002, 314159,
  ])
  for (const retired of [5, 420, 80001, 421613, 84531, 44787]) {
    expect(DEFAULT_CHAIN_IDS).not.toContain(retired)
  }
  // SPEC's list, literally, for an app whose operator names it.
  expect(SPEC_CHAIN_IDS).toEqual([
    1, 5, 10, 420, 137, 80001, 42161, 421613, 42220, 44787, 314, 314159, 84531,
  ])
  expect(CHAINS.map((c) => c.id)).toEqual([
    ...SPEC_CHAIN_IDS,
    11155111,
    8453,
    84532,
    11155420,
    421614,
    80002,
  ])
  expect(new Set(CHAINS.map((c) => c.id)).size).toBe(CHAINS.length)
  for (const chain of CHAINS) {
    expect(chain.rpcUrl, chain.name).toMatch(/^https:\/\//)
    expect(chain.explorerUrl, chain.name).toMatch(/^https:\/\//)
    expect(chain.nativeCurrency.decimals, chain.name).toBe(18)
  }
  expect(getChain(8453)).toMatchObject({ name: 'Base', nativeCurrency: { symbol: 'ETH' } })
  expect(getChain(80002)).toMatchObject({ name: 'Polygon Amoy', nativeCurrency: { symbol: 'POL' } })
  // Polygon's coin has been POL since its migration from MATIC.
  expect(getChain(137)).toMatchObject({ nativeCurrency: { name: 'POL', symbol: 'POL' } })
  expect(isSupportedChainId(10)).toBe(true)
  expect(isSupportedChainId(8453)).toBe(true)
  expect(isSupportedChainId(31337)).toBe(false)
  // An app's list narrows it.
  expect(isSupportedChainId(8453, [8453])).toBe(true)
  expect(isSupportedChainId(1, [8453])).toBe(false)
  expect(isSupportedChainId(31337, [31337])).toBe(false)
  expect(DEFAULT_CHAIN.id).toBe(1)
  expect(defaultChainOf(DEFAULT_CHAIN_IDS)).toBe(1)
  expect(defaultChainOf([84532, 8453])).toBe(84532)
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
