/**
 * Users and their linked accounts, shared by every sign-in method (e-mail, SMS, OAuth, SIWE).
 * An identifier (e-mail, number, address, OAuth subject) belongs to at most one user per app.
 */
import {
  buildUser,
  LatchError,
  type LinkedAccount,
  type User,
  type WalletAccount,
} from '@latch/shared'
import type { Log } from '../clock.ts'
import { randomId, type Secrets } from '../crypto.ts'
import { type Db, json } from '../db/index.ts'
import { rowMac, rowMacHolds } from '../row-mac.ts'
import { enqueueEvent, eventCte } from '../webhooks/events.ts'

/**
 * What the account store needs: the database, and the server secret's keys, since every linked
 * account carries a MAC of whom it signs in as (row-mac.ts) and one without grants nothing.
 */
export interface AccountStore {
  db: Db
  secrets: Secrets
  log: Log
}

/** The fields of a stored account its MAC covers. */
interface AccountKey {
  id: string
  app_id: string
  user_id: string
  type: string
  identifier: string
}

/** Whether a stored account's MAC holds (a refusal is logged). */
export function accountHolds(store: AccountStore, row: AccountKey, mac: string | null): boolean {
  return rowMacHolds(store, 'linked_account', row, mac, row.id)
}

/** A sign-in or link through an account row written without the server secret. */
export const accountRecordInvalid = () => LatchError.of('account_record_invalid')

/**
 * A linked account before it is stored (verifiedAt is set from `now`), of any type or of the
 * types `A` (an OAuth provider's profile is a `NewAccount<OAuthAccount>`).
 */
export type NewAccount<A extends LinkedAccount = LinkedAccount> = A extends unknown
  ? Omit<A, 'verifiedAt'>
  : never

/** The unique key of an account within its type. */
export function accountIdentifier(account: NewAccount): string {
  const raw =
    account.type === 'email' || account.type === 'wallet'
      ? account.address
      : account.type === 'phone'
        ? account.number
        : account.type === 'passkey'
          ? account.credentialId
          : account.subject
  return normalizeIdentifier(account.type, raw)
}

/**
 * An identifier as it is stored and compared: e-mail and wallet addresses are case-insensitive
 * (and an e-mail address may arrive with spaces around it); numbers, OAuth subjects and passkey
 * credential ids are exact.
 */
export function normalizeIdentifier(type: LinkedAccount['type'], identifier: string): string {
  return type === 'email' || type === 'wallet' ? identifier.trim().toLowerCase() : identifier
}

/** Account types a user holds at most one of (wallets and passkeys may be several). */
function singular(type: LinkedAccount['type']): boolean {
  return type !== 'wallet' && type !== 'passkey'
}

/** A sign-in method: anything but the in-app wallet, which cannot sign in by itself. */
function isSignInMethod(account: LinkedAccount): boolean {
  return !(account.type === 'wallet' && account.walletClient === 'latch')
}

/** Marked as the in-app wallet: only the wallet store (linkInAppWallet) writes such an account. */
function claimsInAppWallet(account: NewAccount): boolean {
  return (
    account.type === 'wallet' &&
    (account.walletClient === 'latch' ||
      account.walletClientType === 'latch' ||
      account.connectorType === 'embedded')
  )
}

/**
 * Refuses a wallet account from outside the wallet store that names or claims an in-app
 * wallet: a wallet sign-in or link with the in-app wallet's address would otherwise take over
 * (or overwrite) its account record. Any user's in-app wallet counts, and the wallets table is
 * read too, since create stores the wallet before it links its account.
 */
async function refuseInAppWallet(db: Db, appId: string, account: NewAccount): Promise<void> {
  if (account.type !== 'wallet') return
  const forbidden = () => LatchError.of('embedded_wallet_link_forbidden', { status: 400 })
  if (claimsInAppWallet(account)) throw forbidden()
  const identifier = accountIdentifier(account)
  const [wallet, linked] = await Promise.all([
    db
      .selectFrom('wallets')
      .select('id')
      .where('app_id', '=', appId)
      .where('address', '=', identifier)
      .executeTakeFirst(),
    db
      .selectFrom('linked_accounts')
      .select('data')
      .where('app_id', '=', appId)
      .where('type', '=', 'wallet')
      .where('identifier', '=', identifier)
      .executeTakeFirst(),
  ])
  if (wallet || (linked && !isSignInMethod(linked.data as unknown as LinkedAccount))) {
    throw forbidden()
  }
}

function isUniqueViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505'
}

function stored(account: NewAccount, now: Date): LinkedAccount {
  return { ...account, verifiedAt: now.toISOString() } as LinkedAccount
}

