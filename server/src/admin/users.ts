/**
 * The user API's storage side: look-ups, the paged list, complete deletion, export and import.
 * Users are answered in the shape the SDK already gets (`User` of @latch/shared).
 */
import {
  buildUser,
  type CodeChannel,
  LatchError,
  type LinkedAccount,
  LOGIN_METHODS,
  type LoginMethod,
  type User,
} from '@latch/shared'
import { sql } from 'kysely'
import {
  type AccountStore,
  accountHolds,
  accountRow,
  lockUser,
  normalizeIdentifier,
} from '../accounts/service.ts'
import { randomId } from '../crypto.ts'
import type { Db } from '../db/index.ts'
import { enqueueEvent } from '../webhooks/events.ts'

/** The linked account type each login method signs in with. */
export const LOGIN_METHOD_ACCOUNT: Record<LoginMethod, LinkedAccount['type']> = {
  wallet: 'wallet',
  email: 'email',
  sms: 'phone',
  google: 'google_oauth',
  twitter: 'twitter_oauth',
  discord: 'discord_oauth',
  github: 'github_oauth',
  apple: 'apple_oauth',
  passkey: 'passkey',
}

/** Several users with their linked accounts: two statements whatever the count. */
async function loadUsers(
  store: AccountStore,
  appId: string,
  rows: readonly { id: string; created_at: Date }[],
): Promise<User[]> {
  if (rows.length === 0) return []
  const all = await store.db
    .selectFrom('linked_accounts')
    .select(['id', 'app_id', 'user_id', 'type', 'identifier', 'data', 'mac'])
    .where('app_id', '=', appId)
    .where(
      'user_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  // An account written without the server secret is none of the user's.
  const accounts = all.filter((a) => accountHolds(store, a, a.mac))
  const byUser = new Map<string, LinkedAccount[]>()
  for (const a of accounts) {
    const list = byUser.get(a.user_id) ?? []
    list.push(a.data as unknown as LinkedAccount)
    byUser.set(a.user_id, list)
  }
  return rows.map((r) => buildUser(r.id, r.created_at.toISOString(), byUser.get(r.id) ?? []))
}

export async function userById(store: AccountStore, appId: string, userId: string): Promise<User> {
  const row = await store.db
    .selectFrom('users')
    .select(['id', 'created_at'])
    .where('app_id', '=', appId)
    .where('id', '=', userId)
    .executeTakeFirst()
  if (!row) throw LatchError.of('not_found', { message: 'User not found' })
  const [user] = await loadUsers(store, appId, [row])
  return user as User
}

/** The user holding the account of this type and (normalized) identifier, or not_found. */
export async function userByAccount(
  store: AccountStore,
  appId: string,
  type: LinkedAccount['type'],
  identifier: string,
): Promise<User> {
  const row = await store.db
    .selectFrom('linked_accounts')
    .select(['id', 'app_id', 'user_id', 'type', 'identifier', 'mac'])
    .where('app_id', '=', appId)
    .where('type', '=', type)
    .where('identifier', '=', normalizeIdentifier(type, identifier))
    .executeTakeFirst()
  // An account written without the server secret names nobody.
  if (!row || !accountHolds(store, row, row.mac)) {
    throw LatchError.of('not_found', { message: 'User not found' })
  }
  return userById(store, appId, row.user_id)
}

export interface ListFilter {
  createdSince?: Date
  hasWallet?: boolean
  loginMethod?: LoginMethod
}

/** An opaque position in the (created_at, id) order: where the last page ended. */
function encodeCursor(row: { id: string; created_at: Date }): string {
  return Buffer.from(JSON.stringify([row.created_at.toISOString(), row.id])).toString('base64url')
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const bad = () => LatchError.of('invalid_data', { message: 'cursor is invalid' })
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw bad()
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    typeof value[0] !== 'string' ||
    typeof value[1] !== 'string' ||
    // A user id is printable ASCII (did:latch:...): anything else was not made here.
    !/^[\x20-\x7e]{1,200}$/.test(value[1]) ||
    Number.isNaN(Date.parse(value[0]))
  ) {
    throw bad()
  }
  return { createdAt: new Date(value[0]), id: value[1] }
}

