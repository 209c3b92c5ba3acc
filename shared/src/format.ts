import { type ChainOverrides, getChain } from './chains.ts'
import { ETH_MAX_DECIMALS, FIAT_DECIMALS, FIAT_MINIMUM_TEXT } from './constants.ts'

/** A US dollar amount with 2 decimals; anything under one cent reads '< USD $0.01'. */
export function formatFiat(usd: number): string {
  if (!Number.isFinite(usd) || usd < 0.005) return FIAT_MINIMUM_TEXT
  const text = usd.toLocaleString('en-US', {
    minimumFractionDigits: FIAT_DECIMALS,
    maximumFractionDigits: FIAT_DECIMALS,
  })
  return `USD $${text}`
}

/**
 * An amount in wei as ether with at most 8 decimals, rounded half up, trailing zeros trimmed.
 * @example formatEth(1_500_000_000_000_000_000n) // '1.5'
 */
export function formatEth(wei: bigint, decimals = 18): string {
  const negative = wei < 0n
  const abs = negative ? -wei : wei
  const scale = 10n ** BigInt(Math.max(decimals - ETH_MAX_DECIMALS, 0))
  const rounded = decimals > ETH_MAX_DECIMALS ? (abs + scale / 2n) / scale : abs
  const shown = Math.min(decimals, ETH_MAX_DECIMALS)
  const unit = 10n ** BigInt(shown)
  const whole = rounded / unit
  const fraction = (rounded % unit).toString().padStart(shown, '0').replace(/0+$/, '')
  const text = fraction ? `${whole}.${fraction}` : whole.toString()
  return negative && text !== '0' ? `-${text}` : text
}

/** '0x1234…abcd': the first 6 and last 4 characters of an address. */
export function truncateAddress(address: string): string {
  if (address.length <= 12) return address
  return `${address.slice(0, 6)}…${address.slice(-4)}`
}

export function explorerAddressUrl(
  chainId: number,
  address: string,
  overrides?: ChainOverrides,
): string | undefined {
  const chain = getChain(chainId, overrides)
  return chain ? `${chain.explorerUrl}/address/${address}` : undefined
}

export function explorerTransactionUrl(
  chainId: number,
  hash: string,
  overrides?: ChainOverrides,
): string | undefined {
  const chain = getChain(chainId, overrides)
  return chain ? `${chain.explorerUrl}/tx/${hash}` : undefined
}