/** A new account row, with its MAC: the user API's import writes them too. */
export function accountRow(
  secrets: Secrets,
  appId: string,
  userId: string,
  account: NewAccount,
  now: Date,
) {
  const key: AccountKey = {
    id: randomId(20),
    app_id: appId,
    user_id: userId,
    type: account.type,
    identifier: accountIdentifier(account),
  }
  return {
    ...key,
    data: json(stored(account, now)),
    mac: rowMac(secrets, 'linked_account', key),
    created_at: now,
  }
}

async function insertAccount(
  store: AccountStore,
  appId: string,
  userId: string,
  account: NewAccount,
  now: Date,
): Promise<void> {
  await store.db
    .insertInto('linked_accounts')
    .values(accountRow(store.secrets, appId, userId, account, now))
    .execute()
}

/** The stored account of the app with this type and normalized identifier, if any. */
function findAccount(
  db: Db,
  appId: string,
  type: LinkedAccount['type'],
  identifier: string,
): Promise<{ id: string; user_id: string; mac: string } | undefined> {
  return db
    .selectFrom('linked_accounts')
    .select(['id', 'user_id', 'mac'])
    .where('app_id', '=', appId)
    .where('type', '=', type)
    .where('identifier', '=', identifier)
    .executeTakeFirst()
}

/** Profile fields (an OAuth name, a wallet's chain) follow the latest sign-in or link. */
async function refreshAccount(db: Db, id: string, account: NewAccount, now: Date): Promise<void> {
  await db
    .updateTable('linked_accounts')
    .set({ data: json(stored(account, now)) })
    .where('id', '=', id)
    .execute()
}

/**
 * The user with its linked accounts, or not_found: one statement. An account whose MAC does not
 * hold (written, moved or copied without the server secret) is left out.
 */
export async function loadUser(store: AccountStore, appId: string, userId: string): Promise<User> {
  const rows = await store.db
    .selectFrom('users as u')
    .leftJoin('linked_accounts as a', 'a.user_id', 'u.id')
    .select([
      'u.id',
      'u.created_at',
      'a.data',
      'a.id as account_id',
      'a.app_id',
      'a.type',
      'a.identifier',
      'a.mac',
    ])
    .where('u.id', '=', userId)
    .where('u.app_id', '=', appId)
    .orderBy('a.created_at')
    .orderBy('a.id')
    .execute()
  const user = rows[0]
  if (!user) throw LatchError.of('not_found', { message: 'User not found' })
  return buildUser(
    user.id,
    user.created_at.toISOString(),
    rows.flatMap((r) =>
      r.data &&
      accountHolds(
        store,
        {
          id: r.account_id ?? '',
          app_id: r.app_id ?? '',
          user_id: user.id,
          type: r.type ?? '',
          identifier: r.identifier ?? '',
        },
        r.mac,
      )
        ? [r.data as unknown as LinkedAccount]
        : [],
    ),
  )
}

/**
 * Signs in with a verified account: the user who holds it, or a new user created with it.
 * @example await authenticateWithAccount(db, appId, { type: 'email', address: 'a@b.c' })
 */
export async function authenticateWithAccount(
  store: AccountStore,
  appId: string,
  account: NewAccount,
  now: Date = new Date(),
): Promise<{ user: User; isNewUser: boolean }> {
  const { db } = store
  await refuseInAppWallet(db, appId, account)
  const identifier = accountIdentifier(account)
  // No transaction: a returning user is one statement that refreshes the account and names its
  // user, then one that loads the user; a new user is one statement that writes both rows.
  // Two first sign-ins with one identifier race on the unique key; the loser finds the winner.
  for (let attempt = 0; ; attempt++) {
    try {
      const existing = await db
        .updateTable('linked_accounts')
        .set({ data: json(stored(account, now)) })
        .where('app_id', '=', appId)
        .where('type', '=', account.type)
        .where('identifier', '=', identifier)
        .returning(['id', 'user_id', 'mac'])
        .executeTakeFirst()
      if (existing) {
        // The row names the user it signs in as: only if the server wrote it so.
        const key = { id: existing.id, app_id: appId, user_id: existing.user_id }
        if (!accountHolds(store, { ...key, type: account.type, identifier }, existing.mac)) {
          throw accountRecordInvalid()
        }
        return { user: await loadUser(store, appId, existing.user_id), isNewUser: false }
      }
      const userId = `did:latch:${randomId()}`
      const user = buildUser(userId, now.toISOString(), [stored(account, now)])
      await db
        .with('user', (w) =>
          w.insertInto('users').values({ id: userId, app_id: appId, created_at: now }),
        )
        .with('webhook_event', () => eventCte({ appId, type: 'user.created', data: { user }, now }))
        .insertInto('linked_accounts')
        .values(accountRow(store.secrets, appId, userId, account, now))
        .execute()
      return { user, isNewUser: true }
    } catch (e) {
      if (!isUniqueViolation(e) || attempt >= 2) throw e
    }
  }
}

