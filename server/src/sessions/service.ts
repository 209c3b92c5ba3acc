/**
 * Sessions and their tokens. A refresh token is 256 random bits stored as a hash, rotated on
 * every use. Presenting the immediate parent of the live token within 10 s answers the live
 * pair (tabs refreshing together); any other reuse revokes the session's family.
 *
 * A family is a sign-in and every session forked from it (fork + fork/recover), named by its
 * root session (`family_id`). Reuse and logout revoke every member in one statement, and each
 * liveness check reads the root's revocation as well as the session's own, so a child made
 * while its family was being revoked is dead too. A fork shares its family's absolute
 * lifetime: forking never extends a sign-in past 30 days.
 *
 * Hot paths are single statements on indexed columns: a sign-in's session is one statement,
 * a refresh is one (rotation, new token and forgetting the grandparent's sealed copy together)
 * and falls back to a locked transaction only when the token is not the live one.
 */
import { type AuthResponse, LatchError, REFRESH_TOKEN_MAX_AGE_S } from '@latch/shared'
import { type Kysely, type RawBuilder, sql } from 'kysely'
import { authenticateWithAccount, type NewAccount } from '../accounts/service.ts'
import { DEFAULT_FORK_TOKEN_TTL_S } from '../config.ts'
import type { Deps } from '../context.ts'
import { hashToken, randomId, randomToken } from '../crypto.ts'
import type { Database, Db } from '../db/index.ts'
import { eventCte, type WebhookEvent } from '../webhooks/events.ts'

export const REFRESH_GRACE_MS = 10_000
/**
 * How long a fork token lives by default (LATCH_FORK_TOKEN_TTL may shorten it): the time to pick
 * a wallet app and let it open the page, and little more, since whoever holds it becomes the user.
 */
export const FORK_TOKEN_TTL_MS = DEFAULT_FORK_TOKEN_TTL_S * 1000
export const SESSION_LIFETIME_MS = REFRESH_TOKEN_MAX_AGE_S * 1000

type SessionDeps = Pick<Deps, 'db' | 'clock' | 'secrets' | 'keys'>

export interface IssuedSession {
  sessionId: string
  userId: string
  token: string
  refreshToken: string
}

/** A session that has just started, and when it ends: what its wallet credential lasts. */
export interface StartedSession extends IssuedSession {
  expiresAt: Date
}

/** A sign-in's answer, and the session it started (for the wallet credential). */
export interface SignedIn {
  response: AuthResponse
  session: StartedSession
}

/** The family a forked session joins, and the end of that family's lifetime. */
interface Family {
  parentId: string
  familyId: string
  expiresAt: Date
}

/** Opens a session for the user: a new family, or a member of `family` when forked. */
export async function createSession(
  deps: SessionDeps,
  appId: string,
  userId: string,
  family: Family | null = null,
  /** A webhook event written by the same statement (a sign-in's user.authenticated). */
  event?: WebhookEvent,
): Promise<StartedSession> {
  const now = deps.clock.now()
  const sessionId = randomId(24)
  const refreshToken = randomToken()
  const expiresAt = family?.expiresAt ?? new Date(now.getTime() + SESSION_LIFETIME_MS)
  // One statement: the session and its first token (and its event) arrive together or not at all.
  const withSession = deps.db.with('session', (db) =>
    db.insertInto('sessions').values({
      id: sessionId,
      app_id: appId,
      user_id: userId,
      parent_id: family?.parentId ?? null,
      family_id: family?.familyId ?? sessionId,
      created_at: now,
      expires_at: expiresAt,
    }),
  )
  // The event's CTE adds no table the insert below reads: the same builder type serves.
  const statement = event
    ? (withSession.with('webhook_event', () => eventCte(event)) as unknown as typeof withSession)
    : withSession
  await statement
    .insertInto('refresh_tokens')
    .values({ hash: hashToken(refreshToken), session_id: sessionId, created_at: now })
    .execute()
  const token = await deps.keys.signAccessToken(appId, userId, sessionId)
  return { sessionId, userId, token, refreshToken, expiresAt }
}

