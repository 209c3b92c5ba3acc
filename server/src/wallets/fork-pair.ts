/**
 * Pairing a forked session with the wallet: POST /wallets/fork/pair/start and
 * /wallets/fork/pair/finish.
 *
 * A fork token opens a session as the user for whoever presents it first, within its 2 minutes,
 * and the link passes through a wallet app's link service and the host page (forkSession()
 * answers it). So a session opened from a fork never reaches an automatic wallet by itself: the
 * share-bearing routes refuse it (`fork_wallet_not_confirmed`) until it is paired from inside
 * the wallet origin, or it recovers with the user's passcode or passkey, which it must know.
 *
 * Pairing: on the original device the visitor clicks "Show a pairing code" in the wallet frame
 * (its own trusted click; no message from the modal can do it), whose own fetch (the session's
 * wallet credential, same-origin fetch metadata) calls /start: a 6-digit code, stored only as a
 * MAC bound to that session, alive PAIRING_TTL_MS, PAIRING_MAX_ATTEMPTS tries. On the new device
 * the visitor types it into that wallet frame's own input, whose fetch (the forked session's own
 * credential) calls /finish: the code must belong to the session this fork was made from. The
 * pairing is then recorded on the fork token's row as a MAC under the server secret over app,
 * forking session and forked session: a database writer without the secret cannot make a
 * session paired, and a row copied to another session does not open.
 */
import { LatchError } from '@latch/shared'
import { Hono } from 'hono'
import { sql } from 'kysely'
import { z } from 'zod'
import type { Deps } from '../context.ts'
import { macMade, randomCode, randomId } from '../crypto.ts'
import { type HonoEnv, readBody, requireAuth } from '../http.ts'
import { requireWalletCredential } from './credential.ts'

/** How long a pairing code lives: the time to read it off one screen and type it on another. */
export const PAIRING_TTL_MS = 5 * 60_000
/** Wrong codes a pairing takes before it is spent: 5 guesses of 10^6. */
export const PAIRING_MAX_ATTEMPTS = 5

export const pairFinishBody = z.object({ code: z.string().regex(/^\d{6}$/) })

/** What a pairing's MAC covers: the app, the forking session and the forked one. */
export const pairedValue = (appId: string, forking: string, forked: string) =>
  `${appId}\n${forking}\n${forked}`

const codeValue = (appId: string, sessionId: string, id: string, code: string) =>
  `${appId}\n${sessionId}\n${id}\n${code}`

/**
 * Whether this session may reach the wallet's shares without the passcode or passkey: one that
 * was not opened by a fork link, and a fork once paired. A forked session whose token row is
 * gone (it should outlive the session; see sweep.ts), or whose pairing MAC does not open, is not.
 */
export async function walletHandedOver(
  deps: Pick<Deps, 'db' | 'secrets'>,
  sessionId: string,
): Promise<boolean> {
  const row = await deps.db
    .selectFrom('sessions as s')
    .leftJoin('fork_tokens as t', 't.redeemed_session_id', 's.id')
    .select(['s.app_id', 's.parent_id', 't.session_id as forking', 't.paired_mac'])
    .where('s.id', '=', sessionId)
    .executeTakeFirst()
  if (!row) return false
  if (row.parent_id === null) return true
  if (!row.paired_mac || row.forking !== row.parent_id) return false
  const value = pairedValue(row.app_id, row.forking, sessionId)
  return macMade(deps.secrets, 'fork-paired', value, row.paired_mac) !== null
}

const noWallet = () =>
  LatchError.of('invalid_data', { status: 409, message: 'There is no wallet to pair' })