/**
 * Adds a verified account to a signed-in user. Answers linked_to_another_user when another
 * user of the app holds it, invalid_data when the user already has one of a kind that allows
 * only one (every kind but wallets), and embedded_wallet_link_forbidden for an in-app wallet.
 */
export function linkAccount(
  store: AccountStore,
  appId: string,
  userId: string,
  account: NewAccount,
  now: Date = new Date(),
): Promise<User> {
  return link(store, appId, userId, account, now, false)
}

/** The wallet store's link of the in-app wallet it has just stored (server/src/wallets). */
export function linkInAppWallet(
  store: AccountStore,
  appId: string,
  userId: string,
  account: NewAccount<WalletAccount>,
  now: Date = new Date(),
): Promise<User> {
  return link(store, appId, userId, account, now, true)
}

async function link(
  store: AccountStore,
  appId: string,
  userId: string,
  account: NewAccount,
  now: Date,
  inAppWallet: boolean,
): Promise<User> {
  const identifier = accountIdentifier(account)
  try {
    return await store.db.transaction().execute(async (trx) => {
      const inTrx = { ...store, db: trx }
      await lockUser(trx, appId, userId)
      if (!inAppWallet) await refuseInAppWallet(trx, appId, account)
      const existing = await findAccount(trx, appId, account.type, identifier)
      if (existing && existing.user_id !== userId) throw LatchError.of('linked_to_another_user')
      if (
        existing &&
        !accountHolds(
          store,
          { id: existing.id, app_id: appId, user_id: userId, type: account.type, identifier },
          existing.mac,
        )
      ) {
        throw accountRecordInvalid()
      }
      if (existing) {
        await refreshAccount(trx, existing.id, account, now)
      } else {
        if (singular(account.type)) {
          const same = await trx
            .selectFrom('linked_accounts')
            .select('id')
            .where('user_id', '=', userId)
            .where('type', '=', account.type)
            .executeTakeFirst()
          if (same) {
            throw LatchError.of('invalid_data', {
              message: `This user already has a linked ${account.type.replace('_oauth', '')} account; unlink it first`,
            })
          }
        }
        await insertAccount(inTrx, appId, userId, account, now)
      }
      const user = await loadUser(inTrx, appId, userId)
      if (!existing) {
        const data = inAppWallet
          ? { user, wallet: stored(account, now) }
          : { user, account: stored(account, now) }
        await enqueueEvent(trx, {
          appId,
          type: inAppWallet ? 'wallet.created' : 'user.linked_account',
          data,
          now,
        })
      }
      return user
    })
  } catch (e) {
    if (isUniqueViolation(e)) throw LatchError.of('linked_to_another_user')
    throw e
  }
}

/**
 * Removes an account from a user. The in-app wallet cannot be unlinked, and neither can the
 * last sign-in method: a user must keep a way to sign in (last_account_unlink_forbidden).
 */
export async function unlinkAccount(
  store: AccountStore,
  appId: string,
  userId: string,
  target: { type: LinkedAccount['type']; identifier: string },
  now: Date = new Date(),
): Promise<User> {
  return store.db.transaction().execute(async (trx) => {
    await lockUser(trx, appId, userId)
    const all = await trx
      .selectFrom('linked_accounts')
      .select(['id', 'app_id', 'user_id', 'type', 'identifier', 'data', 'mac'])
      .where('user_id', '=', userId)
      .execute()
    // An account written without the server secret is none of the user's ways to sign in.
    const rows = all.filter((r) => accountHolds(store, r, r.mac))
    const identifier = normalizeIdentifier(target.type, target.identifier)
    const row = rows.find((r) => r.type === target.type && r.identifier === identifier)
    if (!row) {
      throw LatchError.of('not_found', { message: 'This account is not linked to the user' })
    }
    const account = row.data as unknown as LinkedAccount
    if (!isSignInMethod(account)) throw LatchError.of('embedded_wallet_unlink_forbidden')
    const others = rows.filter(
      (r) => r.id !== row.id && isSignInMethod(r.data as unknown as LinkedAccount),
    )
    if (others.length === 0) throw LatchError.of('last_account_unlink_forbidden')
    await trx.deleteFrom('linked_accounts').where('id', '=', row.id).execute()
    const user = await loadUser({ ...store, db: trx }, appId, userId)
    await enqueueEvent(trx, { appId, type: 'user.unlinked_account', data: { user, account }, now })
    return user
  })
}

/** Serializes changes to one user's accounts (a row lock on PostgreSQL). */
export async function lockUser(db: Db, appId: string, userId: string): Promise<void> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('id', '=', userId)
    .where('app_id', '=', appId)
    .forUpdate()
    .executeTakeFirst()
  if (!row) throw LatchError.of('not_found', { message: 'User not found' })
}
