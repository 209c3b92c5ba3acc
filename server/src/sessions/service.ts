/**
 * Sessions and their tokens. A refresh token is its session's id and 256 random bits, stored
 * keyed by the server secret (never a plain hash), rotated on every use. Every session and every
 * stored token carries a MAC under the server secret of what it grants and to whom (row-mac.ts):
 * a row written, moved or copied without the secret renews nothing. Presenting the immediate
 * parent of the live token within 10 s answers the live pair (tabs refreshing together); any
 * other reuse revokes the session's family.
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
import { type RowOf, refreshTokenKeys, rowMac, rowMacHolds } from '../row-mac.ts'
import { eventCte, type WebhookEvent } from '../webhooks/events.ts'

export const REFRESH_GRACE_MS = 10_000
/**
 * How long a retry of the same refresh (the same Latch-Refresh-Id) is answered the live pair:
 * long enough to cover a database failover or a process restart between the rotation and the
 * client's retry (see README.md).
 */
export const REFRESH_RETRY_WINDOW_MS = 5 * 60_000
/**
 * How long a fork token lives by default (LATCH_FORK_TOKEN_TTL may shorten it): the time to pick
 * a wallet app and let it open the page, and little more, since whoever holds it becomes the user.
 */
export const FORK_TOKEN_TTL_MS = DEFAULT_FORK_TOKEN_TTL_S * 1000
export const SESSION_LIFETIME_MS = REFRESH_TOKEN_MAX_AGE_S * 1000

type SessionDeps = Pick<Deps, 'db' | 'clock' | 'secrets' | 'keys' | 'log'>

/**
 * A new refresh token: the session it renews, then 256 random bits. The session's id is no
 * secret (the access token names it too); carrying it lets a refresh require the stored token's
 * session in the one statement that rotates it, and the new token's MAC be made beforehand.
 */
function newRefreshToken(sessionId: string): string {
  return `${sessionId}.${randomToken()}`
}

/** The session a presented refresh token names; null for a token from before it named one. */
function sessionOfToken(presented: string): string | null {
  const dot = presented.indexOf('.')
  return dot > 0 ? presented.slice(0, dot) : null
}

/** A refresh token as stored (keyed under the current secret) and its row's MAC. */
function storedToken(deps: SessionDeps, token: string, sessionId: string) {
  const sha256 = hashToken(token)
  const hash = refreshTokenKeys(deps.secrets, sha256)[0] as string
  return {
    hash,
    token_sha256: sha256,
    mac: rowMac(deps.secrets, 'refresh_token', { hash, session_id: sessionId }),
  }
}

/** Whether a session row's MAC holds (a refusal is logged). */
export function sessionHolds(
  deps: Pick<Deps, 'secrets' | 'log'>,
  row: RowOf<'session'>,
  mac: string | null,
): boolean {
  return rowMacHolds(deps, 'session', row, mac, row.id)
}

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
  const refreshToken = newRefreshToken(sessionId)
  const expiresAt = family?.expiresAt ?? new Date(now.getTime() + SESSION_LIFETIME_MS)
  const session = {
    id: sessionId,
    app_id: appId,
    user_id: userId,
    parent_id: family?.parentId ?? null,
    family_id: family?.familyId ?? sessionId,
    created_at: now,
    expires_at: expiresAt,
  }
  // One statement: the session and its first token (and its event) arrive together or not at all.
  const withSession = deps.db.with('session', (db) =>
    db.insertInto('sessions').values({ ...session, mac: rowMac(deps.secrets, 'session', session) }),
  )
  // The event's CTE adds no table the insert below reads: the same builder type serves.
  const statement = event
    ? (withSession.with('webhook_event', () => eventCte(event)) as unknown as typeof withSession)
    : withSession
  await statement
    .insertInto('refresh_tokens')
    .values({
      ...storedToken(deps, refreshToken, sessionId),
      session_id: sessionId,
      created_at: now,
    })
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
  const { user, isNewUser } = await authenticateWithAccount(deps, appId, account, deps.clock.now())
  const now = deps.clock.now()
  const session = await createSession(deps, appId, user.id, null, {
    appId,
    type: 'user.authenticated',
    data: { user, method: account.type, isNewUser },
    now,
  })
  return {
    // The refresh token goes in the refresh cookie (answerSignIn), never in the body.
    response: { user, token: session.token, is_new_user: isNewUser },
    session,
  }
}

/** The session columns a refresh reads to check the session's MAC. */
interface SessionRow {
  session_id: string
  user_id: string
  family_id: string
  parent_id: string | null
  created_at: Date
  expires_at: Date
  session_mac: string
}

