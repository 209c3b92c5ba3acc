/**
 * Deletes rows nothing can use any more: ended rate-limit windows, dead codes, fork tokens and
 * SIWE nonces, ended sessions with their tokens, sealed token copies past the grace window, and
 * analytics events and user-API audit rows past their retention.
 */

import type { Clock } from './clock.ts'
import { DEFAULT_ANALYTICS_RETENTION_DAYS, DEFAULT_AUDIT_RETENTION_DAYS } from './config.ts'
import type { Db } from './db/index.ts'
import { REFRESH_GRACE_MS } from './sessions/service.ts'

/** Window of rate-limit rows written before windows carried their end (all were an hour). */
const LONGEST_WINDOW_MS = 60 * 60_000
export const SWEEP_INTERVAL_MS = 10 * 60_000

export interface SweepOptions {
  /** Days analytics events are kept (LATCH_ANALYTICS_RETENTION_DAYS). */
  analyticsRetentionDays?: number
  /** Days user-API audit rows are kept (LATCH_AUDIT_RETENTION_DAYS). */
  auditRetentionDays?: number
}

const DAY_MS = 24 * 60 * 60_000

export async function sweep(db: Db, clock: Clock, options: SweepOptions = {}): Promise<void> {
  const now = clock.now().getTime()
  const windowGone = new Date(now - LONGEST_WINDOW_MS)
  // A window row goes an hour after it began, or, for the daily ones (SMS budgets, wrong
  // codes), once it has ended: deleting a live one would hand out a fresh budget.
  await db
    .deleteFrom('rate_limits')
    .where('window_start', '<', windowGone)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '<=', new Date(now))]))
    .execute()
  // A code row also carries its resend time and hourly count, so it stays an hour past expiry.
  await db.deleteFrom('verification_codes').where('expires_at', '<', windowGone).execute()
  // A spent fork token stays while its sessions live: it holds whether the forked session may
  // recover the wallet (wallets/fork-pair.ts), and it goes with the forking session
  // (cascade), which ends with the fork's family.
  await db
    .deleteFrom('fork_tokens')
    .where('expires_at', '<', new Date(now))
    .where('redeemed_session_id', 'is', null)
    .execute()
  await db.deleteFrom('siwe_nonces').where('expires_at', '<', new Date(now)).execute()
  await db.deleteFrom('wallet_pairings').where('expires_at', '<', new Date(now)).execute()
  await db.deleteFrom('link_approvals').where('expires_at', '<', new Date(now)).execute()
  // An ended session goes with its refresh and fork tokens (cascade). A fork ends with its
  // family, so no live session is left whose root is gone. Rotated tokens of a live session
  // stay, as that is how a replayed one is recognized and its family revoked.
  await db.deleteFrom('sessions').where('expires_at', '<', new Date(now)).execute()
  // The sealed copy of a rotated token's child serves only the 10 s grace of two tabs.
  await db
    .updateTable('refresh_tokens')
    .set({ child_sealed: null })
    .where('child_sealed', 'is not', null)
    .where('rotated_at', '<', new Date(now - REFRESH_GRACE_MS))
    .execute()
  const retentionDays = options.analyticsRetentionDays ?? DEFAULT_ANALYTICS_RETENTION_DAYS
  await db
    .deleteFrom('analytics_events')
    .where('created_at', '<', new Date(now - retentionDays * DAY_MS))
    .execute()
  const auditDays = options.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS
  await db
    .deleteFrom('admin_audit')
    .where('created_at', '<', new Date(now - auditDays * DAY_MS))
    .execute()
}

/** Runs `sweep` every 10 minutes until stopped; failures are logged, never thrown. */
export function startSweeper(
  db: Db,
  clock: Clock,
  log: (line: string) => void,
  options: SweepOptions = {},
): () => void {
  const timer = setInterval(() => {
    sweep(db, clock, options).catch((e: unknown) =>
      log(`[latch] cleanup failed: ${(e as Error).message}`),
    )
  }, SWEEP_INTERVAL_MS)
  timer.unref()
  return () => clearInterval(timer)
}
