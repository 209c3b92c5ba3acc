/**
 * The price source against a local server speaking CoinGecko's simple-price API
 * (`/api/v3/simple/price?ids=<ids>&vs_currencies=usd` → `{ "<id>": { "usd": n } }`), the
 * source a self-hoster points LATCH_PRICE_URL at.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { CHAINS } from '@latch/shared'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { FakeClock } from '../testing/test-server.ts'
import { COIN_IDS, createPriceSource, PRICE_CACHE_MS } from './source.ts'

const USD: Record<string, number> = {
  ethereum: 3120.55,
  'polygon-ecosystem-token': 0.41,
  celo: 0.62,
}
let server: Server
let base = ''
const hits: string[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    hits.push(`${url.pathname}${url.search}`)
    if (
      url.pathname !== '/api/v3/simple/price' ||
      url.searchParams.get('vs_currencies') !== 'usd'
    ) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}')
      return
    }
    // As CoinGecko: known ids answer, unknown ones are left out of the object.
    const answer: Record<string, { usd: number }> = {}
    for (const id of (url.searchParams.get('ids') ?? '').split(',')) {
      const usd = USD[id]
      if (usd !== undefined) answer[id] = { usd }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise((r) => server.close(r))
})

test('behavior: {coinId} asks CoinGecko for the native coin of the chain; answers are cached', async () => {
  const clock = new FakeClock()
  const source = createPriceSource(
    `${base}/api/v3/simple/price?ids={coinId}&vs_currencies=usd`,
    clock,
  )
  hits.length = 0
  expect(await source.usd(137)).toBe(0.41)
  expect(await source.usd(10)).toBe(3120.55)
  expect(await source.usd(42220)).toBe(0.62)
  expect(await source.usd(10)).toBe(3120.55)
  expect(hits).toEqual([
    '/api/v3/simple/price?ids=polygon-ecosystem-token&vs_currencies=usd',
    '/api/v3/simple/price?ids=ethereum&vs_currencies=usd',
    '/api/v3/simple/price?ids=celo&vs_currencies=usd',
  ])
  clock.advance(PRICE_CACHE_MS + 1)
  expect(await source.usd(10)).toBe(3120.55)
  expect(hits).toHaveLength(4)
})

test('error: a coin the source does not price is 503, never a guess', async () => {
  const source = createPriceSource(
    `${base}/api/v3/simple/price?ids={coinId}&vs_currencies=usd`,
    new FakeClock(),
  )
  // The stand-in prices no Filecoin: CoinGecko answers {} for an id it does not know.
  await expect(source.usd(314)).rejects.toMatchObject({ code: 'price_unavailable' })
  await expect(source.usd(31337)).rejects.toMatchObject({ code: 'unsupported_chain' })
})

test('behavior: every supported chain has a CoinGecko coin id', () => {
  for (const chain of CHAINS) expect(COIN_IDS[chain.id], chain.name).toMatch(/^[a-z-]+$/)
})
