/**
 * Sealing wallet rows again: under the current secret after a rotation (`latch secret rotate`),
 * and once at start for rows stored before their sealed values carried their place and their
 * attempt state had a MAC (before 0009).
 */
import type { Deps } from '../context.ts'
import type { Db, WalletsTable } from '../db/schema.ts'
import { rowMacMade } from '../row-mac.ts'
import { type AttemptState, counterMac, stateMadeBy, withMac } from './attempts.ts'
import { COLUMNS, openSealedWith, recordInvalid, recoveryFrom, type WalletRow } from './records.ts'
import { placeOf, type SealedPurpose } from './sealed.ts'

/**
 * The columns that seal a wallet row again under the current secret, or null when it already
 * is: values sealed under the previous secret (a rotation), values stored before they carried
 * where they belong (v1, no associated data, before 0009) and a state MAC made under the
 * previous secret or missing (before 0009). A passcode wallet whose OPRF key came from the
 * previous secret keeps that key: its seed goes into the sealed recovery material. Throws
 * wallet_record_invalid for a row whose values or state MAC no secret made.
 */
export function resealedWallet(
  deps: Deps,
  row: WalletRow,
):
  | (Pick<WalletsTable, 'auth_share_sealed' | 'recovery_sealed'> &
      AttemptState & {
        state_mac: string
      })
  | null {
  const legacy = row.state_mac === null
  const open = (purpose: SealedPurpose, sealed: string) => {
    if (!legacy) return openSealedWith(deps, purpose, row, sealed)
    // Before 0009: sealed without associated data, and the state had no MAC.
    if (!sealed.startsWith('v1.')) throw recordInvalid()
    try {
      return deps.secrets.open(sealed)
    } catch {
      throw recordInvalid()
    }
  }
  const auth = open('auth-share', row.auth_share_sealed)
  const recoverySealed = open('recovery', row.recovery_sealed)
  const state = legacy ? 'previous' : stateMadeBy(deps, row)
  if (state === null) {
    deps.log(`[latch] wallet ${row.id}: its attempt state does not match its MAC`)
    throw recordInvalid()
  }
  if (!legacy && !auth.previous && !recoverySealed.previous && state === 'current') return null
  const recovery = recoveryFrom(deps, row, recoverySealed.value, recoverySealed.previous)
  return {
    auth_share_sealed: deps.secrets.encrypt(auth.value, placeOf('auth-share', row)),
    recovery_sealed: deps.secrets.encrypt(JSON.stringify(recovery), placeOf('recovery', row)),
    ...withMac(deps, row.id, row),
  }
}

/**
 * Moves the attempt counter's MAC to a wallet's new state MAC (sealed again by a rotation or the
 * upgrade at start), in the transaction that writes it; the counter keeps its value. A wallet
 * from before its state had a MAC gets its counter here. A counter row that does not hold is
 * left as it is (the wallet stays refused) and logged.
 */
export async function resealCounter(
  deps: Deps,
  trx: Db,
  row: WalletRow,
  stateMac: string,
): Promise<void> {
  if (row.state_mac === null) {
    const mac = counterMac(deps, row.id, 0, stateMac)
    await trx
      .insertInto('wallet_attempts')
      .values({ wallet_id: row.id, counter: 0, mac })
      .onConflict((oc) => oc.column('wallet_id').doUpdateSet({ counter: 0, mac }))
      .execute()
    return
  }
  const counter = await trx
    .selectFrom('wallet_attempts')
    .select(['counter', 'mac'])
    .where('wallet_id', '=', row.id)
    .forUpdate()
    .executeTakeFirst()
  const value = counter ? Number(counter.counter) : -1
  const fields = { wallet_id: row.id, counter: value, state_mac: row.state_mac }
  if (!counter || rowMacMade(deps.secrets, 'wallet_attempts', fields, counter.mac) === null) {
    deps.log(`[latch] wallet ${row.id}: its attempt counter does not hold; left as it is`)
    return
  }
  await trx
    .updateTable('wallet_attempts')
    .set({ mac: counterMac(deps, row.id, value, stateMac) })
    .where('wallet_id', '=', row.id)
    .execute()
}

/** The columns resealedWallet reads. */
export const WALLET_COLUMNS = COLUMNS

/**
 * Wallets stored before their sealed values carried where they belong (v1, no associated data)
 * and before their attempt state had a MAC: sealed again in place, once, at start. Until then
 * such a wallet answers wallet_record_invalid.
 */
export async function upgradeWalletRecords(deps: Deps): Promise<number> {
  const rows = await deps.db
    .selectFrom('wallets')
    .select(COLUMNS)
    .where('state_mac', 'is', null)
    .execute()
  let upgraded = 0
  for (const row of rows) {
    if (!row.auth_share_sealed.startsWith('v1.') || !row.recovery_sealed.startsWith('v1.')) continue
    const columns = resealedWallet(deps, row)
    if (!columns) continue
    await deps.db.transaction().execute(async (trx) => {
      const { numUpdatedRows } = await trx
        .updateTable('wallets')
        .set(columns)
        .where('id', '=', row.id)
        .where('state_mac', 'is', null)
        .executeTakeFirst()
      if (numUpdatedRows > 0n) await resealCounter(deps, trx, row, columns.state_mac)
    })
    upgraded++
  }
  return upgraded
}
