/**
 * USD price of a chain's native currency from LATCH_PRICE_URL, cached briefly. Never invents a
 * number: no source, a failing source or an unreadable answer is price_unavailable (503).
 */
import { getChain, LatchError } from '@latch/shared'
import type { Clock } from '../context.ts'

export interface PriceSource {
  usd(chainId: number): Promise<number>
}

export const PRICE_CACHE_MS = 60_000
const FETCH_TIMEOUT_MS = 5_000

/** The price URL with {symbol} and {chainId} filled in. */
export function priceUrlFor(template: string, symbol: string, chainId: number): string {
  return template
    .replaceAll('{symbol}', encodeURIComponent(symbol))
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
      if (!template) throw LatchError.of('price_unavailable')
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