/** One page of the app's users, oldest first, and the cursor of the next page (null at the end). */
export async function listUsers(
  store: AccountStore,
  appId: string,
  opts: { limit: number; cursor?: string; filter?: ListFilter },
): Promise<{ users: User[]; nextCursor: string | null }> {
  const filter = opts.filter ?? {}
  let query = store.db
    .selectFrom('users as u')
    .select(['u.id', 'u.created_at'])
    .where('u.app_id', '=', appId)
  if (opts.cursor) {
    const after = decodeCursor(opts.cursor)
    query = query.where((eb) =>
      eb.or([
        eb('u.created_at', '>', after.createdAt),
        eb.and([eb('u.created_at', '=', after.createdAt), eb('u.id', '>', after.id)]),
      ]),
    )
  }
  if (filter.createdSince) query = query.where('u.created_at', '>=', filter.createdSince)
  if (filter.hasWallet !== undefined) {
    const has = filter.hasWallet
    query = query.where((eb) => {
      const wallet = eb.exists(
        eb.selectFrom('wallets as w').select('w.id').whereRef('w.user_id', '=', 'u.id'),
      )
      return has ? wallet : eb.not(wallet)
    })
  }
  const method = filter.loginMethod
  if (method) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('linked_accounts as a')
          .select('a.id')
          .whereRef('a.user_id', '=', 'u.id')
          .where('a.type', '=', LOGIN_METHOD_ACCOUNT[method])
          // The in-app wallet is not a way to sign in.
          .$if(method === 'wallet', (q) =>
            q.where(sql<boolean>`coalesce(a.data->>'walletClient', '') <> 'latch'`),
          ),
      ),
    )
  }
  const rows = await query
    .orderBy('u.created_at')
    .orderBy('u.id')
    .limit(opts.limit + 1)
    .execute()
  const page = rows.slice(0, opts.limit)
  const last = page.at(-1)
  return {
    users: await loadUsers(store, appId, page),
    nextCursor: rows.length > opts.limit && last ? encodeCursor(last) : null,
  }
}

export function isLoginMethod(value: string): value is LoginMethod {
  return (LOGIN_METHODS as readonly string[]).includes(value)
}

/** What a deletion removed, table by table. */
export type DeletedCounts = Record<
  | 'users'
  | 'linked_accounts'
  | 'sessions'
  | 'refresh_tokens'
  | 'fork_tokens'
  | 'wallets'
  | 'verification_codes'
  | 'oauth_states'
  | 'siwe_nonces'
  | 'analytics_events'
  | 'rate_limits'
  | 'webhook_deliveries',
  number
>

/**
 * Deletes the user and every row of theirs in one transaction: linked accounts, sessions
 * (their access tokens stop at once: every authenticated route asks whether the session is
 * live), refresh and fork tokens, the wallet with its auth share and recovery material (no
 * recovery remains), codes sent to their e-mail or number, pending OAuth flows and SIWE nonces,
 * analytics events naming their id or wallet, rate-limit counters keyed by them, and webhook
 * events about them; then writes the `user.deleted` event (its id only) in the same transaction.
 */
export async function deleteUser(
  db: Db,
  appId: string,
  userId: string,
  now: Date,
): Promise<DeletedCounts> {
  return db.transaction().execute(async (trx) => {
    await lockUser(trx, appId, userId)
    const accounts = await trx
      .selectFrom('linked_accounts')
      .select(['type', 'identifier'])
      .where('user_id', '=', userId)
      .execute()
    const wallets = await trx
      .selectFrom('wallets')
      .select('address')
      .where('user_id', '=', userId)
      .execute()
    const addresses = [
      ...new Set([
        ...wallets.map((w) => w.address),
        ...accounts.filter((a) => a.type === 'wallet').map((a) => a.identifier),
      ]),
    ]
    // The identifiers codes were sent to, with the channel each used.
    const codeTargets: [CodeChannel, string][] = []
    for (const a of accounts) {
      if (a.type === 'email') codeTargets.push(['email', a.identifier])
      if (a.type === 'phone') codeTargets.push(['sms', a.identifier])
    }
    const sessionIds = (
      await trx.selectFrom('sessions').select('id').where('user_id', '=', userId).execute()
    ).map((s) => s.id)

    const counted = async (q: { executeTakeFirst(): Promise<{ numDeletedRows: bigint }> }) =>
      Number((await q.executeTakeFirst()).numDeletedRows)

    const refreshTokens =
      sessionIds.length === 0
        ? 0
        : await counted(trx.deleteFrom('refresh_tokens').where('session_id', 'in', sessionIds))
    const forkTokens =
      sessionIds.length === 0
        ? 0
        : await counted(
            trx
              .deleteFrom('fork_tokens')
              .where((eb) =>
                eb.or([
                  eb('session_id', 'in', sessionIds),
                  eb('redeemed_session_id', 'in', sessionIds),
                ]),
              ),
          )
    const verificationCodes =
      codeTargets.length === 0
        ? 0
        : await counted(
            trx
              .deleteFrom('verification_codes')
              .where('app_id', '=', appId)
              .where((eb) =>
                eb.or(
                  codeTargets.map(([channel, identifier]) =>
                    eb.and([eb('channel', '=', channel), eb('identifier', '=', identifier)]),
                  ),
                ),
              ),
          )
    const oauthStates = await counted(trx.deleteFrom('oauth_states').where('user_id', '=', userId))
    const siweNonces = await counted(
      trx
        .deleteFrom('siwe_nonces')
        .where('app_id', '=', appId)
        .where((eb) =>
          addresses.length === 0
            ? eb('user_id', '=', userId)
            : eb.or([eb('user_id', '=', userId), eb('address', 'in', addresses)]),
        ),
    )
    // Events carry the user in their free-form payload, if at all: matched as text. User ids
    // and addresses are long and random enough that no other event holds one by chance.
    const named = [userId, ...addresses]
    const analyticsEvents = await counted(
      trx
        .deleteFrom('analytics_events')
        .where('app_id', '=', appId)
        .where((eb) =>
          eb.or(named.map((n) => eb(sql`position(${n} in lower(payload::text))`, '>', 0))),
        ),
    )
    // Counters keyed by the user's id (wallet passcode, RPC budget) and by the identifiers
    // codes were sent to (codes/service.ts names them send: and fail:).
    const limitKeys = codeTargets.flatMap(([channel, identifier]) => [
      `send:${appId}:${channel}:${identifier}`,
      `fail:${appId}:${channel}:${identifier}`,
    ])
    const rateLimits = await counted(
      trx
        .deleteFrom('rate_limits')
        .where((eb) =>
          eb.or([
            eb(sql`position(${userId} in key)`, '>', 0),
            ...(limitKeys.length ? [eb('key', 'in', limitKeys)] : []),
          ]),
        ),
    )
    // Webhook events about the user (their payloads carry the User), sent or not: the
    // user.deleted event written below is the one that remains, and it names the id only.
    const webhookDeliveries = await counted(
      trx
        .deleteFrom('webhook_deliveries')
        .where('app_id', '=', appId)
        .where(sql<boolean>`position(${userId} in payload) > 0`),
    )
    const walletRows = await counted(trx.deleteFrom('wallets').where('user_id', '=', userId))
    const sessions = await counted(trx.deleteFrom('sessions').where('user_id', '=', userId))
    const linkedAccounts = await counted(
      trx.deleteFrom('linked_accounts').where('user_id', '=', userId),
    )
    const users = await counted(trx.deleteFrom('users').where('id', '=', userId))
    await enqueueEvent(trx, { appId, type: 'user.deleted', data: { id: userId }, now })
    return {
      users,
      linked_accounts: linkedAccounts,
      sessions,
      refresh_tokens: refreshTokens,
      fork_tokens: forkTokens,
      wallets: walletRows,
      verification_codes: verificationCodes,
      oauth_states: oauthStates,
      siwe_nonces: siweNonces,
      analytics_events: analyticsEvents,
      rate_limits: rateLimits,
      webhook_deliveries: webhookDeliveries,
    }
  })
}

