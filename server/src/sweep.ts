/** Deletes rows nothing can use any more: old rate-limit windows, dead codes and fork tokens. */
import type { Clock } from './context.ts'
import type { Db } from './db/index.ts'

/** Longest rate-limit window (codes per identifier per hour). */
const LONGEST_WINDOW_MS = 60 * 60_000
export const SWEEP_INTERVAL_MS = 10 * 60_000

export async function sweep(db: Db, clock: Clock): Promise<void> {
  const now = clock.now().getTime()
  const windowGone = new Date(now - LONGEST_WINDOW_MS)
  await db.deleteFrom('rate_limits').where('window_start', '<', windowGone).execute()
  // A code row also carries its resend time and hourly count, so it stays an hour past expiry.
  await db.deleteFrom('verification_codes').where('expires_at', '<', windowGone).execute()
  await db.deleteFrom('fork_tokens').where('expires_at', '<', new Date(now)).execute()
}

/** Runs `sweep` every 10 minutes until stopped; failures are logged, never thrown. */
export function startSweeper(db: Db, clock: Clock, log: (line: string) => void): () => void {
  const timer = setInterval(() => {
    sweep(db, clock).catch((e: unknown) => log(`[latch] cleanup failed: ${(e as Error).message}`))
  }, SWEEP_INTERVAL_MS)
  timer.unref()
  return () => clearInterval(timer)
}
