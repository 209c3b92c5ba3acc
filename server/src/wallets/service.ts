/**
 * The in-app wallet's server side: one wallet per user, its auth share and recovery material
 * sealed under the server secret, released only to the owner's live access token, and the
 * passcode scheme's server half (wallet-frame/README.md, "The passcode scheme").
 *
 * The passcode never reaches the server. Each wallet with a passcode has an OPRF key derived
 * from the server secret and a random per-wallet nonce (sealed), so neither a copy of the
 * database nor a client can evaluate it: every passcode guess is one evaluation here, and
 * each evaluation counts as a failure until the frame proves, with the verifier only the right
 * passcode yields, that it was right.
 */
import { randomBytes } from 'node:crypto'
import {
  LatchError,
  type RecoveryMethod,
  type User,
  type WalletAccount,
  type WalletSharesResponse,
  type walletCreateBody,
} from '@latch/shared'
import { ristretto255_oprf } from '@noble/curves/ed25519.js'
import type { Selectable, Transaction } from 'kysely'
import type { z } from 'zod'
import { linkInAppWallet, normalizeIdentifier } from '../accounts/service.ts'
import type { Deps } from '../context.ts'
import { randomId, sameDigest } from '../crypto.ts'
import type { Database, WalletsTable } from '../db/schema.ts'

/** Failed passcode evaluations before recovery locks. */
export const MAX_PASSCODE_FAILURES = 5

/** A wallet address as stored and compared: the account rule for wallet addresses. */
const walletKey = (address: string) => normalizeIdentifier('wallet', address)

const FIRST_LOCK_MS = 60_000
const MAX_LOCK_MS = 24 * 60 * 60_000
/** How long a create ticket and a pending evaluation stay usable. */
const TICKET_MS = 10 * 60_000
const EVALUATION_MS = 5 * 60_000
const DEFAULT_CHAIN = 'eip155:1'

/** The lock after the n-th consecutive failure (n ≥ 5): 1 min, doubling, at most 24 h. */
export function lockMs(failures: number): number {
  return Math.min(FIRST_LOCK_MS * 2 ** (failures - MAX_PASSCODE_FAILURES), MAX_LOCK_MS)
}

type LatchRecovery = { method: 'latch'; key: string; ciphertext: string }
type PasscodeRecovery = {
  method: 'user-passcode'
  salt: string
  ciphertext: string
  verifier: string
  /** Names the wallet's OPRF key (with the server secret). */
  nonce: string
}
type Recovery = LatchRecovery | PasscodeRecovery

const OPRF_INFO = new TextEncoder().encode('latch wallet passcode')

/** The wallet's OPRF secret key: the server secret and the nonce both needed. */
function oprfKey(deps: Deps, nonce: string): Uint8Array {
  const seed = Buffer.from(deps.secrets.hmac(`wallet-oprf:${nonce}`), 'hex')
  return ristretto255_oprf.oprf.deriveKeyPair(new Uint8Array(seed), OPRF_INFO).secretKey
}

function evaluate(deps: Deps, nonce: string, blinded: string): string {
  try {
    const out = ristretto255_oprf.oprf.blindEvaluate(
      oprfKey(deps, nonce),
      new Uint8Array(Buffer.from(blinded, 'hex')),
    )
    return Buffer.from(out).toString('hex')
  } catch {
    throw LatchError.of('invalid_data', {
      message: 'Request body is invalid: blinded: not a valid group element',
    })
  }
}

function isUniqueViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505'
}

