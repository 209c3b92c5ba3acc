/**
 * Recovery by passcode, the server's half (docs/architecture.md, "Recovery methods"). The
 * passcode never reaches the server: every guess is one OPRF evaluation here, and each
 * evaluation counts as a failure until the frame proves, with the verifier only the right
 * passcode yields, that it was right.
 */
import { LatchError, type WalletSharesResponse } from '@latch/shared'
import type { Deps } from '../context.ts'
import { sameDigest } from '../crypto.ts'
import { sessionHolds } from '../sessions/service.ts'
import { enqueueEvent } from '../webhooks/events.ts'
import { checkCounter, checkState, NO_ATTEMPTS, writeState } from './attempts.ts'
import { evaluate, oprfSeed } from './oprf.ts'
import {
  authShareOf,
  ownWallet,
  type PasscodeRecovery,
  recoveryOf,
  type WalletRow,
} from './records.ts'

/** Failed passcode evaluations before recovery locks. */
export const MAX_PASSCODE_FAILURES = 5
/**
 * Failed passcode evaluations in all, since the last right one, after which each further try
 * needs a sign-in made after the last of them: a stolen session, however long it waits out the
 * locks, gets this many guesses and no more.
 */
export const PASSCODE_FAILURES_BEFORE_SIGN_IN = 10

const FIRST_LOCK_MS = 60_000
const MAX_LOCK_MS = 24 * 60 * 60_000
const EVALUATION_MS = 5 * 60_000

/** The lock after the n-th consecutive failure (n ≥ 5): 1 min, doubling, at most 24 h. */
export function lockMs(failures: number): number {
  return Math.min(FIRST_LOCK_MS * 2 ** (failures - MAX_PASSCODE_FAILURES), MAX_LOCK_MS)
}

/** The seed of a passcode wallet's OPRF key: stored by a rotation, else the current secret's. */
function seedOf(deps: Deps, recovery: PasscodeRecovery): string {
  return recovery.seed ?? oprfSeed(deps.secrets, recovery.nonce)
}

function locked(until: Date, now: Date): LatchError {
  return LatchError.of('recovery_locked', {
    retryAfter: Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000)),
  })
}

function passcodeRecovery(deps: Deps, row: WalletRow): PasscodeRecovery {
  const recovery = recoveryOf(deps, row)
  if (recovery.method !== 'user-passcode') {
    throw LatchError.of('invalid_data', { message: 'This wallet has no passcode' })
  }
  return recovery
}

/**
 * When the session's family signed in: a fork is as old as the sign-in it came from. Only under
 * the root session's MAC: a sign-in time moved forward in the database is none.
 */
async function signedInAt(deps: Deps, sessionId: string): Promise<Date | null> {
  const row = await deps.db
    .selectFrom('sessions as s')
    .innerJoin('sessions as f', 'f.id', 's.family_id')
    .select([
      'f.id',
      'f.app_id',
      'f.user_id',
      'f.family_id',
      'f.parent_id',
      'f.created_at',
      'f.expires_at',
      'f.mac',
    ])
    .where('s.id', '=', sessionId)
    .executeTakeFirst()
  if (!row || !sessionHolds(deps, row, row.mac)) return null
  return row.created_at
}

/**
 * One passcode guess: counted as a failure before it is answered (a guess whose verify never
 * comes stays a failure), refused while recovery is locked. The fifth failure in a row locks
 * recovery, and each one after it locks it twice as long. After PASSCODE_FAILURES_BEFORE_SIGN_IN
 * failures in all, the next guess needs a session signed in after the last of them.
 */
export async function evaluatePasscode(
  deps: Deps,
  appId: string,
  userId: string,
  sessionId: string,
  address: string,
  blinded: string,
): Promise<{ evaluated: string }> {
  const now = deps.clock.now()
  const signedIn = await signedInAt(deps, sessionId)
  const { seed, saw } = await deps.db.transaction().execute(async (trx) => {
    const row = await ownWallet(deps, appId, userId, address, trx)
    checkState(deps, row)
    const counter = await checkCounter(deps, trx, row)
    const recovery = passcodeRecovery(deps, row)
    if (row.locked_until && row.locked_until > now) throw locked(row.locked_until, now)
    if (row.reauth_after && (!signedIn || signedIn <= row.reauth_after)) {
      throw LatchError.of('wallet_sign_in_required', {
        message: 'Too many incorrect passcodes. Sign in again to keep trying.',
      })
    }
    const failures = row.failed_attempts + 1
    const total = row.total_failures + 1
    const saw = await writeState(deps, trx, row.id, counter, {
      failed_attempts: failures,
      total_failures: total,
      evaluated_at: now,
      locked_until:
        failures >= MAX_PASSCODE_FAILURES ? new Date(now.getTime() + lockMs(failures)) : null,
      reauth_after: total % PASSCODE_FAILURES_BEFORE_SIGN_IN === 0 ? now : row.reauth_after,
    })
    return { seed: seedOf(deps, recovery), saw }
  })
  saw()
  return { evaluated: evaluate(seed, blinded) }
}

/**
 * The frame's proof that its last evaluation was of the right passcode. A match releases the
 * auth share and the sealed recovery share and resets the counts; anything else is refused and
 * the pending evaluation is spent either way.
 */
export async function verifyPasscode(
  deps: Deps,
  appId: string,
  userId: string,
  address: string,
  verifier: string,
): Promise<WalletSharesResponse> {
  const now = deps.clock.now()
  // The outcome is written before any refusal is thrown: a throw inside would roll it back.
  const outcome = await deps.db.transaction().execute(async (trx) => {
    const row = await ownWallet(deps, appId, userId, address, trx)
    checkState(deps, row)
    const counter = await checkCounter(deps, trx, row)
    const recovery = passcodeRecovery(deps, row)
    const pending =
      row.evaluated_at !== null && now.getTime() - row.evaluated_at.getTime() <= EVALUATION_MS
    const match = pending && sameDigest(verifier, recovery.verifier)
    const saw = await writeState(
      deps,
      trx,
      row.id,
      counter,
      match ? NO_ATTEMPTS : { ...row, evaluated_at: null },
    )
    await enqueueEvent(trx, {
      appId,
      type: match ? 'wallet.recovered' : 'wallet.recovery_failed',
      data: match
        ? { userId, address: row.address, recoveryMethod: 'user-passcode' }
        : {
            userId,
            address: row.address,
            recoveryMethod: 'user-passcode',
            failedAttempts: row.failed_attempts,
            lockedUntil: row.locked_until?.toISOString() ?? null,
          },
      now,
    })
    return { match, row, recovery, saw }
  })
  outcome.saw()
  const { match, row, recovery } = outcome
  if (!match) {
    if (row.locked_until && row.locked_until > now) throw locked(row.locked_until, now)
    throw LatchError.of('invalid_recovery_pin')
  }
  return {
    authShare: authShareOf(deps, row),
    recovery: { ciphertext: recovery.ciphertext },
  }
}
