/**
 * What the review screen shows of a transaction, as pure functions of its numbers
 * (docs/behaviour.md, "EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN"): coin amounts up to 8 decimals
 * with trailing zeros trimmed, US dollars to 2 decimals ('< USD $0.01' under a cent), the estimated
 * fee, and whether the value is over the balance. In English as SPEC writes them; in another
 * language through `Intl`, in the visitor's locale ('0,01 ETH', '25,10 $US').
 */
import { FIAT_DECIMALS, formatEth, formatFiat, type Hex } from '@latch/shared'
import { locale } from '../i18n/i18n.ts'

/** '0.01 ETH': an amount in wei in the chain's coin. */
export function coinText(wei: bigint, symbol: string, decimals = 18, language = locale()): string {
  const amount = formatEth(wei, decimals)
  if (language === 'en') return `${amount} ${symbol}`
  // The decimal string as it is (no float): Intl formats a numeric string exactly.
  const format = new Intl.NumberFormat(language, { maximumFractionDigits: 20 })
  return `${format.format(amount as Intl.StringNumericLiteral)} ${symbol}`
}

/** The dollar value of an amount in wei at `usdPerCoin`. */
export function usdValue(wei: bigint, usdPerCoin: number, decimals = 18): number {
  // Exact to a cent for any amount a person holds: whole coins and the fraction apart.
  const unit = 10n ** BigInt(decimals)
  return Number(wei / unit) * usdPerCoin + (Number(wei % unit) / Number(unit)) * usdPerCoin
}

/** 'USD $25.10', '< USD $0.01', or null without a price (the line is left out). */
export function fiatText(
  wei: bigint,
  usdPerCoin: number | null,
  decimals = 18,
  language = locale(),
): string | null {
  if (usdPerCoin === null) return null
  const usd = usdValue(wei, usdPerCoin, decimals)
  if (language === 'en' || !(usd >= 0.005)) return formatFiat(usd)
  return new Intl.NumberFormat(language, {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: FIAT_DECIMALS,
    maximumFractionDigits: FIAT_DECIMALS,
  }).format(usd)
}

/** The most the transaction can cost in gas: its gas limit times its (max) fee per gas. */
export function estimatedFee(request: {
  gasLimit?: Hex
  gasPrice?: Hex
  maxFeePerGas?: Hex
}): bigint {
  const perGas = request.maxFeePerGas ?? request.gasPrice
  if (!request.gasLimit || !perGas) return 0n
  return BigInt(request.gasLimit) * BigInt(perGas)
}

/** A plain transfer of value (no call data): its button reads 'Send ETH'. */
export function isPlainTransfer(request: { data?: Hex }): boolean {
  return request.data === undefined || request.data === '0x'
}

/** The value is more than the balance (known): the balance shows in red. */
export function overBalance(value: bigint, balance: bigint | null): boolean {
  return balance !== null && value > balance
}
