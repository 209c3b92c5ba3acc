/**
 * Seals the rows that grant access under the server secret, for the migration that gave them
 * MACs (0018): every existing row gets its MAC, refresh tokens are keyed by the secret, and
 * each wallet whose attempt state already has a MAC gets its attempt counter. Wallets from before
 * that MAC (0009) get theirs when they are sealed again at start (wallets/reseal.ts).
 */
import { type Kysely, sql } from 'kysely'
import type { Secrets } from '../crypto.ts'
import { refreshTokenKeys, rowMac } from '../row-mac.ts'

type Row = Record<string, unknown>

/** Rows written per statement. */
const BATCH = 500

async function rows(db: Kysely<unknown>, query: ReturnType<typeof sql>): Promise<Row[]> {
  return (await query.execute(db)).rows as Row[]
}

/**
 * `UPDATE table SET column = v.column, … FROM (VALUES …) WHERE table.key = v.key`, in batches:
 * one statement per BATCH rows rather than one per row.
 */
async function updateAll(
  db: Kysely<unknown>,
  table: string,
  key: string,
  columns: string[],
  values: (string | null)[][],
): Promise<void> {
  for (let i = 0; i < values.length; i += BATCH) {
    const chunk = values.slice(i, i + BATCH)
    const tuples = chunk.map((v) => sql`(${sql.join(v.map((x) => sql`${x}::text`))})`)
    const names = ['k', ...columns.map((_, n) => `v${n}`)]
    const set = columns.map((c, n) => sql`${sql.ref(c)} = v.${sql.ref(`v${n}`)}`)
    await sql`UPDATE ${sql.table(table)} SET ${sql.join(set)}
      FROM (VALUES ${sql.join(tuples)}) AS v(${sql.join(names.map((n) => sql.ref(n)))})
      WHERE ${sql.table(table)}.${sql.ref(key)} = v.k`.execute(db)
  }
}

const str = (v: unknown) => String(v)
const time = (v: unknown) => (v instanceof Date ? v : new Date(String(v)))

export async function sealRowMacs(db: Kysely<unknown>, secrets: Secrets | null): Promise<void> {
  const need = (count: number): Secrets => {
    if (!secrets) {
      throw new Error(
        `${count} row(s) need a MAC under the server secret: run the migration with the secret (npm run latch -- migrate)`,
      )
    }
    return secrets
  }

  const accounts = await rows(
    db,
    sql`SELECT id, app_id, user_id, type, identifier FROM linked_accounts`,
  )
  const sessions = await rows(
    db,
    sql`SELECT id, app_id, user_id, family_id, parent_id, created_at, expires_at FROM sessions`,
  )
  const tokens = await rows(db, sql`SELECT hash, child_hash, session_id FROM refresh_tokens`)
  const passkeys = await rows(
    db,
    sql`SELECT app_id, credential_id, account_id, user_id, public_key, user_handle FROM passkeys`,
  )
  const apps = await rows(db, sql`SELECT id, allowed_origins FROM apps`)
  const endpoints = await rows(db, sql`SELECT id, app_id, url FROM webhook_endpoints`)
  const signingKeys = await rows(db, sql`SELECT kid, app_id, public_pem FROM signing_keys`)
  const wallets = await rows(db, sql`SELECT id, state_mac FROM wallets WHERE state_mac IS NOT NULL`)
  const total =
    accounts.length +
    sessions.length +
    tokens.length +
    passkeys.length +
    apps.length +
    endpoints.length +
    signingKeys.length +
    wallets.length
  if (total === 0) return
  const s = need(total)

  await updateAll(
    db,
    'linked_accounts',
    'id',
    ['mac'],
    accounts.map((r) => [
      str(r.id),
      rowMac(s, 'linked_account', {
        id: str(r.id),
        app_id: str(r.app_id),
        user_id: str(r.user_id),
        type: str(r.type),
        identifier: str(r.identifier),
      }),
    ]),
  )
  await updateAll(
    db,
    'sessions',
    'id',
    ['mac'],
    sessions.map((r) => [
      str(r.id),
      rowMac(s, 'session', {
        id: str(r.id),
        app_id: str(r.app_id),
        user_id: str(r.user_id),
        family_id: str(r.family_id),
        parent_id: r.parent_id === null ? null : str(r.parent_id),
        created_at: time(r.created_at),
        expires_at: time(r.expires_at),
      }),
    ]),
  )
  // A refresh token was stored as its SHA-256: it is keyed by the secret from here on, and so
  // is the child each rotated one names.
  const keyOf = (sha256: string) => refreshTokenKeys(s, sha256)[0] as string
  await updateAll(
    db,
    'refresh_tokens',
    'hash',
    ['hash', 'token_sha256', 'child_hash', 'mac'],
    tokens.map((r) => {
      const hash = keyOf(str(r.hash))
      return [
        str(r.hash),
        hash,
        str(r.hash),
        r.child_hash === null ? null : keyOf(str(r.child_hash)),
        rowMac(s, 'refresh_token', { hash, session_id: str(r.session_id) }),
      ]
    }),
  )
  for (const r of passkeys) {
    const row = {
      app_id: str(r.app_id),
      credential_id: str(r.credential_id),
      account_id: str(r.account_id),
      user_id: str(r.user_id),
      public_key: str(r.public_key),
      user_handle: str(r.user_handle),
    }
    await sql`UPDATE passkeys SET mac = ${rowMac(s, 'passkey', row)}
      WHERE app_id = ${row.app_id} AND credential_id = ${row.credential_id}`.execute(db)
  }
  await updateAll(
    db,
    'apps',
    'id',
    ['origins_mac'],
    apps.map((r) => {
      const origins = (
        typeof r.allowed_origins === 'string' ? JSON.parse(r.allowed_origins) : r.allowed_origins
      ) as string[]
      return [str(r.id), rowMac(s, 'app_origins', { id: str(r.id), allowed_origins: origins })]
    }),
  )
  await updateAll(
    db,
    'webhook_endpoints',
    'id',
    ['mac'],
    endpoints.map((r) => [
      str(r.id),
      rowMac(s, 'webhook_endpoint', { id: str(r.id), app_id: str(r.app_id), url: str(r.url) }),
    ]),
  )
  await updateAll(
    db,
    'signing_keys',
    'kid',
    ['mac'],
    signingKeys.map((r) => [
      str(r.kid),
      rowMac(s, 'signing_key', {
        kid: str(r.kid),
        app_id: str(r.app_id),
        public_pem: str(r.public_pem),
      }),
    ]),
  )
  for (const r of wallets) {
    const row = { wallet_id: str(r.id), counter: 0, state_mac: str(r.state_mac) }
    await sql`INSERT INTO wallet_attempts (wallet_id, counter, mac)
      VALUES (${row.wallet_id}, 0, ${rowMac(s, 'wallet_attempts', row)})`.execute(db)
  }
}
