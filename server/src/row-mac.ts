/**
 * MACs of the rows whose presence or content grants access, under the server secret: a row
 * written, moved or copied by someone who can write to the database but lacks the secret grants
 * nothing, because its MAC no longer matches what it grants and to whom.
 *
 * One MAC per row kind, each with its own key (`Secrets.mac` derives a key per purpose), over
 * the fields listed in FIELDS, encoded as a JSON array so no two field lists encode alike. Checks
 * try the current secret first and the previous one while a rotation is under way (`macMade`);
 * `latch secret rotate` writes every row's MAC again under the new secret.
 */
import type { Secrets } from './crypto.ts'
import { macMade } from './crypto.ts'

type Field = string | number | null
type Time = Date | null

const ms = (d: Time): number | null => (d ? d.getTime() : null)

/** What each kind of row grants, and to whom: the fields its MAC covers. */
const FIELDS = {
  /** An identity (e-mail, number, OAuth subject, address, passkey) that signs in as the user. */
  linked_account: (r: {
    id: string
    app_id: string
    user_id: string
    type: string
    identifier: string
  }): Field[] => [r.id, r.app_id, r.user_id, r.type, r.identifier],
  /**
   * A session of the user, its lineage, when it signed in (a wallet's re-sign-in after many
   * wrong passcodes asks for a later one) and how long it lives.
   */
  session: (r: {
    id: string
    app_id: string
    user_id: string
    family_id: string
    parent_id: string | null
    created_at: Date
    expires_at: Date
  }): Field[] => [
    r.id,
    r.app_id,
    r.user_id,
    r.family_id,
    r.parent_id,
    ms(r.created_at),
    ms(r.expires_at),
  ],
  /** A refresh token (by its keyed hash) and the session it renews. */
  refresh_token: (r: { hash: string; session_id: string }): Field[] => [r.hash, r.session_id],
  /** A fork token (by its keyed hash): the session it opens a child of, until when. */
  fork_token: (r: {
    hash: string
    app_id: string
    session_id: string
    expires_at: Date
  }): Field[] => [r.hash, r.app_id, r.session_id, ms(r.expires_at)],
  /**
   * A pending OAuth flow (by its state's hash): where the provider's code is sent, which
   * browser and user may finish it, and what finishing it checks.
   */
  oauth_state: (r: {
    state_hash: string
    app_id: string
    provider: string
    redirect_to: string
    redirect_uri: string
    code_verifier: string | null
    nonce: string | null
    user_id: string | null
    is_link: boolean
    browser_hash: string | null
    expires_at: Date
  }): Field[] => [
    r.state_hash,
    r.app_id,
    r.provider,
    r.redirect_to,
    r.redirect_uri,
    r.code_verifier,
    r.nonce,
    r.user_id,
    r.is_link ? 1 : 0,
    r.browser_hash,
    ms(r.expires_at),
  ],
  /** A passkey: the public key that signs in as the user through the credential's account. */
  passkey: (r: {
    app_id: string
    credential_id: string
    account_id: string
    user_id: string
    public_key: string
    user_handle: string
  }): Field[] => [r.app_id, r.credential_id, r.account_id, r.user_id, r.public_key, r.user_handle],
  /**
   * An app's token signing key: the public key that verifies its access tokens (and is
   * published in its key set). The published JWK is derived from this PEM, never read apart.
   */
  signing_key: (r: { kid: string; app_id: string; public_pem: string }): Field[] => [
    r.kid,
    r.app_id,
    r.public_pem,
  ],
  /** The pages an app's modal and API answer. */
  app_origins: (r: { id: string; allowed_origins: string[] }): Field[] => [
    r.id,
    JSON.stringify(r.allowed_origins),
  ],
  /** Where an app's webhook events (users' addresses and numbers) are sent. */
  webhook_endpoint: (r: { id: string; app_id: string; url: string }): Field[] => [
    r.id,
    r.app_id,
    r.url,
  ],
  /**
   * A wallet's attempt counter: only moves forward, and names the MAC of the attempt state it
   * was last advanced with, so an older state restored in the wallet row is refused.
   */
  wallet_attempts: (r: { wallet_id: string; counter: number; state_mac: string }): Field[] => [
    r.wallet_id,
    r.counter,
    r.state_mac,
  ],
  /** An app's sponsor on a chain: which account pays, and the policy of what it pays for. */
  sponsor: (r: {
    id: string
    app_id: string
    chain_id: number
    address: string
    policy: string
  }): Field[] => [r.id, r.app_id, r.chain_id, r.address, r.policy],
} as const

export type RowKind = keyof typeof FIELDS
export type RowOf<K extends RowKind> = Parameters<(typeof FIELDS)[K]>[0]

const purpose = (kind: RowKind) => `row:${kind}`

function encode<K extends RowKind>(kind: K, row: RowOf<K>): string {
  const fields = (FIELDS[kind] as (r: RowOf<K>) => Field[])(row)
  return JSON.stringify(fields)
}

/** The MAC of a row of `kind` under the current secret. */
export function rowMac<K extends RowKind>(secrets: Secrets, kind: K, row: RowOf<K>): string {
  return secrets.mac(purpose(kind), encode(kind, row))
}

/**
 * Which secret made the row's MAC: 'current', 'previous' (a rotation under way) or null (none:
 * the row was written without the secret, or moved, or copied).
 */
export function rowMacMade<K extends RowKind>(
  secrets: Secrets,
  kind: K,
  row: RowOf<K>,
  mac: string | null | undefined,
): 'current' | 'previous' | null {
  if (!mac) return null
  return macMade(secrets, purpose(kind), encode(kind, row), mac)
}

/**
 * Whether the row's MAC holds; when it does not, the refusal is logged (what and which row, never
 * the MAC) so the operator sees that someone wrote to the database without the secret.
 */
export function rowMacHolds<K extends RowKind>(
  deps: { secrets: Secrets; log: (line: string) => void },
  kind: K,
  row: RowOf<K>,
  mac: string | null | undefined,
  name: string,
): boolean {
  if (rowMacMade(deps.secrets, kind, row, mac) !== null) return true
  deps.log(`[latch] refused ${kind.replace('_', ' ')} ${name}: its MAC does not match the row`)
  return false
}

/**
 * A refresh token as stored: keyed by the server secret (a SHA-256 of the token under a MAC
 * key), so a database writer cannot store a token of their own choosing. The keys of a token
 * under the current and the previous secret: lookups try both while a rotation is under way.
 */
export function refreshTokenKeys(secrets: Secrets, tokenSha256: string): string[] {
  const keys = [secrets.mac('refresh-token', tokenSha256)]
  if (secrets.previous) keys.push(secrets.previous.mac('refresh-token', tokenSha256))
  return keys
}
