/** Table types of the Latch database (Kysely). JSON columns are written as JSON text. */
import type { ColumnType, Generated, Kysely } from 'kysely'

type Json<T> = ColumnType<T, string, string>
type Time = ColumnType<Date, Date, Date>

export interface AppsTable {
  id: string
  name: string
  allowed_origins: Json<string[]>
  login_methods: Json<string[]>
  allowlist_enabled: boolean
  allowlist_entries: Json<string[]>
  allowlist_config: Json<Record<string, string | null>>
  appearance: Json<Record<string, unknown>>
  legal: Json<Record<string, string | null>>
  embedded_wallet_config: Json<Record<string, unknown>>
  wallet_connect_project_id: string | null
  custom_api_url: string | null
  /** Per-provider OAuth settings as JSON, sealed under the server secret. */
  oauth_sealed: string | null
  /** ISO 3166 alpha-2 codes of the countries SMS codes may go to. */
  sms_countries: ColumnType<string[], string | undefined, string>
  /** Per-chain RPC URL overrides `{ "<chainId>": url }` as JSON, sealed under the server secret. */
  rpc_urls_sealed: ColumnType<string | null, string | null | undefined, string | null>
  /** Chain ids the app's wallet may use as a JSON list; null: Latch's default (DEFAULT_CHAIN_IDS). */
  chains: ColumnType<number[] | null, string | null | undefined, string | null>
  /** MAC of the allowed origins under the server secret (row-mac.ts). */
  origins_mac: string
  created_at: Time
  updated_at: Time
}

export interface UsersTable {
  id: string
  app_id: string
  created_at: Time
}

export interface LinkedAccountsTable {
  id: string
  app_id: string
  user_id: string
  type: string
  /** Normalized identifier: lowercased e-mail or address, E.164 number, OAuth subject. */
  identifier: string
  data: Json<Record<string, unknown>>
  /** MAC of the user, app, type and identifier under the server secret (row-mac.ts). */
  mac: string
  created_at: Time
}

export interface SessionsTable {
  id: string
  app_id: string
  user_id: string
  parent_id: string | null
  /** The root session of the family (the sign-in this one descends from by forks; its own id). */
  family_id: string
  created_at: Time
  expires_at: Time
  revoked_at: Time | null
  revoked_reason: string | null
  /** MAC of the user, app, lineage and lifetime under the server secret (row-mac.ts). */
  mac: string
}

export interface RefreshTokensTable {
  /** The token keyed by the server secret (row-mac.ts refreshTokenKeys), never a plain hash. */
  hash: string
  /**
   * SHA-256 of the token: what `secret rotate` keys again under a new secret (only after it has
   * checked that the old key is its MAC). Alone it finds and opens nothing.
   */
  token_sha256: string
  session_id: string
  /** MAC of the key and the session under the server secret. */
  mac: string
  created_at: Time
  rotated_at: Time | null
  child_hash: string | null
  /** The child token sealed under the secret, for the concurrent-tab grace window. */
  child_sealed: string | null
  /** The hash of the Latch-Refresh-Id of the request that rotated it: its retries get the child. */
  rotated_by: string | null
}

export interface VerificationCodesTable {
  app_id: string
  channel: string
  identifier: string
  code_hmac: string
  created_at: Time
  expires_at: Time
  attempts: number
  consumed_at: Time | null
}

