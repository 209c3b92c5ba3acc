/**
 * Sessions and their tokens. A refresh token is 256 random bits stored as a hash, rotated on
 * every use inside a transaction. Presenting the immediate parent of the live token within
 * 10 s answers the live pair (tabs refreshing together); any other reuse revokes the session.
 */
import { type AuthResponse, LatchError, REFRESH_TOKEN_MAX_AGE_S } from '@latch/shared'
import { authenticateWithAccount, type NewAccount } from '../accounts.ts'
import type { Deps } from '../context.ts'
import { hashToken, randomId, randomToken } from '../crypto.ts'
import type { Db } from '../db/index.ts'

export const REFRESH_GRACE_MS = 10_000
export const FORK_TOKEN_TTL_MS = 60_000
export const SESSION_LIFETIME_MS = REFRESH_TOKEN_MAX_AGE_S * 1000

type SessionDeps = Pick<Deps, 'db' | 'clock' | 'secrets' | 'keys'>

export interface IssuedSession {
  sessionId: string
  userId: string
  token: string
  refreshToken: string
}

async function insertRefreshToken(db: Db, sessionId: string, now: Date): Promise<string> {
  const token = randomToken()
  await db
    .insertInto('refresh_tokens')
    .values({ hash: hashToken(token), session_id: sessionId, created_at: now })
    .execute()
  return token
}

/** Opens a session for the user (a child of `parentId` when forked). */
export async function createSession(
  deps: SessionDeps,
  appId: string,
  userId: string,
  parentId: string | null = null,
): Promise<IssuedSession> {
  const now = deps.clock.now()
  const sessionId = randomId(24)
  const refreshToken = await deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('sessions')
      .values({
        id: sessionId,
        app_id: appId,
        user_id: userId,
        parent_id: parentId,
        created_at: now,
        expires_at: new Date(now.getTime() + SESSION_LIFETIME_MS),
      })
      .execute()
    return insertRefreshToken(trx, sessionId, now)
  })
  const token = await deps.keys.signAccessToken(appId, userId, sessionId)
  return { sessionId, userId, token, refreshToken }
}

/**
 * Signs in with a verified account (the user who holds it, or a new one) and opens a
 * session: the answer of every authenticate route.
 */
export async function signIn(
  deps: SessionDeps,
  appId: string,
  account: NewAccount,
): Promise<AuthResponse> {
  const { user, isNewUser } = await authenticateWithAccount(
    deps.db,
    appId,
    account,
    deps.clock.now(),
  )
  const session = await createSession(deps, appId, user.id)
  return {
    user,
    token: session.token,
    refresh_token: session.refreshToken,
    is_new_user: isNewUser,
  }
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
  const outcome = await deps.db.transaction().execute(async (trx): Promise<RefreshOutcome> => {
    const row = await trx
      .selectFrom('refresh_tokens as t')
      .innerJoin('sessions as s', 's.id', 't.session_id')
      .select([
        't.hash',
        't.rotated_at',
        't.child_hash',
        't.child_sealed',
        's.id as session_id',
        's.app_id',
        's.user_id',
        's.expires_at',
        's.revoked_at',
      ])
      .where('t.hash', '=', hashToken(presented))
      .forUpdate()
      .executeTakeFirst()
    if (!row || row.app_id !== appId || row.revoked_at || row.expires_at <= now) {
      throw LatchError.of('invalid_refresh_token')
    }
    if (!row.rotated_at) {
      const refreshToken = await insertRefreshToken(trx, row.session_id, now)
      await trx
        .updateTable('refresh_tokens')
        .set({
          rotated_at: now,
          child_hash: hashToken(refreshToken),
          child_sealed: deps.secrets.encrypt(refreshToken),
        })
        .where('hash', '=', row.hash)
        .execute()
      // The grandparent's copy of this token can no longer be answered: forget it.
      await trx
        .updateTable('refresh_tokens')
        .set({ child_sealed: null })
        .where('child_hash', '=', row.hash)
        .execute()
      return { kind: 'ok', sessionId: row.session_id, userId: row.user_id, refreshToken }
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
    await trx
      .updateTable('sessions')
      .set({ revoked_at: now, revoked_reason: 'refresh_token_reuse' })
      .where('id', '=', row.session_id)
      .execute()
    return { kind: 'reuse' }
  })
  if (outcome.kind === 'reuse') throw LatchError.of('invalid_refresh_token')
  const token = await deps.keys.signAccessToken(appId, outcome.userId, outcome.sessionId)
  return { ...outcome, token }
}

/** Revokes the session a refresh token belongs to; unknown tokens are ignored. */
export async function logoutSession(
  deps: SessionDeps,
  appId: string,
  presented: string | null,
  sessionId: string | null,
): Promise<void> {
  const now = deps.clock.now()
  let id = sessionId
  if (presented) {
    const row = await deps.db
      .selectFrom('refresh_tokens')
      .select('session_id')
      .where('hash', '=', hashToken(presented))
      .executeTakeFirst()
    if (row) id = row.session_id
  }
  if (!id) return
  await deps.db
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: 'logout' })
    .where('id', '=', id)
    .where('app_id', '=', appId)
    .where('revoked_at', 'is', null)
    .execute()
}

/** Whether a session is open (not revoked, not past its absolute lifetime). */
export async function isSessionLive(
  deps: SessionDeps,
  appId: string,
  sessionId: string,
): Promise<boolean> {
  const row = await deps.db
    .selectFrom('sessions')
    .select(['revoked_at', 'expires_at'])
    .where('id', '=', sessionId)
    .where('app_id', '=', appId)
    .executeTakeFirst()
  return !!row && !row.revoked_at && row.expires_at > deps.clock.now()
}

/** A single-use token, alive 60 s, that opens a child session of this one. */
export async function createForkToken(
  deps: SessionDeps,
  appId: string,
  sessionId: string,
): Promise<string> {
  const now = deps.clock.now()
  const token = randomToken()
  await deps.db
    .insertInto('fork_tokens')
    .values({
      hash: hashToken(token),
      app_id: appId,
      session_id: sessionId,
      created_at: now,
      expires_at: new Date(now.getTime() + FORK_TOKEN_TTL_MS),
    })
    .execute()
  return token
}

/** Redeems a fork token (once) into a child session of the same user. */
export async function redeemForkToken(
  deps: SessionDeps,
  appId: string,
  presented: string,
): Promise<IssuedSession> {
  const now = deps.clock.now()
  const used = await deps.db
    .updateTable('fork_tokens')
    .set({ used_at: now })
    .where('hash', '=', hashToken(presented))
    .where('app_id', '=', appId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('session_id')
    .executeTakeFirst()
  if (!used) throw LatchError.of('invalid_refresh_token')
  const parent = await deps.db
    .selectFrom('sessions')
    .select(['user_id', 'revoked_at', 'expires_at'])
    .where('id', '=', used.session_id)
    .executeTakeFirst()
  if (!parent || parent.revoked_at || parent.expires_at <= now) {
    throw LatchError.of('invalid_refresh_token')
  }
  return createSession(deps, appId, parent.user_id, used.session_id)
}
