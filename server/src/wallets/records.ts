/**
 * The wallet record: one wallet per user, its auth share and recovery material sealed under the
 * server secret with the row's place, read only for its owner; a value sealed for another row,
 * user or address does not open (wallet_record_invalid).
 */
import { LatchError, type RecoveryMethod } from '@latch/shared'
import type { Selectable, Transaction } from 'kysely'
import type { Deps } from '../context.ts'
import type { Database, WalletsTable } from '../db/schema.ts'
import { oprfSeed } from './oprf.ts'
import { type Place, placeOf, type SealedPurpose, walletKey } from './sealed.ts'

type LatchRecovery = { method: 'latch'; key: string; ciphertext: string }
export type PasscodeRecovery = {
  method: 'user-passcode'
  salt: string
  ciphertext: string
  verifier: string
  /** Names the wallet's OPRF key (with the server secret). */
  nonce: string
  /**
   * The OPRF key's seed (hex) when it was derived under an earlier server secret: written by
   * `latch secret rotate`, since the passcode verifier depends on the key and only the
   * visitor knows the passcode. Absent: the seed is derived from the current secret.
   */
  seed?: string
}
/** The share itself is in wallet_passkeys (passkeys.ts), sealed under the passkey. */
type PasskeyRecovery = { method: 'passkey' }
export type Recovery = LatchRecovery | PasscodeRecovery | PasskeyRecovery

export async function hasWallet(deps: Deps, userId: string): Promise<boolean> {
  const row = await deps.db
    .selectFrom('wallets')
    .select('id')
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return row !== undefined
}

export const recordInvalid = () => LatchError.of('wallet_record_invalid')

/** Opens a sealed value of the row; a value sealed for another row, user or address does not open. */
function openSealed(deps: Deps, purpose: SealedPurpose, row: Place, sealed: string): string {
  return openSealedWith(deps, purpose, row, sealed).value
}

/** As openSealed, saying whether the value took the previous secret (a rotation under way). */
export function openSealedWith(
  deps: Deps,
  purpose: SealedPurpose,
  row: Place,
  sealed: string,
): { value: string; previous: boolean } {
  try {
    return deps.secrets.open(sealed, placeOf(purpose, row))
  } catch {
    deps.log(`[latch] wallet ${row.id}: its ${purpose} does not open for its row`)
    throw recordInvalid()
  }
}

export type WalletRow = Pick<
  Selectable<WalletsTable>,
  | 'id'
  | 'app_id'
  | 'user_id'
  | 'address'
  | 'recovery_method'
  | 'auth_share_sealed'
  | 'recovery_sealed'
  | 'failed_attempts'
  | 'total_failures'
  | 'locked_until'
  | 'evaluated_at'
  | 'reauth_after'
  | 'state_mac'
>

export const COLUMNS = [
  'id',
  'app_id',
  'user_id',
  'address',
  'recovery_method',
  'auth_share_sealed',
  'recovery_sealed',
  'failed_attempts',
  'total_failures',
  'locked_until',
  'evaluated_at',
  'reauth_after',
  'state_mac',
] as const

const notOwned = () => LatchError.of('recovery_not_allowed', { status: 404 })

/**
 * The user's wallet with this address; the same answer whether it is another's or absent.
 * Inside a transaction (`lock`), the row stays locked until it ends, so attempts are counted
 * one at a time.
 */
export async function ownWallet(
  deps: Deps,
  appId: string,
  userId: string,
  address: string,
  lock?: Transaction<Database>,
): Promise<WalletRow> {
  const query = (lock ?? deps.db)
    .selectFrom('wallets')
    .select(COLUMNS)
    .where('user_id', '=', userId)
    .where('app_id', '=', appId)
    .where('address', '=', walletKey(address))
  const row = await (lock ? query.forUpdate() : query).executeTakeFirst()
  if (!row) throw notOwned()
  return row
}

/**
 * How the user's wallet of this app recovers, read from its sealed record (the plain column
 * only indexes: a database writer changing it gets wallet_record_invalid); null without one.
 */
export async function walletRecoveryMethod(
  deps: Deps,
  appId: string,
  userId: string,
): Promise<RecoveryMethod | null> {
  const row = await deps.db
    .selectFrom('wallets')
    .select(COLUMNS)
    .where('user_id', '=', userId)
    .where('app_id', '=', appId)
    .executeTakeFirst()
  return row ? (recoveryOf(deps, row).method as RecoveryMethod) : null
}

export function recoveryOf(deps: Deps, row: WalletRow): Recovery {
  const opened = openSealedWith(deps, 'recovery', row, row.recovery_sealed)
  return recoveryFrom(deps, row, opened.value, opened.previous)
}

/**
 * The recovery material from its opened JSON. Sealed under the previous secret and not yet
 * rotated, a passcode wallet's OPRF key is the previous secret's: its seed is filled in here.
 */
export function recoveryFrom(
  deps: Deps,
  row: WalletRow,
  json: string,
  previous: boolean,
): Recovery {
  const recovery = JSON.parse(json) as Recovery
  // The plain column only indexes; the sealed value is what counts, and they must agree.
  if (recovery.method !== row.recovery_method) throw recordInvalid()
  if (recovery.method === 'user-passcode' && recovery.seed === undefined && previous) {
    const before = deps.secrets.previous
    if (before) recovery.seed = oprfSeed(before, recovery.nonce)
  }
  return recovery
}

export function authShareOf(deps: Deps, row: WalletRow): string {
  return openSealed(deps, 'auth-share', row, row.auth_share_sealed)
}

/**
 * What a wallet row holds, opened with the server secret: for tests that check what never
 * leaves the server, and the operator's own tooling. Nothing in the API answers it.
 */
export function openWalletRecord(
  deps: Deps,
  row: Place & Pick<WalletRow, 'auth_share_sealed' | 'recovery_sealed'>,
): { authShare: string; recovery: Record<string, string> } {
  return {
    authShare: openSealed(deps, 'auth-share', row, row.auth_share_sealed),
    recovery: JSON.parse(openSealed(deps, 'recovery', row, row.recovery_sealed)) as Record<
      string,
      string
    >,
  }
}