/**
 * Signs in with a verified account (the user who holds it, or a new one) and opens a
 * session: the answer of every authenticate route, and the session for its wallet credential.
 */
export async function signIn(
  deps: SessionDeps,
  appId: string,
  account: NewAccount,
): Promise<SignedIn> {
  // The user API may delete the user between finding them and opening the session (the
  // session's foreign key fails, or the user is gone when read). Their accounts went with
  // them, so the second try signs in as a new user, as a sign-in after the deletion would.
  for (let attempt = 0; ; attempt++) {
    try {
      return await signInOnce(deps, appId, account)
    } catch (e) {
      const vanished =
        (e as { code?: unknown }).code === '23503' ||
        (e instanceof LatchError && e.code === 'not_found')
      if (attempt >= 1 || !vanished) throw e
    }
  }
}

async function signInOnce(
  deps: SessionDeps,
  appId: string,
  account: NewAccount,
): Promise<SignedIn> {
  const { user, isNewUser } = await authenticateWithAccount(
    deps.db,
    appId,
    account,
    deps.clock.now(),
  )
  const now = deps.clock.now()
  const session = await createSession(deps, appId, user.id, null, {
    appId,
    type: 'user.authenticated',
    data: { user, method: account.type, isNewUser },
    now,
  })
  return {
    response: {
      user,
      token: session.token,
      refresh_token: session.refreshToken,
      is_new_user: isNewUser,
    },
    session,
  }
}

/**
 * Rotates `hash`, when it is the live token of a live session of the app, into a new token:
 * one statement, so a refresh is one round trip. Answers nothing when the token is unknown,
 * already rotated, of another app, or its session (or its family) is revoked or expired.
 */
async function rotate(
  db: Kysely<Database>,
  deps: SessionDeps,
  appId: string,
  hash: string,
  now: Date,
): Promise<{ sessionId: string; userId: string; refreshToken: string } | undefined> {
  const refreshToken = randomToken()
  const childHash = hashToken(refreshToken)
  const { rows } = await sql<{ session_id: string; user_id: string }>`
    WITH rotated AS (
      UPDATE refresh_tokens t
      SET rotated_at = ${now}, child_hash = ${childHash},
          child_sealed = ${deps.secrets.encrypt(refreshToken)}
      FROM sessions s, sessions f
      WHERE t.hash = ${hash} AND t.rotated_at IS NULL
        AND s.id = t.session_id AND s.app_id = ${appId}
        AND s.revoked_at IS NULL AND s.expires_at > ${now}
        AND f.id = s.family_id AND f.revoked_at IS NULL
      RETURNING t.session_id, s.user_id
    ), issued AS (
      INSERT INTO refresh_tokens (hash, session_id, created_at)
      SELECT ${childHash}, session_id, CAST(${now} AS timestamptz) FROM rotated
    ), forgotten AS (
      -- The grandparent's copy of the token just rotated can never be answered again.
      UPDATE refresh_tokens SET child_sealed = NULL
      WHERE child_hash = ${hash} AND EXISTS (SELECT 1 FROM rotated)
    )
    SELECT session_id, user_id FROM rotated`.execute(db)
  const row = rows[0]
  return row && { sessionId: row.session_id, userId: row.user_id, refreshToken }
}

/**
 * Revokes every session of the family; already revoked members keep their reason. The tokens
 * stay until the sessions end (the sweeper), as the record of what each one was rotated into.
 */
function revokeFamily(db: Db, family: string | RawBuilder<string>, now: Date, reason: string) {
  return db
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('family_id', '=', family)
    .where('revoked_at', 'is', null)
    .execute()
}

type RefreshOutcome =
  | { kind: 'ok'; sessionId: string; userId: string; refreshToken: string }
  | { kind: 'reuse' }