/** Users per page while exporting: memory stays flat however many users the app has. */
const EXPORT_PAGE = 500

/** Every user of the app as JSON Lines, a page at a time (the User shape: no share, secret or token). */
export function exportUsers(store: AccountStore, appId: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let cursor: string | undefined
  let done = false
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (done) return
      const page = await listUsers(store, appId, { limit: EXPORT_PAGE, cursor })
      const text = page.users.map((u) => `${JSON.stringify(u)}\n`).join('')
      if (text) controller.enqueue(encoder.encode(text))
      if (page.nextCursor === null) {
        done = true
        controller.close()
      } else {
        cursor = page.nextCursor
      }
    },
  })
}

export type ImportEntry = { email: string } | { phone: string }
export interface ImportResult {
  email?: string
  phone?: string
  id: string
  status: 'created' | 'existing'
}

function isUniqueViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505'
}

/**
 * Creates a user for each e-mail address or number not yet held by one (validated and
 * normalized by the caller); one already held is answered as existing with its user. A retried
 * batch creates nothing twice: the identity's unique key decides.
 */
export async function importUsers(
  store: AccountStore,
  appId: string,
  entries: readonly ImportEntry[],
  now: Date,
): Promise<ImportResult[]> {
  const { db } = store
  const results: ImportResult[] = []
  for (const entry of entries) {
    const account: LinkedAccount =
      'email' in entry
        ? { type: 'email', address: entry.email, verifiedAt: now.toISOString() }
        : { type: 'phone', number: entry.phone, verifiedAt: now.toISOString() }
    const identifier = 'email' in entry ? entry.email : entry.phone
    const echo = 'email' in entry ? { email: entry.email } : { phone: entry.phone }
    for (let attempt = 0; ; attempt++) {
      const existing = await db
        .selectFrom('linked_accounts')
        .select('user_id')
        .where('app_id', '=', appId)
        .where('type', '=', account.type)
        .where('identifier', '=', identifier)
        .executeTakeFirst()
      if (existing) {
        results.push({ ...echo, id: existing.user_id, status: 'existing' })
        break
      }
      const userId = `did:latch:${randomId()}`
      try {
        await db
          .with('user', (w) =>
            w.insertInto('users').values({ id: userId, app_id: appId, created_at: now }),
          )
          .insertInto('linked_accounts')
          .values(accountRow(store.secrets, appId, userId, account, now))
          .execute()
        results.push({ ...echo, id: userId, status: 'created' })
        break
      } catch (e) {
        // Another request created it meanwhile: read it back as existing.
        if (!isUniqueViolation(e) || attempt >= 2) throw e
      }
    }
  }
  return results
}
