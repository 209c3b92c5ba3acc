/**
 * USD price of a chain's native currency from LATCH_PRICE_URL, cached briefly. Never invents a
 * number: no source, a failing source or an unreadable answer is price_unavailable (503).
 */
import { getChain, LatchError } from '@latch/shared'
import type { Clock } from '../clock.ts'

export interface PriceSource {
  usd(chainId: number): Promise<number>
}

export const PRICE_CACHE_MS = 60_000
const FETCH_TIMEOUT_MS = 5_000

/**
 * CoinGecko's id of each supported chain's native coin, for `{coinId}` (its simple-price API
 * takes ids: `/api/v3/simple/price?ids={coinId}&vs_currencies=usd`). A test network's coin is
 * priced as its main network's, as `{symbol}` (ETH for Goerli Ether) already does.
 */
export const COIN_IDS: Readonly<Record<number, string>> = {
  1: 'ethereum',
  5: 'ethereum',
  10: 'ethereum',
  420: 'ethereum',
  42161: 'ethereum',
  421613: 'ethereum',
  84531: 'ethereum',
  137: 'polygon-ecosystem-token',
  80001: 'matic-network',
  42220: 'celo',
  44787: 'celo',
  314: 'filecoin',
  314159: 'filecoin',
  11155111: 'ethereum',
  8453: 'ethereum',
  84532: 'ethereum',
  11155420: 'ethereum',
  421614: 'ethereum',
  80002: 'polygon-ecosystem-token',
}

/** The price URL with {symbol}, {coinId} and {chainId} filled in. */
export function priceUrlFor(template: string, symbol: string, chainId: number): string {
  return template
    .replaceAll('{symbol}', encodeURIComponent(symbol))
    .replaceAll('{coinId}', encodeURIComponent(COIN_IDS[chainId] ?? symbol.toLowerCase()))
    .replaceAll('{chainId}', String(chainId))
}

/** Reads `{ "usd": n }` or one level deeper (`{ "ethereum": { "usd": n } }`). */
export function readUsd(body: unknown): number | undefined {
  const ok = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0
  if (typeof body !== 'object' || body === null) return undefined
  const direct = (body as Record<string, unknown>).usd
  if (ok(direct)) return direct
  for (const value of Object.values(body)) {
    if (typeof value === 'object' && value !== null) {
      const nested = (value as Record<string, unknown>).usd
      if (ok(nested)) return nested
    }
  }
  return undefined
}

export function createPriceSource(template: string | null, clock: Clock): PriceSource {
  const cache = new Map<string, { usd: number; at: number }>()
  const pending = new Map<string, Promise<number>>()

  async function fetchUsd(url: string): Promise<number> {
    let body: unknown
    try {
      const res = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      })
      if (!res.ok) throw new Error(`price source answered ${res.status}`)
      body = await res.json()
    } catch (e) {
      throw LatchError.of('price_unavailable', { cause: e })
    }
    const usd = readUsd(body)
    if (usd === undefined) throw LatchError.of('price_unavailable')
    return usd
  }

  return {
    async usd(chainId) {
      const chain = getChain(chainId)
      if (!chain) throw LatchError.of('unsupported_chain')
      if (!template) {
        throw LatchError.of('price_unavailable', {
          message: 'Token price is unavailable: no price source is configured',
        })
      }
      const url = priceUrlFor(template, chain.nativeCurrency.symbol, chainId)
      const hit = cache.get(url)
      const now = clock.now().getTime()
      if (hit && now - hit.at < PRICE_CACHE_MS) return hit.usd
      let inflight = pending.get(url)
      if (!inflight) {
        inflight = fetchUsd(url).finally(() => pending.delete(url))
        pending.set(url, inflight)
      }
      const usd = await inflight
      cache.set(url, { usd, at: clock.now().getTime() })
      return usd
    },
  }
}
