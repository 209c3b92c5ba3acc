/**
 * Pending OAuth flows, one row per state: single use, 10 minutes, stored by the SHA-256 of
 * the state so a copy of the table cannot complete anyone's flow, and with a MAC under the
 * server secret over every column (row-mac.ts, `oauth_state`), so a database writer without the
 * secret cannot send a flow's code to a page of its choosing nor let another browser finish it:
 * a row whose MAC does not hold is no flow. The `oauth_states` table comes from the server's
 * one migration set (db/migrations.ts), run at start.
 */
import { createHash } from 'node:crypto'
import type { OAuthProvider } from '@latch/shared'
import type { Selectable } from 'kysely'
import type { Secrets } from '../crypto.ts'
import type { Db, OAuthStatesTable } from '../db/schema.ts'
import { rowMac, rowMacHolds } from '../row-mac.ts'

/** How long a started flow may take to come back. */
export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000

export interface OAuthStateRecord {
  appId: string
  provider: OAuthProvider
  /** The host page the browser returns to (an allowed origin of the app). */
  redirectTo: string
  /** The callback URL given to the provider; the token request repeats it. */
  redirectUri: string
  codeVerifier: string | null
  nonce: string | null
  /** The signed-in user who started the flow; set for a link. */
  userId: string | null
  isLink: boolean
  /** Base64url SHA-256 of the starting browser's secret (null: a flow from before binding). */
  browserHash: string | null
  expiresAt: Date
}

export interface OAuthStateStore {
  put(state: string, record: OAuthStateRecord): Promise<void>
  /** The record, without using it up (the callback needs the return address). */
  peek(state: string): Promise<OAuthStateRecord | undefined>
  /** Removes and answers the record; a second take of the same state answers undefined. */
  take(state: string): Promise<OAuthStateRecord | undefined>
}

function hashState(state: string): string {
  return createHash('sha256').update(state).digest('hex')
}

function toRecord(row: Selectable<OAuthStatesTable>): OAuthStateRecord {
  return {
    appId: row.app_id,
    provider: row.provider as OAuthProvider,
    redirectTo: row.redirect_to,
    redirectUri: row.redirect_uri,
    codeVerifier: row.code_verifier,
    nonce: row.nonce,
    userId: row.user_id,
    isLink: row.is_link,
    browserHash: row.browser_hash,
    expiresAt: new Date(row.expires_at),
  }
}

/** What the store needs of the server: its database, its secret, and its log for refusals. */
export interface StateStoreDeps {
  db: Db
  secrets: Secrets
  log: (line: string) => void
}

/** The store over the database (PGlite or PostgreSQL). */
export function kyselyStateStore(
  deps: StateStoreDeps,
  now: () => Date = () => new Date(),
): OAuthStateStore {
  const { db } = deps
  const live = (row: Selectable<OAuthStatesTable> | undefined) => {
    if (!row || new Date(row.expires_at).getTime() <= now().getTime()) return undefined
    const fields = { ...row, expires_at: new Date(row.expires_at) }
    const flow = `of app ${row.app_id}`
    return rowMacHolds(deps, 'oauth_state', fields, row.mac, flow) ? toRecord(row) : undefined
  }
  return {
    async put(state, record) {
      const at = now()
      // Abandoned flows are swept as new ones start.
      await db.deleteFrom('oauth_states').where('expires_at', '<', at).execute()
      const row = {
        state_hash: hashState(state),
        app_id: record.appId,
        provider: record.provider,
        redirect_to: record.redirectTo,
        redirect_uri: record.redirectUri,
        code_verifier: record.codeVerifier,
        nonce: record.nonce,
        user_id: record.userId,
        is_link: record.isLink,
        browser_hash: record.browserHash,
        expires_at: record.expiresAt,
      }
      await db
        .insertInto('oauth_states')
        .values({ ...row, created_at: at, mac: rowMac(deps.secrets, 'oauth_state', row) })
        .execute()
    },
    async peek(state) {
      const row = await db
        .selectFrom('oauth_states')
        .selectAll()
        .where('state_hash', '=', hashState(state))
        .executeTakeFirst()
      return live(row)
    },
    async take(state) {
      // DELETE ... RETURNING: of two concurrent takes, exactly one gets the row.
      const row = await db
        .deleteFrom('oauth_states')
        .where('state_hash', '=', hashState(state))
        .returningAll()
        .executeTakeFirst()
      return live(row)
    },
  }
}
