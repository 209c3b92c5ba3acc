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
  walletCreationDigest,
  walletCreationMessage,
} from '@latch/shared'
import { ristretto255_oprf } from '@noble/curves/ed25519.js'
import type { Selectable, Transaction } from 'kysely'
import { recoverMessageAddress } from 'viem'
import type { z } from 'zod'
import { linkInAppWallet } from '../accounts/service.ts'
import type { Deps } from '../context.ts'
import { randomId, sameDigest, sameSecret } from '../crypto.ts'
import type { Database, Db, WalletsTable } from '../db/schema.ts'
import { rowMac, rowMacMade } from '../row-mac.ts'
import { sessionHolds } from '../sessions/service.ts'
import { enqueueEvent } from '../webhooks/events.ts'
import { walletHandedOver } from './fork-pair.ts'
import { insertPasskey, type Place, placeOf, type SealedPurpose, walletKey } from './sealed.ts'

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
/** How long a create ticket and a pending evaluation stay usable. */
const TICKET_MS = 10 * 60_000
const EVALUATION_MS = 5 * 60_000
/** How long a creation challenge stays usable. */
const CHALLENGE_MS = 10 * 60_000
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
  /**
   * The OPRF key's seed (hex) when it was derived under an earlier server secret: written by
   * `latch secret rotate`, since the passcode verifier depends on the key and only the
   * visitor knows the passcode. Absent: the seed is derived from the current secret.
   */
  seed?: string
}
/** The share itself is in wallet_passkeys (passkeys.ts), sealed under the passkey. */
type PasskeyRecovery = { method: 'passkey' }
type Recovery = LatchRecovery | PasscodeRecovery | PasskeyRecovery

const OPRF_INFO = new TextEncoder().encode('latch wallet passcode')

/** The seed of a wallet's OPRF key: the server secret and the nonce both needed. */
function oprfSeed(secrets: Deps['secrets'], nonce: string): string {
  return secrets.hmac(`wallet-oprf:${nonce}`)
}

/** The wallet's OPRF secret key from its seed (hex). */
function oprfKey(seed: string): Uint8Array {
  const bytes = new Uint8Array(Buffer.from(seed, 'hex'))
  return ristretto255_oprf.oprf.deriveKeyPair(bytes, OPRF_INFO).secretKey
}