/** Rotates a refresh token into a new pair; see the module comment for reuse. */
export async function refreshSession(
  deps: SessionDeps,
  appId: string,
  presented: string,
): Promise<IssuedSession> {
  const now = deps.clock.now()
  const hash = hashToken(presented)
  // The common case, a live token: one statement, no transaction.
  const fast = await rotate(deps.db, deps, appId, hash, now)
  const outcome: RefreshOutcome = fast
    ? { kind: 'ok', ...fast }
    : await deps.db.transaction().execute(async (trx): Promise<RefreshOutcome> => {
        // The row lock serializes parallel uses of one token: the later ones see it rotated.
        const row = await trx
          .selectFrom('refresh_tokens as t')
          .innerJoin('sessions as s', 's.id', 't.session_id')
          .innerJoin('sessions as f', 'f.id', 's.family_id')
          .select([
            't.rotated_at',
            't.child_hash',
            't.child_sealed',
            's.id as session_id',
            's.app_id',
            's.user_id',
            's.family_id',
            's.expires_at',
            's.revoked_at',
            'f.revoked_at as family_revoked_at',
          ])
          .where('t.hash', '=', hash)
          .forUpdate('t')
          .executeTakeFirst()
        if (
          !row ||
          row.app_id !== appId ||
          row.revoked_at ||
          row.family_revoked_at ||
          row.expires_at <= now
        ) {
          throw LatchError.of('invalid_refresh_token')
        }
        if (!row.rotated_at) {
          // Rotated by nobody after all (the fast statement lost a race that rolled back).
          const rotated = await rotate(trx, deps, appId, hash, now)
          if (!rotated) throw LatchError.of('invalid_refresh_token')
          return { kind: 'ok', ...rotated }
        }
        if (
          now.getTime() - row.rotated_at.getTime() <= REFRESH_GRACE_MS &&
          row.child_hash &&
          row.child_sealed
        ) {
          const child = await trx
            .selectFrom('refresh_tokens')
            .select('rotated_at')
            .where('hash', '=', row.child_hash)
            .executeTakeFirst()
          if (child && !child.rotated_at) {
            return {
              kind: 'ok',
              sessionId: row.session_id,
              userId: row.user_id,
              refreshToken: deps.secrets.decrypt(row.child_sealed),
            }
          }
        }
        await revokeFamily(trx, row.family_id, now, 'refresh_token_reuse')
        return { kind: 'reuse' }
      })
  if (outcome.kind === 'reuse') throw LatchError.of('invalid_refresh_token')
  const token = await deps.keys.signAccessToken(appId, outcome.userId, outcome.sessionId)
  return { ...outcome, token }
}

/**
 * Revokes the family of the session a refresh token (or else the bearer's `sid`) belongs to,
 * in one statement; unknown tokens and other apps' sessions are ignored.
 */
export async function logoutSession(
  deps: SessionDeps,
  appId: string,
  presented: string | null,
  sessionId: string | null,
): Promise<void> {
  if (!presented && !sessionId) return
  const now = deps.clock.now()
  const byToken = presented
    ? sql<string>`(SELECT session_id FROM refresh_tokens WHERE hash = ${hashToken(presented)})`
    : sql<string>`NULL`
  const family = sql<string>`(
    SELECT named.family_id FROM sessions named
    WHERE named.id = COALESCE(${byToken}, ${sessionId}) AND named.app_id = ${appId})`
  await revokeFamily(deps.db, family, now, 'logout')
}

/** Whether a session is open: neither it nor its family revoked, not past its lifetime. */
export async function isSessionLive(
  deps: SessionDeps,
  appId: string,
  sessionId: string,
): Promise<boolean> {
  const row = await deps.db
    .selectFrom('sessions as s')
    .innerJoin('sessions as f', 'f.id', 's.family_id')
    .select('s.id')
    .where('s.id', '=', sessionId)
    .where('s.app_id', '=', appId)
    .where('s.revoked_at', 'is', null)
    .where('f.revoked_at', 'is', null)
    .where('s.expires_at', '>', deps.clock.now())
    .executeTakeFirst()
  return !!row
}

/**
 * How a fork token is stored: its MAC under the server secret, not a plain hash, so a database
 * writer without the secret cannot plant a row for a token of its own choosing. While a
 * rotation is under way a token made under the previous secret (two minutes' life) still opens.
 */