/** The code on the original device: for a session that holds the wallet itself. */
export async function startPairing(
  deps: Deps,
  appId: string,
  userId: string,
  sessionId: string,
): Promise<{ code: string; expiresAt: string }> {
  const wallet = await deps.db
    .selectFrom('wallets')
    .select('id')
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  if (!wallet) throw noWallet()
  // A fork that was never paired cannot pass on what it was never given.
  if (!(await walletHandedOver(deps, sessionId))) throw LatchError.of('fork_wallet_not_confirmed')
  const now = deps.clock.now()
  const id = randomId(24)
  const code = randomCode()
  const expiresAt = new Date(now.getTime() + PAIRING_TTL_MS)
  await deps.db
    .insertInto('wallet_pairings')
    .values({
      id,
      app_id: appId,
      session_id: sessionId,
      code_mac: deps.secrets.mac('pairing-code', codeValue(appId, sessionId, id, code)),
      created_at: now,
      expires_at: expiresAt,
    })
    .execute()
  return { code, expiresAt: expiresAt.toISOString() }
}

/** The code is wrong, spent, past its life, or of a session this one was not forked from. */
const wrongCode = () =>
  LatchError.of('invalid_verification_code', {
    message: 'That pairing code is not right, or it expired. Show a new one on your other device.',
  })

/**
 * Pairs the calling forked session with the session it was forked from, on that session's code.
 * Every wrong code counts against each live pairing of that session; one right code is spent.
 */
export async function finishPairing(
  deps: Deps,
  appId: string,
  sessionId: string,
  code: string,
): Promise<void> {
  const now = deps.clock.now()
  const fork = await deps.db
    .selectFrom('sessions as s')
    .innerJoin('fork_tokens as t', 't.redeemed_session_id', 's.id')
    .select(['s.parent_id', 't.hash', 't.session_id as forking'])
    .where('s.id', '=', sessionId)
    .where('s.app_id', '=', appId)
    .executeTakeFirst()
  // Not a fork at all (a sign-in holds its wallet already) or a fork without its row.
  if (!fork || fork.parent_id === null || fork.forking !== fork.parent_id) {
    throw LatchError.of('invalid_data', { status: 409, message: 'This session is not a fork' })
  }
  const forking = fork.forking
  await deps.db.transaction().execute(async (trx) => {
    const pairings = await trx
      .selectFrom('wallet_pairings')
      .select(['id', 'code_mac', 'attempts'])
      .where('app_id', '=', appId)
      .where('session_id', '=', forking)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .where('attempts', '<', PAIRING_MAX_ATTEMPTS)
      .forUpdate()
      .execute()
    const match = pairings.find(
      (p) =>
        macMade(deps.secrets, 'pairing-code', codeValue(appId, forking, p.id, code), p.code_mac) !==
        null,
    )
    if (!match) {
      if (pairings.length > 0) {
        await trx
          .updateTable('wallet_pairings')
          .set({ attempts: sql`attempts + 1` })
          .where(
            'id',
            'in',
            pairings.map((p) => p.id),
          )
          .execute()
      }
      return
    }
    await trx
      .updateTable('wallet_pairings')
      .set({ used_at: now })
      .where('id', '=', match.id)
      .execute()
    await trx
      .updateTable('fork_tokens')
      .set({ paired_mac: deps.secrets.mac('fork-paired', pairedValue(appId, forking, sessionId)) })
      .where('hash', '=', fork.hash)
      .execute()
  })
  if (!(await walletHandedOver(deps, sessionId))) throw wrongCode()
}

/** Mounted beside walletRoutes under /wallets/fork/pair: the same two gates, then the pairing. */
export function forkPairRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  routes.use('*', requireAuth(deps))
  routes.use('*', requireWalletCredential(deps))
  routes.post('/start', async (c) => {
    const { sub, sid } = c.get('auth')
    return c.json(await startPairing(deps, c.get('app').id, sub, sid))
  })
  routes.post('/finish', async (c) => {
    const { code } = await readBody(c, pairFinishBody)
    await finishPairing(deps, c.get('app').id, c.get('auth').sid, code)
    return c.json({ paired: true as const })
  })
  return routes
}