function evaluate(seed: string, blinded: string): string {
  try {
    const out = ristretto255_oprf.oprf.blindEvaluate(
      oprfKey(seed),
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

const recordInvalid = () => LatchError.of('wallet_record_invalid')

/** Opens a sealed value of the row; a value sealed for another row, user or address does not open. */
function openSealed(deps: Deps, purpose: SealedPurpose, row: Place, sealed: string): string {
  return openSealedWith(deps, purpose, row, sealed).value
}

/** As openSealed, saying whether the value took the previous secret (a rotation under way). */
function openSealedWith(
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

/** The attempt state of a passcode wallet, which only the server may write. */
interface AttemptState {
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
function withMac(deps: Deps, id: string, s: AttemptState) {
  const state: AttemptState = {
    failed_attempts: s.failed_attempts,
    total_failures: s.total_failures,
    locked_until: s.locked_until,
    evaluated_at: s.evaluated_at,
    reauth_after: s.reauth_after,
  }
  return { ...state, state_mac: stateMac(deps, id, state) }
}

const NO_ATTEMPTS: AttemptState = {
  failed_attempts: 0,
  total_failures: 0,
  locked_until: null,
  evaluated_at: null,
  reauth_after: null,
}

/** Which secret made the row's state MAC (see macMade), or null when none did. */
function stateMadeBy(deps: Deps, row: WalletRow): 'current' | 'previous' | null {
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

function checkState(deps: Deps, row: WalletRow): void {
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
const counterMac = (
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
async function checkCounter(deps: Deps, trx: Db, row: WalletRow): Promise<number> {
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
async function writeState(
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

/**
 * A challenge for a creation's proof of possession: sealed for this app and user, 10 minutes.
 * The new key signs it with everything the creation stores (shared/src/wallet-proof.ts).
 */
export function walletChallenge(deps: Deps, appId: string, userId: string): { challenge: string } {
  const expires = deps.clock.now().getTime() + CHALLENGE_MS
  const nonce = randomBytes(16).toString('base64url')
  const challenge = deps.secrets.encrypt(
    JSON.stringify({ a: appId, u: userId, e: expires, n: nonce }),
    'latch-wallet-challenge',
  )
  return { challenge }
}

const badProof = (why: string) =>
  LatchError.of('invalid_data', { message: `Request body is invalid: proof: ${why}` })

/** Refuses a creation whose proof is not the address's key signing this creation for this user. */
async function checkProof(
  deps: Deps,
  appId: string,
  userId: string,
  body: z.infer<typeof walletCreateBody>,
): Promise<void> {
  let value: { a?: unknown; u?: unknown; e?: unknown }
  try {
    value = JSON.parse(deps.secrets.decrypt(body.proof.challenge, 'latch-wallet-challenge'))
  } catch {
    throw badProof('not a challenge of this server')
  }
  if (value.a !== appId || value.u !== userId) throw badProof('not a challenge of this user')
  if (typeof value.e !== 'number' || value.e < deps.clock.now().getTime()) {
    throw badProof('the challenge has expired')
  }
  const digest = await walletCreationDigest({
    challenge: body.proof.challenge,
    address: body.address,
    chainId: body.chainId,
    authShare: body.authShare,
    recovery: body.recovery,
  })
  let signer: string
  try {
    signer = await recoverMessageAddress({
      message: walletCreationMessage(body.address, digest),
      signature: body.proof.signature as `0x${string}`,
    })
  } catch {
    throw badProof('not a signature')
  }
  if (walletKey(signer) !== walletKey(body.address)) {
    throw badProof('not signed by the key of this address')
  }
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
  const evaluated = evaluate(oprfSeed(deps.secrets, nonce), blinded)
  const expires = deps.clock.now().getTime() + TICKET_MS
  const ticket = deps.secrets.encrypt(
    JSON.stringify({ a: appId, u: userId, n: nonce, e: expires }),
    'latch-wallet-ticket',
  )
  return { evaluated, ticket }
}

/**
 * The nonce a ticket names, and the seed its evaluation used when that was under the previous
 * secret (a ticket from a process not yet given the new one, during a rotation).
 */
function openTicket(
  deps: Deps,
  appId: string,
  userId: string,
  ticket: string,
): { nonce: string; seed?: string } {
  const bad = LatchError.of('invalid_data', {
    message: 'Request body is invalid: recovery.ticket: not a ticket of this user, or expired',
  })
  let value: { a?: unknown; u?: unknown; n?: unknown; e?: unknown }
  let previous: boolean
  try {
    const opened = deps.secrets.open(ticket, 'latch-wallet-ticket')
    value = JSON.parse(opened.value)
    previous = opened.previous
  } catch {
    throw bad
  }
  if (value.a !== appId || value.u !== userId || typeof value.n !== 'string') throw bad
  if (typeof value.e !== 'number' || value.e < deps.clock.now().getTime()) throw bad
  if (previous && deps.secrets.previous) {
    return { nonce: value.n, seed: oprfSeed(deps.secrets.previous, value.n) }
  }
  return { nonce: value.n }
}

/**
 * Stores a new wallet for the user and links it as the user's in-app wallet account, once its
 * proof of possession holds. Answers wallet_already_exists when the user has one.
 */
export async function createWallet(
  deps: Deps,
  appId: string,
  userId: string,
  body: z.infer<typeof walletCreateBody>,
): Promise<{ user: User; wallet: WalletAccount }> {
  await checkProof(deps, appId, userId, body)
  const now = deps.clock.now()
  const recovery: Recovery =
    body.recovery.method === 'latch'
      ? { method: 'latch', key: body.recovery.key, ciphertext: body.recovery.ciphertext }
      : body.recovery.method === 'passkey'
        ? { method: 'passkey' }
        : {
            method: 'user-passcode',
            salt: body.recovery.salt,
            ciphertext: body.recovery.ciphertext,
            verifier: body.recovery.verifier,
            ...openTicket(deps, appId, userId, body.recovery.ticket),
          }
  const place: Place = { id: randomId(20), app_id: appId, user_id: userId, address: body.address }
  const passkey = body.recovery.method === 'passkey' ? body.recovery : null
  const attempts = withMac(deps, place.id, NO_ATTEMPTS)
  try {
    await deps.db
      .with('wallet', (db) =>
        db.insertInto('wallets').values({
          id: place.id,
          app_id: appId,
          user_id: userId,
          address: walletKey(body.address),
          chain_id: body.chainId ?? DEFAULT_CHAIN,
          recovery_method: recovery.method,
          auth_share_sealed: deps.secrets.encrypt(body.authShare, placeOf('auth-share', place)),
          recovery_sealed: deps.secrets.encrypt(
            JSON.stringify(recovery),
            placeOf('recovery', place),
          ),
          ...attempts,
          created_at: now,
        }),
      )
      // Its attempt counter in the same statement: a wallet never exists without one.
      .insertInto('wallet_attempts')
      .values({
        wallet_id: place.id,
        counter: 0,
        mac: counterMac(deps, place.id, 0, attempts.state_mac),
      })
      .execute()
    if (passkey) {
      await insertPasskey(deps, place, passkey, now).catch(async (e: unknown) => {
        // No passkey wallet without its passkey: the user may try again.
        await deps.db.deleteFrom('wallets').where('id', '=', place.id).execute()
        throw e
      })
    }
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
    const user = await linkInAppWallet(deps, appId, userId, account, now)
    const wallet = user.linkedAccounts.find(
      (a): a is WalletAccount =>
        a.type === 'wallet' && walletKey(a.address) === walletKey(body.address),
    )
    if (!wallet) throw new Error('the wallet account was not linked')
    return { user, wallet }
  } catch (e) {
    // No wallet row without its account: the user may try again.
    await deps.db.deleteFrom('wallets').where('id', '=', place.id).execute()
    throw e
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

const COLUMNS = [
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

function recoveryOf(deps: Deps, row: WalletRow): Recovery {
  const opened = openSealedWith(deps, 'recovery', row, row.recovery_sealed)
  return recoveryFrom(deps, row, opened.value, opened.previous)
}

/**
 * The recovery material from its opened JSON. Sealed under the previous secret and not yet
 * rotated, a passcode wallet's OPRF key is the previous secret's: its seed is filled in here.
 */
function recoveryFrom(deps: Deps, row: WalletRow, json: string, previous: boolean): Recovery {
  const recovery = JSON.parse(json) as Recovery
  // The plain column only indexes; the sealed value is what counts, and they must agree.
  if (recovery.method !== row.recovery_method) throw recordInvalid()
  if (recovery.method === 'user-passcode' && recovery.seed === undefined && previous) {
    const before = deps.secrets.previous
    if (before) recovery.seed = oprfSeed(before, recovery.nonce)
  }
  return recovery
}

/** The seed of a passcode wallet's OPRF key: stored by a rotation, else the current secret's. */
function seedOf(deps: Deps, recovery: PasscodeRecovery): string {
  return recovery.seed ?? oprfSeed(deps.secrets, recovery.nonce)
}

export function authShareOf(deps: Deps, row: WalletRow): string {
  return openSealed(deps, 'auth-share', row, row.auth_share_sealed)
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
  sessionId: string,
  address: string,
): Promise<WalletSharesResponse> {
  const row = await ownWallet(deps, appId, userId, address)
  // A share-bearing route: an unpaired fork gets none (fork-pair.ts), whatever else it holds.
  if (!(await walletHandedOver(deps, sessionId))) {
    throw LatchError.of('fork_wallet_not_confirmed')
  }
  return { authShare: authShareOf(deps, row) }
}

/**
 * Automatic recovery: the auth share and the recovery share with its key, for method 'latch'.
 * A session opened by a fork link gets them only once paired from inside the wallet origin
 * (fork-pair.ts); passcode recovery needs no such pairing, it needs the passcode.
 */
export async function recoverLatch(
  deps: Deps,
  appId: string,
  userId: string,
  sessionId: string,
  address: string,
): Promise<WalletSharesResponse> {
  const row = await ownWallet(deps, appId, userId, address)
  const recovery = recoveryOf(deps, row)
  if (recovery.method !== 'latch') {
    throw LatchError.of('invalid_recovery_pin', {
      status: 400,
      message: `This wallet is recovered with its ${recovery.method === 'passkey' ? 'passkey' : 'passcode'}`,
    })
  }
  if (!(await walletHandedOver(deps, sessionId))) {
    throw LatchError.of('fork_wallet_not_confirmed')
  }
  const data = { userId, address: row.address, recoveryMethod: 'latch' }
  await enqueueEvent(deps.db, { appId, type: 'wallet.recovered', data, now: deps.clock.now() })
  return {
    authShare: authShareOf(deps, row),
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