export function forkTokenKey(deps: Pick<Deps, 'secrets'>, token: string): string {
  return deps.secrets.mac('fork-token', token)
}

/** The stored forms a presented fork token may have: under the secret, and the previous one. */
function forkTokenKeys(deps: Pick<Deps, 'secrets'>, token: string): string[] {
  const keys = [forkTokenKey(deps, token)]
  if (deps.secrets.previous) keys.push(deps.secrets.previous.mac('fork-token', token))
  return keys
}

/** A single-use token, alive `ttlMs` (2 minutes by default), that opens a child session of this one. */
export async function createForkToken(
  deps: SessionDeps,
  appId: string,
  sessionId: string,
  ttlMs = FORK_TOKEN_TTL_MS,
): Promise<string> {
  const now = deps.clock.now()
  const token = randomToken()
  await deps.db
    .insertInto('fork_tokens')
    .values({
      hash: forkTokenKey(deps, token),
      app_id: appId,
      session_id: sessionId,
      created_at: now,
      expires_at: new Date(now.getTime() + ttlMs),
    })
    .execute()
  return token
}

/** Redeems a fork token (once) into a child session of the same user, in its family. */
export async function redeemForkToken(
  deps: SessionDeps,
  appId: string,
  presented: string,
): Promise<StartedSession> {
  const now = deps.clock.now()
  const keys = forkTokenKeys(deps, presented)
  // Spends the token and reads its session with the family's state in one statement.
  const parent = await deps.db
    .with('used', (db) =>
      db
        .updateTable('fork_tokens')
        .set({ used_at: now })
        .where('hash', 'in', keys)
        .where('app_id', '=', appId)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returning(['session_id', 'hash']),
    )
    .selectFrom('used')
    .innerJoin('sessions as s', 's.id', 'used.session_id')
    .innerJoin('sessions as f', 'f.id', 's.family_id')
    .select([
      'used.hash',
      's.id',
      's.user_id',
      's.family_id',
      's.expires_at',
      's.revoked_at',
      'f.revoked_at as family_revoked_at',
    ])
    .executeTakeFirst()
  if (!parent) throw await whyForkTokenRefused(deps, appId, keys, now)
  if (parent.revoked_at || parent.family_revoked_at || parent.expires_at <= now) {
    throw LatchError.of('invalid_refresh_token')
  }
  const child = await createSession(deps, appId, parent.user_id, {
    parentId: parent.id,
    familyId: parent.family_id,
    expiresAt: parent.expires_at,
  }).catch((e: unknown) => {
    // The user API deleted the user meanwhile: their sessions went with them.
    if ((e as { code?: unknown }).code === '23503') throw LatchError.of('invalid_refresh_token')
    throw e
  })
  // Which session the token opened: it reaches the wallet only once paired from inside the
  // wallet origin, recorded on this row (wallets/fork-pair.ts). Should this write fail, the
  // child is a fork without its row, which pairing and recovery refuse too.
  await deps.db
    .updateTable('fork_tokens')
    .set({ redeemed_session_id: child.sessionId })
    .where('hash', '=', parent.hash)
    .execute()
  return child
}

/**
 * Why a fork token was not spent: already used or expired say so (the page that opened it
 * tells the user to fork again); unknown or another app's is an invalid token. A second use
 * is only refused, not treated as theft: opening the same deep link twice is an ordinary
 * mistake, and the token opened at most one session.
 */
async function whyForkTokenRefused(
  deps: SessionDeps,
  appId: string,
  keys: string[],
  now: Date,
): Promise<LatchError> {
  const row = await deps.db
    .selectFrom('fork_tokens')
    .select(['used_at', 'expires_at'])
    .where('hash', 'in', keys)
    .where('app_id', '=', appId)
    .executeTakeFirst()
  if (row?.used_at) return LatchError.of('fork_token_used')
  if (row && row.expires_at <= now) return LatchError.of('fork_token_expired')
  return LatchError.of('invalid_refresh_token')
}
