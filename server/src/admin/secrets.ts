/**
 * App secrets: the credential an app's backend calls the user API with.
 *
 * A secret is `lsk_<id>_<43 base64url characters>`: 256 random bits after a public id that
 * names its row. Only the SHA-256 of the whole secret is stored. A keyed hash (HMAC under the
 * server secret) would add nothing here: 256 random bits cannot be guessed from their hash, so
 * a copy of the database yields no usable secret either way, and an unkeyed hash keeps every
 * secret valid when the operator changes LATCH_SECRET. Several secrets may be live at once so
 * a backend can rotate without downtime; a revoked one stays listed, unusable.
 */
import { createHash, randomBytes } from 'node:crypto'
import { LatchError } from '@latch/shared'
import type { Deps } from '../context.ts'
import { randomId, sameDigest } from '../crypto.ts'

export const APP_SECRET_PREFIX = 'lsk_'
const ID_LENGTH = 16
const SECRET_SHAPE = /^lsk_([a-z0-9]{16})_([A-Za-z0-9_-]{43})$/

/** Refreshing last_used_at on every call would write a row per request: once a minute is enough. */
const LAST_USED_RESOLUTION_MS = 60_000

export interface AppSecretInfo {
  id: string
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

function digest(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex')
}

function info(row: {
  id: string
  created_at: Date
  last_used_at: Date | null
  revoked_at: Date | null
}): AppSecretInfo {
  return {
    id: row.id,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  }
}

/** A new secret for the app: the value is answered here once and never again. */
export async function createAppSecret(
  deps: Pick<Deps, 'db' | 'clock'>,
  appId: string,
): Promise<{ secret: string } & AppSecretInfo> {
  const id = randomId(ID_LENGTH)
  const secret = `${APP_SECRET_PREFIX}${id}_${randomBytes(32).toString('base64url')}`
  const now = deps.clock.now()
  await deps.db
    .insertInto('app_secrets')
    .values({ id, app_id: appId, hash: digest(secret), created_at: now })
    .execute()
  return { secret, ...info({ id, created_at: now, last_used_at: null, revoked_at: null }) }
}

export async function listAppSecrets(
  deps: Pick<Deps, 'db'>,
  appId: string,
): Promise<AppSecretInfo[]> {
  const rows = await deps.db
    .selectFrom('app_secrets')
    .select(['id', 'created_at', 'last_used_at', 'revoked_at'])
    .where('app_id', '=', appId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map(info)
}

/** Revokes one secret of the app; false when the app has no such secret. Revoking twice is fine. */
export async function revokeAppSecret(
  deps: Pick<Deps, 'db' | 'clock'>,
  appId: string,
  secretId: string,
): Promise<boolean> {
  const row = await deps.db
    .updateTable('app_secrets')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(deps.clock.now())) }))
    .where('app_id', '=', appId)
    .where('id', '=', secretId)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** The public id a presented value claims, when it has a secret's shape (the audit of refusals). */
export function claimedSecretId(presented: string): string | null {
  return SECRET_SHAPE.exec(presented)?.[1] ?? null
}

/**
 * The id of the live secret of this app the presented value is, else invalid_app_secret (a
 * malformed value, another app's secret, a revoked or unknown one all answer the same).
 */
export async function verifyAppSecret(
  deps: Pick<Deps, 'db' | 'clock'>,
  appId: string,
  presented: string,
): Promise<string> {
  const id = SECRET_SHAPE.exec(presented)?.[1]
  if (!id) throw LatchError.of('invalid_app_secret')
  const row = await deps.db
    .selectFrom('app_secrets')
    .select(['hash', 'last_used_at'])
    .where('id', '=', id)
    .where('app_id', '=', appId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  // The id is public (it is in every log line that shows a prefix): the hash decides, compared
  // in constant time, and a missing row is compared too so both paths cost the same.
  const same = sameDigest(digest(presented), row?.hash ?? '0'.repeat(64))
  if (!row || !same) throw LatchError.of('invalid_app_secret')
  const now = deps.clock.now()
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
    await deps.db
      .updateTable('app_secrets')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .execute()
  }
  return id
}
