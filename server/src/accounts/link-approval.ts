/**
 * New sign-in methods on a user whose wallet recovers automatically: every such method is a way
 * to the key (it signs in, and the session it starts recovers the wallet), so it needs the
 * visitor's approval in the wallet frame ("Let … sign in to your account and open your
 * wallet?"), made by a trusted click there and recorded by the frame's own fetch:
 * POST /wallets/approvals, behind the access token and the wallet credential with same-origin
 * fetch metadata (wallets/credential.ts), from a session that holds the wallet itself (not an
 * unpaired fork).
 *
 * An approval is single use, alive LINK_APPROVAL_TTL_MS, and bound by a MAC under the server
 * secret to app, user, session, method kind and identifier: the link route that adds that very
 * method in that very session spends it (consumeLinkApproval). A database writer cannot plant
 * one, and one moved to another session, user or method does not open. Users without a wallet,
 * or whose wallet recovers only with a passcode or passkey, link as before.
 */
import { LatchError, type LinkApprovalMethod } from '@latch/shared'
import { Hono } from 'hono'
import { z } from 'zod'
import type { Deps } from '../context.ts'
import { macMade, randomId } from '../crypto.ts'
import { type HonoEnv, readBody, requireAuth } from '../http.ts'
import { requireWalletCredential } from '../wallets/credential.ts'
import { walletHandedOver } from '../wallets/fork-pair.ts'
import { walletRecoveryMethod } from '../wallets/records.ts'

/** How long an approval waits for its link: the rest of a code's or a signature's round trip. */
export const LINK_APPROVAL_TTL_MS = 10 * 60_000

const KINDS = ['email', 'phone', 'oauth', 'siwe', 'passkey'] as const
export const linkApprovalBody = z.object({
  type: z.enum(KINDS),
  identifier: z.string().min(1).max(320),
})

/** One spelling per method: what the frame was shown and what the link route verified agree. */
export function approvalIdentifier(type: LinkApprovalMethod, identifier: string): string {
  const trimmed = identifier.trim()
  if (type === 'phone') return trimmed.replace(/[\s().-]/g, '')
  if (type === 'passkey') return 'passkey'
  return trimmed.toLowerCase()
}

const macValue = (
  appId: string,
  userId: string,
  sessionId: string,
  type: string,
  identifier: string,
  id: string,
  expiresAt: Date,
) => [appId, userId, sessionId, type, identifier, id, expiresAt.toISOString()].join('\n')

/** Whether the user's wallet recovers automatically: then a new method needs an approval. */
export async function needsLinkApproval(
  deps: Deps,
  appId: string,
  userId: string,
): Promise<boolean> {
  return (await walletRecoveryMethod(deps, appId, userId)) === 'latch'
}

/** Records the visitor's approval (the wallet frame's own request). */
export async function recordLinkApproval(
  deps: Deps,
  appId: string,
  userId: string,
  sessionId: string,
  type: LinkApprovalMethod,
  identifier: string,
): Promise<void> {
  // An unpaired fork holds no wallet: it cannot let a method in to it either.
  if (!(await walletHandedOver(deps, sessionId))) throw LatchError.of('fork_wallet_not_confirmed')
  const now = deps.clock.now()
  const id = randomId(24)
  const expiresAt = new Date(now.getTime() + LINK_APPROVAL_TTL_MS)
  const spelled = approvalIdentifier(type, identifier)
  await deps.db
    .insertInto('link_approvals')
    .values({
      id,
      app_id: appId,
      session_id: sessionId,
      kind: type,
      identifier: spelled,
      mac: deps.secrets.mac(
        'link-approval',
        macValue(appId, userId, sessionId, type, spelled, id, expiresAt),
      ),
      created_at: now,
      expires_at: expiresAt,
    })
    .execute()
}

/**
 * Spends the session's approval of this method, when the user's wallet recovers automatically;
 * refuses the link with link_not_approved without one. Runs in the link route, once the method
 * itself is verified (its code, signature or ceremony), before it is added.
 */
export async function consumeLinkApproval(
  deps: Deps,
  appId: string,
  userId: string,
  sessionId: string,
  type: LinkApprovalMethod,
  identifier: string,
): Promise<void> {
  if (!(await needsLinkApproval(deps, appId, userId))) return
  const spelled = approvalIdentifier(type, identifier)
  const now = deps.clock.now()
  const rows = await deps.db
    .selectFrom('link_approvals')
    .select(['id', 'mac', 'expires_at'])
    .where('app_id', '=', appId)
    .where('session_id', '=', sessionId)
    .where('kind', '=', type)
    .where('identifier', '=', spelled)
    .where('expires_at', '>', now)
    .execute()
  for (const row of rows) {
    const value = macValue(appId, userId, sessionId, type, spelled, row.id, row.expires_at)
    if (macMade(deps.secrets, 'link-approval', value, row.mac) === null) continue
    // Single use: only the request that deletes it goes on.
    const spent = await deps.db
      .deleteFrom('link_approvals')
      .where('id', '=', row.id)
      .returning('id')
      .executeTakeFirst()
    if (spent) return
  }
  throw LatchError.of('link_not_approved')
}

/** POST /wallets/approvals: the wallet frame records the visitor's click. */
export function linkApprovalRoutes(deps: Deps): Hono<HonoEnv> {
  const routes = new Hono<HonoEnv>()
  routes.use('*', requireAuth(deps))
  routes.use('*', requireWalletCredential(deps))
  routes.post('/', async (c) => {
    const { type, identifier } = await readBody(c, linkApprovalBody)
    const { sub, sid } = c.get('auth')
    await recordLinkApproval(deps, c.get('app').id, sub, sid, type, identifier)
    return c.json({ approved: true as const })
  })
  return routes
}