const sessionRow = (appId: string, r: SessionRow): RowOf<'session'> => ({
  id: r.session_id,
  app_id: appId,
  user_id: r.user_id,
  family_id: r.family_id,
  parent_id: r.parent_id,
  created_at: r.created_at,
  expires_at: r.expires_at,
})

/**
 * Rotates the token stored as one of `keys` (its key under the current or, during a rotation,
 * the previous secret), when it is the live token of `sessionId`, a live session of the app,
 * into a new token: one statement, so a refresh is one round trip. Answers nothing when the
 * token is unknown, of another session, already rotated, of another app, or its session (or
 * its family) is revoked or expired; the session's MAC is the caller's to check.
 */
async function rotate(
  db: Kysely<Database>,
  deps: SessionDeps,
  appId: string,
  keys: string[],
  sessionId: string,
  now: Date,
  retryHash: string | null,
): Promise<(SessionRow & { refreshToken: string }) | undefined> {
  const refreshToken = newRefreshToken(sessionId)
  const child = storedToken(deps, refreshToken, sessionId)
  const { rows } = await sql<SessionRow>`
    WITH rotated AS (
      UPDATE refresh_tokens t
      SET rotated_at = ${now}, child_hash = ${child.hash},
          child_sealed = ${deps.secrets.encrypt(refreshToken)}, rotated_by = ${retryHash}
      FROM sessions s, sessions f
      WHERE t.hash IN (${sql.join(keys)}) AND t.session_id = ${sessionId}
        AND t.rotated_at IS NULL
        AND s.id = t.session_id AND s.app_id = ${appId}
        AND s.revoked_at IS NULL AND s.expires_at > ${now}
        AND f.id = s.family_id AND f.revoked_at IS NULL
      RETURNING t.session_id, s.user_id, s.family_id, s.parent_id, s.created_at, s.expires_at,
        s.mac AS session_mac
    ), issued AS (
      INSERT INTO refresh_tokens (hash, token_sha256, session_id, created_at, mac)
      SELECT ${child.hash}, ${child.token_sha256}, session_id, CAST(${now} AS timestamptz),
        ${child.mac} FROM rotated
    ), forgotten AS (
      -- The grandparent's copy of the token just rotated can never be answered again.
      UPDATE refresh_tokens SET child_sealed = NULL
      WHERE child_hash IN (${sql.join(keys)}) AND EXISTS (SELECT 1 FROM rotated)
    )
    SELECT session_id, user_id, family_id, parent_id, created_at, expires_at, session_mac
    FROM rotated`.execute(db)
  const row = rows[0]
  return row && { ...row, refreshToken }
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

/**
 * Rotates a refresh token into a new pair; see the module comment for reuse. `refreshId`, the
 * request's Latch-Refresh-Id, is kept (hashed) with the rotation: presented again with the
 * same id, the rotated token is a retry of this request and gets the live pair for
 * REFRESH_RETRY_WINDOW_MS, not only the 10 s grace (README.md: a retry or a stolen token).
 */
export async function refreshSession(
  deps: SessionDeps,
  appId: string,
  presented: string,
  refreshId: string | null = null,
): Promise<IssuedSession> {
  const now = deps.clock.now()
  const retryHash = refreshId === null ? null : hashToken(refreshId)
  const keys = refreshTokenKeys(deps.secrets, hashToken(presented))
  const named = sessionOfToken(presented)
  // The common case, a live token: one statement, no transaction. A token from before tokens
  // named their session takes the locked path, which reads its session first.
  const fast = named ? await rotate(deps.db, deps, appId, keys, named, now, retryHash) : undefined
  if (fast && !sessionHolds(deps, sessionRow(appId, fast), fast.session_mac)) {
    // A session row written without the server secret: the token was the writer's own (only
    // the server can store one), so nothing of anyone else's changed.
    throw LatchError.of('invalid_refresh_token')
  }
  const outcome: RefreshOutcome = fast
    ? {
        kind: 'ok',
        sessionId: fast.session_id,
        userId: fast.user_id,
        refreshToken: fast.refreshToken,
      }
    : await deps.db.transaction().execute(async (trx): Promise<RefreshOutcome> => {
        // The row lock serializes parallel uses of one token: the later ones see it rotated.
        const row = await trx
          .selectFrom('refresh_tokens as t')
          .innerJoin('sessions as s', 's.id', 't.session_id')
          .innerJoin('sessions as f', 'f.id', 's.family_id')
          .select([
            't.hash',
            't.mac',
            't.rotated_at',
            't.child_hash',
            't.child_sealed',
            't.rotated_by',
            's.id as session_id',
            's.app_id',
            's.user_id',
            's.family_id',
            's.parent_id',
            's.created_at',
            's.expires_at',
            's.revoked_at',
            's.mac as session_mac',
            'f.revoked_at as family_revoked_at',
          ])
          .where('t.hash', 'in', keys)
          .forUpdate('t')
          .executeTakeFirst()
        if (
          !row ||
          row.app_id !== appId ||
          (named !== null && row.session_id !== named) ||
          row.revoked_at ||
          row.family_revoked_at ||
          row.expires_at <= now
        ) {
          throw LatchError.of('invalid_refresh_token')
        }
        // Both rows must be the server's: the token bound to this session, the session to its
        // user. A refusal here changes nothing (reuse does not revoke a family it never joined).
        const token = { hash: row.hash, session_id: row.session_id }
        if (
          !rowMacHolds(deps, 'refresh_token', token, row.mac, row.session_id) ||
          !sessionHolds(deps, sessionRow(appId, row), row.session_mac)
        ) {
          throw LatchError.of('invalid_refresh_token')
        }
        if (!row.rotated_at) {
          // Rotated by nobody after all (the fast statement lost a race that rolled back), or a
          // token from before tokens named their session.
          const rotated = await rotate(trx, deps, appId, keys, row.session_id, now, retryHash)
          if (!rotated) throw LatchError.of('invalid_refresh_token')
          return {
            kind: 'ok',
            sessionId: rotated.session_id,
            userId: rotated.user_id,
            refreshToken: rotated.refreshToken,
          }
        }
        const since = now.getTime() - row.rotated_at.getTime()
        // Another tab with the same token (the grace), or this very request again after its
        // answer was lost (the same id, which only the client that sent it knows).
        const sameRequest =
          retryHash !== null && row.rotated_by === retryHash && since <= REFRESH_RETRY_WINDOW_MS
        if ((since <= REFRESH_GRACE_MS || sameRequest) && row.child_hash && row.child_sealed) {
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
  const keys = presented ? refreshTokenKeys(deps.secrets, hashToken(presented)) : []
  const named = presented ? sessionOfToken(presented) : null
  const byToken = presented
    ? sql<string>`(SELECT session_id FROM refresh_tokens WHERE hash IN (${sql.join(keys)})
        ${named ? sql`AND session_id = ${named}` : sql``})`
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
    .select([
      's.id',
      's.user_id',
      's.family_id',
      's.parent_id',
      's.created_at',
      's.expires_at',
      's.mac',
    ])
    .where('s.id', '=', sessionId)
    .where('s.app_id', '=', appId)
    .where('s.revoked_at', 'is', null)
    .where('f.revoked_at', 'is', null)
    .where('s.expires_at', '>', deps.clock.now())
    .executeTakeFirst()
  return !!row && sessionHolds(deps, { ...row, app_id: appId }, row.mac)
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
  const row = {
    hash: forkTokenKey(deps, token),
    app_id: appId,
    session_id: sessionId,
    expires_at: new Date(now.getTime() + ttlMs),
  }
  await deps.db
    .insertInto('fork_tokens')
    .values({ ...row, created_at: now, mac: rowMac(deps.secrets, 'fork_token', row) })
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
        .returning(['session_id', 'hash', 'expires_at as token_expires_at', 'mac as token_mac']),
    )
    .selectFrom('used')
    .innerJoin('sessions as s', 's.id', 'used.session_id')
    .innerJoin('sessions as f', 'f.id', 's.family_id')
    .select([
      'used.hash',
      'used.token_expires_at',
      'used.token_mac',
      's.id',
      's.app_id',
      's.user_id',
      's.family_id',
      's.parent_id',
      's.created_at',
      's.expires_at',
      's.revoked_at',
      's.mac',
      'f.revoked_at as family_revoked_at',
    ])
    .executeTakeFirst()
  if (!parent) throw await whyForkTokenRefused(deps, appId, keys, now)
  if (parent.revoked_at || parent.family_revoked_at || parent.expires_at <= now) {
    throw LatchError.of('invalid_refresh_token')
  }
  // The child is the parent's user: both rows must be as the server wrote them. A database
  // writer without the secret could otherwise point its own token at another user's session,
  // or its own forked session at another user, and redeem a session as them.
  const token = {
    hash: parent.hash,
    app_id: appId,
    session_id: parent.id,
    expires_at: parent.token_expires_at,
  }
  if (
    parent.app_id !== appId ||
    !rowMacHolds(deps, 'fork_token', token, parent.token_mac, `for session ${parent.id}`) ||
    !sessionHolds(deps, parent, parent.mac)
  ) {
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
