/**
 * A passcode wallet's attempt state (failures, lock, pending evaluation, sign-in needed), which
 * only the server may write: under a MAC of the server secret, with a counter row that only moves
 * forward, so a database writer can neither reset it nor restore an older one.
 */
import type { Deps } from '../context.ts'
import { sameSecret } from '../crypto.ts'
import type { Db } from '../db/schema.ts'
import { rowMac, rowMacMade } from '../row-mac.ts'
import { recordInvalid, type WalletRow } from './records.ts'

/** The attempt state of a passcode wallet, which only the server may write. */
export interface AttemptState {
  failed_attempts: number
  total_failures: number
  locked_until: Date | null
  evaluated_at: Date | null
  reauth_after: Date | null
}

const ms = (d: Date | null) => (d ? String(d.getTime()) : '-')

/**
 * A MAC over the row's attempt state under the server secret: a database writer without the
 * secret cannot reset the counters or the lock (a changed state no longer matches). An older
 * state restored with its own MAC is refused by the attempt counter (below).
 */
function stateMac(deps: Deps, id: string, s: AttemptState): string {
  const fields = [
    id,
    s.failed_attempts,
    s.total_failures,
    ms(s.locked_until),
    ms(s.evaluated_at),
    ms(s.reauth_after),
  ]
  return deps.secrets.mac('wallet-attempts', fields.join('\n'))
}

/** The columns that write a new attempt state, its MAC with it (only those columns). */
export function withMac(deps: Deps, id: string, s: AttemptState) {
  const state: AttemptState = {
    failed_attempts: s.failed_attempts,
    total_failures: s.total_failures,
    locked_until: s.locked_until,
    evaluated_at: s.evaluated_at,
    reauth_after: s.reauth_after,
  }
  return { ...state, state_mac: stateMac(deps, id, state) }
}

export const NO_ATTEMPTS: AttemptState = {
  failed_attempts: 0,
  total_failures: 0,
  locked_until: null,
  evaluated_at: null,
  reauth_after: null,
}

/** Which secret made the row's state MAC (see macMade), or null when none did. */
export function stateMadeBy(deps: Deps, row: WalletRow): 'current' | 'previous' | null {
  if (!row.state_mac) return null
  if (sameSecret(row.state_mac, stateMac(deps, row.id, row))) return 'current'
  const previous = deps.secrets.previous
  if (
    previous &&
    sameSecret(row.state_mac, stateMac({ ...deps, secrets: previous }, row.id, row))
  ) {
    return 'previous'
  }
  return null
}

export function checkState(deps: Deps, row: WalletRow): void {
  if (stateMadeBy(deps, row) === null) {
    deps.log(`[latch] wallet ${row.id}: its attempt state does not match its MAC`)
    throw recordInvalid()
  }
}

/**
 * The highest attempt counter this process has seen per wallet of each database: a restored
 * older pair (wallet row and counter row together, each with its own MAC) is refused while the
 * process runs. Bounded: the oldest entries go first.
 */
const seenCounters = new WeakMap<object, Map<string, number>>()
const SEEN_COUNTERS_MAX = 100_000

function countersSeen(deps: Pick<Deps, 'db'>): Map<string, number> {
  let seen = seenCounters.get(deps.db)
  if (!seen) {
    seen = new Map()
    seenCounters.set(deps.db, seen)
  }
  return seen
}

function sawCounter(deps: Pick<Deps, 'db'>, walletId: string, counter: number): void {
  const seen = countersSeen(deps)
  seen.delete(walletId)
  seen.set(walletId, counter)
  if (seen.size > SEEN_COUNTERS_MAX) {
    const oldest = seen.keys().next().value
    if (oldest !== undefined) seen.delete(oldest)
  }
}

/** The attempt counter row's MAC: its wallet, its value and the state MAC it was advanced with. */
export const counterMac = (
  deps: Pick<Deps, 'secrets'>,
  walletId: string,
  counter: number,
  state: string,
) => rowMac(deps.secrets, 'wallet_attempts', { wallet_id: walletId, counter, state_mac: state })

/**
 * The wallet's attempt counter, locked with the row: it only moves forward and names the state
 * MAC it was last advanced with, kept apart from the wallet row, so restoring an older attempt
 * state in the wallet row (with that state's own MAC) no longer matches it. Refuses a state the
 * counter does not name, a counter row written without the secret, a missing one, and a counter
 * behind one this process has seen.
 */
export async function checkCounter(deps: Deps, trx: Db, row: WalletRow): Promise<number> {
  const counter = await trx
    .selectFrom('wallet_attempts')
    .select(['counter', 'mac'])
    .where('wallet_id', '=', row.id)
    .forUpdate()
    .executeTakeFirst()
  const value = counter ? Number(counter.counter) : -1
  const fields = { wallet_id: row.id, counter: value, state_mac: row.state_mac ?? '' }
  const holds =
    counter !== undefined &&
    row.state_mac !== null &&
    rowMacMade(deps.secrets, 'wallet_attempts', fields, counter.mac) !== null
  if (!holds || value < (countersSeen(deps).get(row.id) ?? 0)) {
    deps.log(`[latch] wallet ${row.id}: its attempt state is not the one its counter names`)
    throw recordInvalid()
  }
  return value
}

/** Writes a new attempt state and moves the counter forward with it, in the caller's transaction. */
export async function writeState(
  deps: Deps,
  trx: Db,
  id: string,
  counter: number,
  state: AttemptState,
): Promise<() => void> {
  const columns = withMac(deps, id, state)
  await trx.updateTable('wallets').set(columns).where('id', '=', id).execute()
  await trx
    .updateTable('wallet_attempts')
    .set({ counter: counter + 1, mac: counterMac(deps, id, counter + 1, columns.state_mac) })
    .where('wallet_id', '=', id)
    .execute()
  // Remembered once the transaction has committed.
  return () => sawCounter(deps, id, counter + 1)
}
