/** GET /token_price?chainId=: USD price of the chain's native currency. */
import { type TokenPriceResponse, tokenPriceQuery } from '@latch/shared'
import { Hono } from 'hono'
import type { Deps } from '../context.ts'
import { type HonoEnv, parse } from '../http.ts'

export function priceRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  routes.get('/', async (c) => {
    const { chainId } = parse(tokenPriceQuery, c.req.query(), 'Query')
    const answer: TokenPriceResponse = { usd: await deps.price.usd(chainId) }
    return c.json(answer)
  })
  return routes
}
