/**
 * Batches the app pays for (EIP-5792 through EIP-7702), `/api/v1/calls`:
 *
 * - `POST /calls` {chainId, account, calls, nonce, deadline, signature, authorization?, id?} → {id}:
 *   the wallet frame's request after the visitor's click (service.ts). Like every wallet route it
 *   needs the owner's access token AND the session's wallet credential with same-origin fetch
 *   metadata: only the wallet frame gets past. At most 30 per user in 10 minutes. `id` is the
 *   dapp's own id for the batch (EIP-5792), refused as `calls_duplicate_id` when the user already
 *   sent one under it.
 * - `GET /calls/capabilities` → EIP-5792 capabilities per chain (access token).
 * - `GET /calls/{id}` → `wallet_getCallsStatus`'s answer, the user's own batches only.
 */
import { LatchError } from '@latch/shared'
import { Hono } from 'hono'
import { z } from 'zod'
import type { Deps } from '../context.ts'
import { type HonoEnv, readBody, requireAuth } from '../http.ts'
import { hit, type Limit } from '../ratelimit.ts'
import { requireWalletCredential } from '../wallets/credential.ts'
import { callsStatus, capabilities, MAX_CALLS, sponsorBatch } from './service.ts'

export const SPONSOR_USER_LIMIT: Limit = { max: 30, windowMs: 10 * 60_000 }

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address')
const hexData = z
  .string()
  .regex(/^0x([0-9a-fA-F]{2})*$/, 'must be 0x-prefixed hex bytes')
  .max(2 + 2 * 32_768)
const uint = z.string().regex(/^(0|[1-9][0-9]{0,77})$/, 'must be a whole number as decimal text')
const word = z
  .string()
  .regex(/^0x[0-9a-fA-F]{1,64}$/, 'must be 0x-prefixed hex of at most 32 bytes')

/** EIP-5792's batch id: 0x and hex, at most 4096 bytes (the dapp's own, or Latch's). */
const BATCH_ID = /^0x[0-9a-fA-F]{1,8192}$/

const sponsorBatchBody = z.object({
  id: z.string().regex(BATCH_ID, 'must be 0x-prefixed hex of at most 4096 bytes').optional(),
  chainId: z
    .number()
    .int()
    .positive()
    .max(2 ** 53),
  account: address,
  calls: z
    .array(z.object({ to: address, value: uint, data: hexData }))
    .min(1)
    .max(MAX_CALLS),
  nonce: uint,
  deadline: z
    .number()
    .int()
    .positive()
    .max(2 ** 40),
  signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, 'must be a 65-byte signature'),
  authorization: z
    .object({
      address,
      chainId: z
        .number()
        .int()
        .nonnegative()
        .max(2 ** 53),
      nonce: z
        .number()
        .int()
        .nonnegative()
        .max(2 ** 53),
      r: word,
      s: word,
      yParity: z.union([z.literal(0), z.literal(1)]),
    })
    .optional(),
})

export function sponsorRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  routes.use('*', requireAuth(deps))

  routes.post('/', requireWalletCredential(deps), async (c) => {
    const userId = c.get('auth').sub
    await hit(deps.db, deps.clock, `sponsor:user:${userId}`, SPONSOR_USER_LIMIT)
    const body = await readBody(c, sponsorBatchBody)
    return c.json(await sponsorBatch(deps, c.get('app'), userId, body))
  })

  routes.get('/capabilities', async (c) => c.json(await capabilities(deps, c.get('app'))))

  routes.get('/:id', async (c) => {
    const id = c.req.param('id').toLowerCase()
    if (!BATCH_ID.test(id)) {
      throw LatchError.of('not_found', { message: 'No batch with this id' })
    }
    return c.json(await callsStatus(deps, c.get('app'), c.get('auth').sub, id))
  })

  return routes
}