export interface RateLimitsTable {
  key: string
  window_start: Time
  count: number
  /** When the window ends (null on rows from before windows carried it: an hour). */
  expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

export interface SigningKeysTable {
  kid: string
  app_id: string
  /** 'current' signs; 'next' is published ahead of a rotation. */
  status: string
  public_jwk: Json<Record<string, unknown>>
  public_pem: string
  private_sealed: string
  /** MAC of the key's id, app and public key under the server secret (row-mac.ts). */
  mac: string
  created_at: Time
}

export interface AnalyticsEventsTable {
  id: Generated<number>
  app_id: string
  event_name: string
  client_id: string
  payload: Json<Record<string, unknown>>
  created_at: Time
}

export interface ForkTokensTable {
  hash: string
  app_id: string
  session_id: string
  created_at: Time
  expires_at: Time
  used_at: Time | null
  /** When the forking visitor confirmed handing over the wallet (the wallet frame's call). */
  wallet_confirmed_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  /** The session this token was redeemed into, once spent. */
  redeemed_session_id: ColumnType<string | null, string | null | undefined, string | null>
  /** The MAC of the pairing that handed the wallet to that session (wallets/fork-pair.ts). */
  paired_mac: ColumnType<string | null, string | null | undefined, string | null>
  /** The row's MAC (row-mac.ts, `fork_token`); null on tokens from before it, which never open. */
  mac: string | null
}

/** A pairing code shown by a session's wallet frame, stored as its MAC; single use. */
export interface WalletPairingsTable {
  id: string
  app_id: string
  session_id: string
  code_mac: string
  attempts: ColumnType<number, number | undefined, number>
  created_at: Time
  expires_at: Time
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

/** A visitor's approval, in the wallet frame, of a new sign-in method; single use. */
export interface LinkApprovalsTable {
  id: string
  app_id: string
  session_id: string
  kind: string
  identifier: string
  mac: string
  created_at: Time
  expires_at: Time
}

/** A pending OAuth flow, keyed by the SHA-256 of its state; single use, 10 minutes. */
export interface OAuthStatesTable {
  state_hash: string
  app_id: string
  provider: string
  redirect_to: string
  redirect_uri: string
  code_verifier: string | null
  nonce: string | null
  user_id: string | null
  is_link: boolean
  /**
   * Base64url SHA-256 of the secret the starting browser keeps; null only on flows started
   * before the binding existed, which can no longer be finished.
   */
  browser_hash: string | null
  expires_at: Time
  created_at: Time
  /** The row's MAC (row-mac.ts, `oauth_state`); null on flows from before it: they never finish. */
  mac: string | null
}

/** An in-app wallet (server/src/wallets): its auth share and recovery material, sealed. */
export interface WalletsTable {
  id: string
  app_id: string
  user_id: string
  /** Lowercase. */
  address: string
  chain_id: string
  recovery_method: string
  auth_share_sealed: string
  /** JSON sealed under the secret: the recovery share's ciphertext and what opens it. */
  recovery_sealed: string
  /** Passcode evaluations since the last success (each counts as a failure until verified). */
  failed_attempts: ColumnType<number, number | undefined, number>
  locked_until: Time | null
  /** When the pending passcode evaluation was answered; a verify consumes it. */
  evaluated_at: Time | null
  /** Failed evaluations in all since the last right passcode. */
  total_failures: ColumnType<number, number | undefined, number>
  /** Set at every PASSCODE_FAILURES_BEFORE_SIGN_IN-th failure: a guess needs a later sign-in. */
  reauth_after: Time | null
  /** MAC of the attempt state under the server secret; null only before the upgrade at start. */
  state_mac: string | null
  created_at: Time
}

/**
 * A wallet's share sealed in the wallet frame under a passkey's PRF output (wallets/passkeys.ts):
 * the credential id, and the PRF salt with the frame's sealing, sealed again under the server
 * secret with their place. Nothing here opens without the passkey.
 */
export interface WalletPasskeysTable {
  id: string
  wallet_id: string
  /** base64url, as WebAuthn names it. */
  credential_id: string
  /** JSON { salt, ciphertext } sealed with (wallet's place, credential id). */
  sealing_sealed: string
  created_at: Time
}

/** Nonces of /siwe/init, by SHA-256; a row is deleted when its nonce is used. */
export interface SiweNoncesTable {
  nonce_hash: string
  app_id: string
  /** Lowercase address the nonce was issued for. */
  address: string
  /** The signed-in user who asked (the nonce then serves only that user's link). */
  user_id: string | null
  /** Base64url SHA-256 of the asking browser's secret, when it sent one. */
  browser_hash: string | null
  expires_at: Time
  created_at: Time
}

/** A server secret of an app (server/src/admin): only its SHA-256 is kept. */
export interface AppSecretsTable {
  id: string
  app_id: string
  hash: string
  created_at: Time
  last_used_at: Time | null
  revoked_at: Time | null
}

/** One call of the user API; `target` is a MAC of the user or identifier, never the value. */
export interface AdminAuditTable {
  id: Generated<number>
  app_id: string
  secret_id: string
  action: string
  target: string | null
  status: number
  ip: string
  created_at: Time
}

/** An app's webhook endpoint (server/src/webhooks); its signing secret sealed under the server secret. */
export interface WebhookEndpointsTable {
  id: string
  app_id: string
  url: string
  /** MAC of the endpoint's app and URL under the server secret (row-mac.ts). */
  mac: string
  secret_sealed: string
  /** Event types sent to it, or ["*"] for all. */
  events: Json<string[]>
  created_at: Time
  disabled_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  disabled_reason: ColumnType<string | null, string | null | undefined, string | null>
}

/** One event for one endpoint: the outbox row, leased by the process delivering it. */
export interface WebhookDeliveriesTable {
  id: string
  event_id: string
  endpoint_id: string
  app_id: string
  event_type: string
  payload: string
  /** 'pending', 'delivered' or 'failed'. */
  status: string
  attempts: ColumnType<number, number | undefined, number>
  next_attempt_at: Time
  /** Retries stop after this: 24 hours from the event, or from a replay. */
  retry_until: Time
  lease_owner: string | null
  lease_until: Time | null
  last_status: number | null
  last_error: string | null
  created_at: Time
  finished_at: Time | null
}

/** The delivery log: one row per attempt. */
export interface WebhookAttemptsTable {
  id: Generated<string>
  delivery_id: string
  attempted_at: Time
  duration_ms: number
  status_code: number | null
  error: string | null
}

/** The credential of a `passkey` linked account (server/src/passkeys). */
export interface PasskeysTable {
  app_id: string
  /** Base64url credential id, as the linked account's identifier. */
  credential_id: string
  account_id: string
  user_id: string
  /** COSE public key, base64url. */
  public_key: string
  /** The signature counter last seen (0 for authenticators that keep none, as synced passkeys). */
  counter: ColumnType<string | number, number, number>
  /** 'singleDevice' or 'multiDevice'. */
  device_type: string
  backed_up: boolean
  /** JSON text of the transports the browser reported. */
  transports: string
  /** Base64url user handle the credential was created with. */
  user_handle: string
  /** MAC of the app, credential, account, user and public key under the server secret. */
  mac: string
  created_at: Time
  last_used_at: Time | null
}

/**
 * A wallet's attempt counter, apart from the wallet row: advanced with every new attempt state and
 * naming that state's MAC, so restoring an older state in the wallet row is refused.
 */
export interface WalletAttemptsTable {
  wallet_id: string
  counter: ColumnType<string | number, number, number>
  mac: string
}

/** Challenges of passkey ceremonies, by SHA-256; a row is deleted when its challenge is used. */
export interface PasskeyChallengesTable {
  challenge_hash: string
  app_id: string
  /** 'register' (sign-up or link) or 'authenticate'. */
  kind: string
  /** The signed-in user who asked (a link); null for a sign-up or a sign-in. */
  user_id: string | null
  /** Base64url user handle offered to the authenticator (registration). */
  user_handle: string
  /** Base64url SHA-256 of the asking browser's secret. */
  browser_hash: string
  expires_at: Time
  created_at: Time
}

/** An app's sponsor on a chain (server/src/sponsor). */
export interface SponsorsTable {
  id: string
  app_id: string
  chain_id: number
  /** The sponsor account's address, EIP-55. */
  address: string
  /** Its private key, sealed under the server secret for this row (`sponsor-key:<id>`). */
  private_sealed: string
  /** The policy as JSON text, exactly as its MAC covers it. */
  policy: string
  /** MAC of id, app, chain, address and policy under the server secret (row-mac.ts). */
  mac: string
  created_at: Time
  updated_at: Time
}

/** A batch a sponsor sent (EIP-5792 id). */
export interface SponsoredBatchesTable {
  id: string
  sponsor_id: string
  app_id: string
  chain_id: number
  user_id: string
  account: string
  transaction_hash: string
  calls: number
  /** Wei, as decimal text: the most it may cost until the receipt, then what it cost. */
  cost_wei: ColumnType<string, string, string>
  /** 'pending', 'confirmed' or 'reverted'. */
  status: string
  /** The receipt as JSON text, once read. */
  receipt: string | null
  created_at: Time
}

export interface Database {
  apps: AppsTable
  users: UsersTable
  linked_accounts: LinkedAccountsTable
  sessions: SessionsTable
  refresh_tokens: RefreshTokensTable
  verification_codes: VerificationCodesTable
  rate_limits: RateLimitsTable
  signing_keys: SigningKeysTable
  analytics_events: AnalyticsEventsTable
  fork_tokens: ForkTokensTable
  wallet_pairings: WalletPairingsTable
  link_approvals: LinkApprovalsTable
  oauth_states: OAuthStatesTable
  wallets: WalletsTable
  wallet_passkeys: WalletPasskeysTable
  siwe_nonces: SiweNoncesTable
  app_secrets: AppSecretsTable
  admin_audit: AdminAuditTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  passkeys: PasskeysTable
  wallet_attempts: WalletAttemptsTable
  passkey_challenges: PasskeyChallengesTable
  sponsors: SponsorsTable
  sponsored_batches: SponsoredBatchesTable
}

export type Db = Kysely<Database>

/** JSON text for a JSON column. */
export const json = (value: unknown): string => JSON.stringify(value)