async function hasWallet(deps: Deps, userId: string): Promise<boolean> {
  const row = await deps.db
    .selectFrom('wallets')
    .select('id')
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * The first half of creating a wallet with a passcode: evaluates the frame's blinded passcode
 * under a fresh key and answers a sealed ticket naming that key, which create then binds to the
 * wallet. Each call draws a new key, so evaluations here never help guess an existing wallet.
 */
export async function beginPasscode(
  deps: Deps,
  appId: string,
  userId: string,
  blinded: string,
): Promise<{ evaluated: string; ticket: string }> {
  if (await hasWallet(deps, userId)) throw LatchError.of('wallet_already_exists')
  const nonce = randomBytes(32).toString('hex')
  const evaluated = evaluate(deps, nonce, blinded)
  const expires = deps.clock.now().getTime() + TICKET_MS
  const ticket = deps.secrets.encrypt(JSON.stringify({ a: appId, u: userId, n: nonce, e: expires }))
  return { evaluated, ticket }
}

function openTicket(deps: Deps, appId: string, userId: string, ticket: string): string {
  const bad = LatchError.of('invalid_data', {
    message: 'Request body is invalid: recovery.ticket: not a ticket of this user, or expired',
  })
  let value: { a?: unknown; u?: unknown; n?: unknown; e?: unknown }
  try {
    value = JSON.parse(deps.secrets.decrypt(ticket))
  } catch {
    throw bad
  }
  if (value.a !== appId || value.u !== userId || typeof value.n !== 'string') throw bad
  if (typeof value.e !== 'number' || value.e < deps.clock.now().getTime()) throw bad
  return value.n
}

/**
 * Stores a new wallet for the user and links it as the user's in-app wallet account.
 * Answers wallet_already_exists when the user has one.
 */
export async function createWallet(
  deps: Deps,
  appId: string,
  userId: string,
  body: z.infer<typeof walletCreateBody>,
): Promise<{ user: User; wallet: WalletAccount }> {
  const now = deps.clock.now()
  const recovery: Recovery =
    body.recovery.method === 'latch'
      ? body.recovery
      : {
          method: 'user-passcode',
          salt: body.recovery.salt,
          ciphertext: body.recovery.ciphertext,
          verifier: body.recovery.verifier,
          nonce: openTicket(deps, appId, userId, body.recovery.ticket),
        }
  const id = randomId(20)
  try {
    await deps.db
      .insertInto('wallets')
      .values({
        id,
        app_id: appId,
        user_id: userId,
        address: walletKey(body.address),
        chain_id: body.chainId ?? DEFAULT_CHAIN,
        recovery_method: recovery.method,
        auth_share_sealed: deps.secrets.encrypt(body.authShare),
        recovery_sealed: deps.secrets.encrypt(JSON.stringify(recovery)),
        created_at: now,
      })
      .execute()
  } catch (e) {
    // One wallet per user (and an address is never stored twice).
    if (isUniqueViolation(e)) throw LatchError.of('wallet_already_exists')
    if ((e as { code?: unknown }).code === '23503') {
      throw LatchError.of('not_found', { message: 'User not found' })
    }
    throw e
  }
  const account = {
    type: 'wallet',
    address: body.address as WalletAccount['address'],
    chainType: 'ethereum',
    chainId: body.chainId ?? DEFAULT_CHAIN,
    walletClient: 'latch',
    walletClientType: 'latch',
    connectorType: 'embedded',
    recoveryMethod: recovery.method,
  } as const
  try {
    const user = await linkInAppWallet(deps.db, appId, userId, account, now)
    const wallet = user.linkedAccounts.find(
      (a): a is WalletAccount =>
        a.type === 'wallet' && walletKey(a.address) === walletKey(body.address),
    )
    if (!wallet) throw new Error('the wallet account was not linked')
    return { user, wallet }
  } catch (e) {
    // No wallet row without its account: the user may try again.
    await deps.db.deleteFrom('wallets').where('id', '=', id).execute()
    throw e
  }
}

type WalletRow = Pick<
  Selectable<WalletsTable>,
  | 'id'
  | 'recovery_method'
  | 'auth_share_sealed'
  | 'recovery_sealed'
  | 'failed_attempts'
  | 'locked_until'
  | 'evaluated_at'
>

const COLUMNS = [
  'id',
  'recovery_method',
  'auth_share_sealed',
  'recovery_sealed',
  'failed_attempts',
  'locked_until',
  'evaluated_at',
] as const

const notOwned = () => LatchError.of('recovery_not_allowed', { status: 404 })

/**
 * The user's wallet with this address; the same answer whether it is another's or absent.
 * Inside a transaction (`lock`), the row stays locked until it ends, so attempts are counted
 * one at a time.
 */
async function ownWallet(
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

function recoveryOf(deps: Deps, row: WalletRow): Recovery {
  return JSON.parse(deps.secrets.decrypt(row.recovery_sealed)) as Recovery
}

/** How the wallet recovers, and the passcode KDF's salt (useless without the server). */
export async function walletInfo(deps: Deps, appId: string, userId: string, address: string) {
  const row = await ownWallet(deps, appId, userId, address)
  const recovery = recoveryOf(deps, row)
  return {
    recoveryMethod: recovery.method as RecoveryMethod,
    salt: recovery.method === 'user-passcode' ? recovery.salt : null,
  }
}

/** The auth share, for a device that holds its device share. */
export async function authShare(
  deps: Deps,
  appId: string,
  userId: string,
  address: string,
): Promise<WalletSharesResponse> {
  const row = await ownWallet(deps, appId, userId, address)
  return { authShare: deps.secrets.decrypt(row.auth_share_sealed) }
}

/** Automatic recovery: the auth share and the recovery share with its key, for method 'latch'. */
export async function recoverLatch(
  deps: Deps,
  appId: string,
  userId: string,
  address: string,
): Promise<WalletSharesResponse> {
  const row = await ownWallet(deps, appId, userId, address)
  const recovery = recoveryOf(deps, row)
  if (recovery.method !== 'latch') {
    throw LatchError.of('invalid_recovery_pin', {
      status: 400,
      message: 'This wallet is recovered with its passcode',
    })
  }
  return {
    authShare: deps.secrets.decrypt(row.auth_share_sealed),
    recovery: { ciphertext: recovery.ciphertext, key: recovery.key },
  }
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
 * One passcode guess: counted as a failure before it is answered (a guess whose verify never
 * comes stays a failure), refused while recovery is locked. The fifth failure in a row locks
 * recovery, and each one after it locks it twice as long.
 */
export async function evaluatePasscode(
  deps: Deps,
  appId: string,
  userId: string,
  address: string,
  blinded: string,
): Promise<{ evaluated: string }> {
  const now = deps.clock.now()
  const nonce = await deps.db.transaction().execute(async (trx) => {
    const row = await ownWallet(deps, appId, userId, address, trx)
    const recovery = passcodeRecovery(deps, row)
    if (row.locked_until && row.locked_until > now) throw locked(row.locked_until, now)
    const failures = row.failed_attempts + 1
    await trx
      .updateTable('wallets')
      .set({
        failed_attempts: failures,
        evaluated_at: now,
        locked_until:
          failures >= MAX_PASSCODE_FAILURES ? new Date(now.getTime() + lockMs(failures)) : null,
      })
      .where('id', '=', row.id)
      .execute()
    return recovery.nonce
  })
  return { evaluated: evaluate(deps, nonce, blinded) }
}

/**
 * The frame's proof that its last evaluation was of the right passcode. A match releases the
 * auth share and the sealed recovery share and resets the count; anything else is refused and
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
    const recovery = passcodeRecovery(deps, row)
    const pending =
      row.evaluated_at !== null && now.getTime() - row.evaluated_at.getTime() <= EVALUATION_MS
    const match = pending && sameDigest(verifier, recovery.verifier)
    await trx
      .updateTable('wallets')
      .set(
        match
          ? { evaluated_at: null, failed_attempts: 0, locked_until: null }
          : { evaluated_at: null },
      )
      .where('id', '=', row.id)
      .execute()
    return { match, row, recovery }
  })
  const { match, row, recovery } = outcome
  if (!match) {
    if (row.locked_until && row.locked_until > now) throw locked(row.locked_until, now)
    throw LatchError.of('invalid_recovery_pin')
  }
  return {
    authShare: deps.secrets.decrypt(row.auth_share_sealed),
    recovery: { ciphertext: recovery.ciphertext },
  }
}
