/** The one migration set, for PGlite and PostgreSQL alike. */
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'
import type { Secrets } from '../crypto.ts'
import { sealRowMacs } from './seal-rows.ts'

const time = 'timestamptz'

/**
 * The migrations; those that seal existing rows under the server secret (0018) need `secrets`
 * when there are rows to seal, and refuse to run without.
 */
function migrationsFor(secrets: Secrets | null): Record<string, Migration> {
  return { ...migrations, ...sealing(secrets) }
}

/** Migrations that write MACs of existing rows, and so need the server secret. */
function sealing(secrets: Secrets | null): Record<string, Migration> {
  return {
    '0018_row_macs': {
      async up(db: Kysely<unknown>) {
        // Every row whose presence or content grants access carries a MAC under the server
        // secret (server/src/row-mac.ts); refresh tokens are keyed by the secret instead of a
        // plain SHA-256, and each passcode wallet gets the attempt counter that only moves
        // forward. Existing rows are sealed here, in the migration's transaction, since a row
        // without a MAC grants nothing: a database writer cannot get one sealed later.
        for (const table of ['linked_accounts', 'sessions', 'refresh_tokens', 'passkeys']) {
          await db.schema.alterTable(table).addColumn('mac', 'text').execute()
        }
        await db.schema.alterTable('refresh_tokens').addColumn('token_sha256', 'text').execute()
        await db.schema.alterTable('webhook_endpoints').addColumn('mac', 'text').execute()
        await db.schema.alterTable('apps').addColumn('origins_mac', 'text').execute()
        await db.schema.alterTable('signing_keys').addColumn('mac', 'text').execute()
        await db.schema
          .createTable('wallet_attempts')
          .addColumn('wallet_id', 'text', (c) =>
            c.primaryKey().references('wallets.id').onDelete('cascade'),
          )
          .addColumn('counter', 'bigint', (c) => c.notNull())
          .addColumn('mac', 'text', (c) => c.notNull())
          .execute()
        await sealRowMacs(db, secrets)
        for (const table of ['linked_accounts', 'sessions', 'refresh_tokens', 'passkeys']) {
          await db.schema
            .alterTable(table)
            .alterColumn('mac', (c) => c.setNotNull())
            .execute()
        }
        await db.schema
          .alterTable('refresh_tokens')
          .alterColumn('token_sha256', (c) => c.setNotNull())
          .execute()
        await db.schema
          .alterTable('webhook_endpoints')
          .alterColumn('mac', (c) => c.setNotNull())
          .execute()
        await db.schema
          .alterTable('apps')
          .alterColumn('origins_mac', (c) => c.setNotNull())
          .execute()
        await db.schema
          .alterTable('signing_keys')
          .alterColumn('mac', (c) => c.setNotNull())
          .execute()
      },
    },
  }
}

const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('apps')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('allowed_origins', 'jsonb', (c) => c.notNull())
        .addColumn('login_methods', 'jsonb', (c) => c.notNull())
        .addColumn('allowlist_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('allowlist_entries', 'jsonb', (c) => c.notNull())
        .addColumn('allowlist_config', 'jsonb', (c) => c.notNull())
        .addColumn('appearance', 'jsonb', (c) => c.notNull())
        .addColumn('legal', 'jsonb', (c) => c.notNull())
        .addColumn('embedded_wallet_config', 'jsonb', (c) => c.notNull())
        .addColumn('wallet_connect_project_id', 'text')
        .addColumn('custom_api_url', 'text')
        .addColumn('oauth_sealed', 'text')
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('updated_at', time, (c) => c.notNull())
        .execute()

      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('created_at', time, (c) => c.notNull())
        .execute()

      await db.schema
        .createTable('linked_accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('identifier', 'text', (c) => c.notNull())
        .addColumn('data', 'jsonb', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addUniqueConstraint('linked_accounts_identity', ['app_id', 'type', 'identifier'])
        .execute()
      await db.schema
        .createIndex('linked_accounts_user')
        .on('linked_accounts')
        .column('user_id')
        .execute()

      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('parent_id', 'text')
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('expires_at', time, (c) => c.notNull())
        .addColumn('revoked_at', time)
        .addColumn('revoked_reason', 'text')
        .execute()

      await db.schema
        .createTable('refresh_tokens')
        .addColumn('hash', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) =>
          c.notNull().references('sessions.id').onDelete('cascade'),
        )
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('rotated_at', time)
        .addColumn('child_hash', 'text')
        .addColumn('child_sealed', 'text')
        .execute()
      await db.schema
        .createIndex('refresh_tokens_session')
        .on('refresh_tokens')
        .column('session_id')
        .execute()

      await db.schema
        .createTable('verification_codes')
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('identifier', 'text', (c) => c.notNull())
        .addColumn('code_hmac', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('expires_at', time, (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('consumed_at', time)
        .addPrimaryKeyConstraint('verification_codes_pk', ['app_id', 'channel', 'identifier'])
        .execute()

      await db.schema
        .createTable('rate_limits')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('window_start', time, (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .execute()

      await db.schema
        .createTable('signing_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
        .addColumn('public_pem', 'text', (c) => c.notNull())
        .addColumn('private_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .execute()
      await db.schema.createIndex('signing_keys_app').on('signing_keys').column('app_id').execute()

      await db.schema
        .createTable('analytics_events')
        .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('event_name', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('payload', 'jsonb', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .execute()

      await db.schema
        .createTable('fork_tokens')
        .addColumn('hash', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) =>
          c.notNull().references('sessions.id').onDelete('cascade'),
        )
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('expires_at', time, (c) => c.notNull())
        .addColumn('used_at', time)
        .execute()
    },
  },
  '0002_oauth_states': {
    async up(db: Kysely<unknown>) {
      // Pending OAuth flows (oauth/stateStore.ts). A database that ran the OAuth feature's
      // former lazy migrator already has the table: it is kept, with its pending flows, and
      // that migrator's own bookkeeping tables go.
      await db.schema
        .createTable('oauth_states')
        .ifNotExists()
        .addColumn('state_hash', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('redirect_to', 'text', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('code_verifier', 'text')
        .addColumn('nonce', 'text')
        .addColumn('user_id', 'text')
        .addColumn('is_link', 'boolean', (c) => c.notNull())
        .addColumn('expires_at', time, (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('oauth_states_expires')
        .ifNotExists()
        .on('oauth_states')
        .column('expires_at')
        .execute()
      await db.schema.dropTable('latch_oauth_migrations').ifExists().execute()
      await db.schema.dropTable('latch_oauth_migrations_lock').ifExists().execute()
    },
  },
  '0003_oauth_browser_binding': {
    async up(db: Kysely<unknown>) {
      // Each OAuth flow is bound to the browser that started it (oauth/README.md, threat
      // model): the hash of that browser's secret. Flows pending from before have none and
      // are refused when they return; they lasted 10 minutes anyway.
      await db.schema.alterTable('oauth_states').addColumn('browser_hash', 'text').execute()
    },
  },
  '0004_sms_limits': {
    async up(db: Kysely<unknown>) {
      // The countries an app sends SMS codes to; every existing app keeps to US numbers, the
      // only ones the modal's input parses.
      await db.schema
        .alterTable('apps')
        .addColumn('sms_countries', 'jsonb', (c) => c.notNull().defaultTo(sql`'["US"]'::jsonb`))
        .execute()
      // Windows now last up to a day: the sweeper keeps a window until it has ended. Rows from
      // before keep null and go an hour after they began, as they always did.
      await db.schema.alterTable('rate_limits').addColumn('expires_at', time).execute()
      // The retention sweep deletes analytics rows by age.
      await db.schema
        .createIndex('analytics_events_created')
        .on('analytics_events')
        .column('created_at')
        .execute()
    },
  },
  '0005_session_family_indexes': {
    async up(db: Kysely<unknown>) {
      // A session's family is the sign-in it descends from through forks: family_id names the
      // root session. Reuse and logout revoke a whole family, and liveness checks the root too.
      await db.schema.alterTable('sessions').addColumn('family_id', 'text').execute()
      await sql`
        WITH RECURSIVE tree (id, root) AS (
          SELECT s.id, s.id FROM sessions s
          WHERE s.parent_id IS NULL
             OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_id)
          UNION ALL
          SELECT c.id, t.root FROM sessions c JOIN tree t ON c.parent_id = t.id
        )
        UPDATE sessions s SET family_id = tree.root FROM tree WHERE s.id = tree.id`.execute(db)
      // A fork no longer outlives its family's sign-in (a fork every 29 days would otherwise
      // keep a session forever), so the root is the last of a family the sweeper deletes.
      await sql`
        UPDATE sessions c SET expires_at = r.expires_at FROM sessions r
        WHERE r.id = c.family_id AND c.expires_at > r.expires_at`.execute(db)
      // Children that outlived a revoked relative (the bug this fixes) are revoked with it.
      await sql`
        UPDATE sessions s SET revoked_at = r.revoked_at, revoked_reason = r.revoked_reason
        FROM (
          SELECT DISTINCT ON (family_id) family_id, revoked_at, revoked_reason FROM sessions
          WHERE revoked_at IS NOT NULL ORDER BY family_id, revoked_at
        ) r
        WHERE s.family_id = r.family_id AND s.revoked_at IS NULL`.execute(db)
      await db.schema
        .alterTable('sessions')
        .alterColumn('family_id', (c) => c.setNotNull())
        .execute()
      await db.schema.createIndex('sessions_family').on('sessions').column('family_id').execute()
      // Hot paths: a rotation forgets the grandparent's sealed copy by child_hash.
      await db.schema
        .createIndex('refresh_tokens_child')
        .on('refresh_tokens')
        .column('child_hash')
        .execute()
      // Sweeps: ended sessions (their tokens and fork tokens go by cascade), sealed copies
      // past the grace window, dead codes, fork tokens and rate-limit windows.
      await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute()
      await db.schema
        .createIndex('refresh_tokens_sealed_rotated')
        .on('refresh_tokens')
        .column('rotated_at')
        .where(sql.ref('child_sealed'), 'is not', null)
        .execute()
      await db.schema
        .createIndex('fork_tokens_session')
        .on('fork_tokens')
        .column('session_id')
        .execute()
      await db.schema
        .createIndex('fork_tokens_expires')
        .on('fork_tokens')
        .column('expires_at')
        .execute()
      await db.schema
        .createIndex('verification_codes_expires')
        .on('verification_codes')
        .column('expires_at')
        .execute()
      await db.schema
        .createIndex('rate_limits_window')
        .on('rate_limits')
        .column('window_start')
        .execute()
    },
  },
  '0006_wallets': {
    async up(db: Kysely<unknown>) {
      // The in-app wallet's server side (server/src/wallets): one wallet per user, its auth share
      // and recovery material sealed under the server secret, and the passcode attempt counter.
      await db.schema
        .createTable('wallets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('chain_id', 'text', (c) => c.notNull())
        .addColumn('recovery_method', 'text', (c) => c.notNull())
        .addColumn('auth_share_sealed', 'text', (c) => c.notNull())
        .addColumn('recovery_sealed', 'text', (c) => c.notNull())
        .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('locked_until', time)
        .addColumn('evaluated_at', time)
        .addColumn('created_at', time, (c) => c.notNull())
        .addUniqueConstraint('wallets_one_per_user', ['user_id'])
        .addUniqueConstraint('wallets_address', ['app_id', 'address'])
        .execute()
    },
  },
  '0007_chain_rpc_urls': {
    async up(db: Kysely<unknown>) {
      // An app's own node per chain (chains/rpc-urls.ts), as JSON sealed under the server secret:
      // node URLs of hosted providers carry API keys in their path or query.
      await db.schema.alterTable('apps').addColumn('rpc_urls_sealed', 'text').execute()
    },
  },
  '0008_siwe_nonces': {
    async up(db: Kysely<unknown>) {
      // Sign-In with Ethereum (server/src/siwe): each nonce handed out by /siwe/init, by its
      // SHA-256, bound to the app, the address, the user who asked (a link) and the asking
      // browser's hash; deleted when used, so a signed message is good once.
      await db.schema
        .createTable('siwe_nonces')
        .addColumn('nonce_hash', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('browser_hash', 'text')
        .addColumn('expires_at', time, (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('siwe_nonces_expires')
        .on('siwe_nonces')
        .column('expires_at')
        .execute()
    },
  },
  '0009_wallet_binding': {
    async up(db: Kysely<unknown>) {
      // A passcode wallet's attempt state under a MAC of the server secret (wallets/attempts.ts),
      // and the failures in all since the last right passcode, after which a new sign-in is
      // needed. Rows of before are sealed again with their place and given a MAC at start.
      await db.schema
        .alterTable('wallets')
        .addColumn('total_failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('reauth_after', time)
        .addColumn('state_mac', 'text')
        .execute()
    },
  },
  '0010_fork_wallet_confirmation': {
    async up(db: Kysely<unknown>) {
      // A forked session may recover the wallet automatically only once the visitor who forked
      // confirmed it (their click on a wallet app, recorded by the wallet frame): when that was,
      // and the session the token was redeemed into, so recovery can ask about its own session.
      await db.schema
        .alterTable('fork_tokens')
        .addColumn('wallet_confirmed_at', time)
        .addColumn('redeemed_session_id', 'text')
        .execute()
      await db.schema
        .createIndex('fork_tokens_redeemed_session')
        .on('fork_tokens')
        .column('redeemed_session_id')
        .execute()
    },
  },
  '0012_webhooks': {
    async up(db: Kysely<unknown>) {
      // Signed webhooks (server/src/webhooks): an app's endpoints with their signing secrets
      // sealed under the server secret, the outbox (one delivery row per event and endpoint,
      // written in the transaction of the change it reports, leased by one process at a time)
      // and the log of every attempt.
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('secret_sealed', 'text', (c) => c.notNull())
        .addColumn('events', 'jsonb', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('disabled_at', time)
        .addColumn('disabled_reason', 'text')
        .execute()
      await db.schema
        .createIndex('webhook_endpoints_app')
        .on('webhook_endpoints')
        .column('app_id')
        .execute()
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('endpoint_id', 'text', (c) =>
          c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
        )
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        // The exact body that is signed and sent, every time.
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', time, (c) => c.notNull())
        // Retries stop after this (24 hours from the event, or from a replay).
        .addColumn('retry_until', time, (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', time)
        .addColumn('last_status', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('finished_at', time)
        .addUniqueConstraint('webhook_deliveries_event_endpoint', ['event_id', 'endpoint_id'])
        .execute()
      await sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
        WHERE status = 'pending'`.execute(db)
      await db.schema
        .createIndex('webhook_deliveries_app')
        .on('webhook_deliveries')
        .columns(['app_id', 'created_at'])
        .execute()
      await db.schema
        .createIndex('webhook_deliveries_endpoint')
        .on('webhook_deliveries')
        .column('endpoint_id')
        .execute()
      await db.schema
        .createIndex('webhook_deliveries_finished')
        .on('webhook_deliveries')
        .column('finished_at')
        .execute()
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'bigserial', (c) => c.primaryKey())
        .addColumn('delivery_id', 'text', (c) =>
          c.notNull().references('webhook_deliveries.id').onDelete('cascade'),
        )
        .addColumn('attempted_at', time, (c) => c.notNull())
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .execute()
      await db.schema
        .createIndex('webhook_attempts_delivery')
        .on('webhook_attempts')
        .column('delivery_id')
        .execute()
    },
  },
  '0011_app_secrets_admin': {
    async up(db: Kysely<unknown>) {
      // Server secrets of an app (server/src/admin): the SHA-256 of each, several live for
      // rotation; and the audit of every call of the user API made with one.
      await db.schema
        .createTable('app_secrets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('last_used_at', time)
        .addColumn('revoked_at', time)
        .execute()
      await db.schema.createIndex('app_secrets_app').on('app_secrets').column('app_id').execute()
      await db.schema
        .createTable('admin_audit')
        .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('secret_id', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('admin_audit_app_time')
        .on('admin_audit')
        .columns(['app_id', 'created_at'])
        .execute()
      // The user list pages through an app's users in (created_at, id) order.
      await db.schema
        .createIndex('users_app_created')
        .on('users')
        .columns(['app_id', 'created_at', 'id'])
        .execute()
    },
  },
  '0013_passkeys': {
    async up(db: Kysely<unknown>) {
      // Passkeys (server/src/passkeys): the credential behind each `passkey` linked account,
      // deleted with it; the WebAuthn counter and backup flags as the last ceremony saw them.
      await db.schema
        .createTable('passkeys')
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('credential_id', 'text', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) =>
          c.notNull().unique().references('linked_accounts.id').onDelete('cascade'),
        )
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('counter', 'bigint', (c) => c.notNull())
        .addColumn('device_type', 'text', (c) => c.notNull())
        .addColumn('backed_up', 'boolean', (c) => c.notNull())
        .addColumn('transports', 'text', (c) => c.notNull())
        .addColumn('user_handle', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('last_used_at', time)
        .addPrimaryKeyConstraint('passkeys_pk', ['app_id', 'credential_id'])
        .execute()
      await db.schema.createIndex('passkeys_user').on('passkeys').column('user_id').execute()
      // Each challenge handed out, by its SHA-256: single use (deleted when presented), short
      // lived, bound to the asking browser's hash and, for a link, to the user; gone with them.
      await db.schema
        .createTable('passkey_challenges')
        .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('user_handle', 'text', (c) => c.notNull())
        .addColumn('browser_hash', 'text', (c) => c.notNull())
        .addColumn('expires_at', time, (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('passkey_challenges_expires')
        .on('passkey_challenges')
        .column('expires_at')
        .execute()
    },
  },
  '0014_wallet_passkeys': {
    async up(db: Kysely<unknown>) {
      // Recovery by passkey (server/src/wallets/passkeys.ts): per wallet, the credential ids of
      // its recovery passkeys and, sealed, each one's PRF salt and the frame's sealing of a share.
      await db.schema
        .createTable('wallet_passkeys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('wallet_id', 'text', (c) =>
          c.notNull().references('wallets.id').onDelete('cascade'),
        )
        .addColumn('credential_id', 'text', (c) => c.notNull())
        .addColumn('sealing_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addUniqueConstraint('wallet_passkeys_credential', ['wallet_id', 'credential_id'])
        .execute()
    },
  },
  '0015_app_chains': {
    async up(db: Kysely<unknown>) {
      // The chains an app's wallet may use (apps/service.ts, appChainIds); null keeps SPEC's
      // list, so every existing app goes on as before.
      await db.schema.alterTable('apps').addColumn('chains', 'jsonb').execute()
    },
  },
  '0020_sponsors': {
    async up(db: Kysely<unknown>) {
      // An app's sponsor on a chain (server/src/sponsor): the account whose key, sealed under the
      // server secret for its own row, pays for its users' batches, and the policy of what it
      // pays for, kept as the exact JSON text its MAC covers.
      await db.schema
        .createTable('sponsors')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('chain_id', 'integer', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('private_sealed', 'text', (c) => c.notNull())
        .addColumn('policy', 'text', (c) => c.notNull())
        .addColumn('mac', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('updated_at', time, (c) => c.notNull())
        .addUniqueConstraint('sponsors_app_chain', ['app_id', 'chain_id'])
        .execute()
      // Each batch a sponsor sent: its EIP-5792 id, whose it is, and what it may cost (the gas
      // limit at the fee cap, until its receipt says what it did cost): the daily budgets sum it.
      await db.schema
        .createTable('sponsored_batches')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('sponsor_id', 'text', (c) =>
          c.notNull().references('sponsors.id').onDelete('cascade'),
        )
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('chain_id', 'integer', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('account', 'text', (c) => c.notNull())
        .addColumn('transaction_hash', 'text', (c) => c.notNull())
        .addColumn('calls', 'integer', (c) => c.notNull())
        .addColumn('cost_wei', 'numeric(78, 0)', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('receipt', 'text')
        .addColumn('created_at', time, (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('sponsored_batches_spend')
        .on('sponsored_batches')
        .columns(['sponsor_id', 'created_at'])
        .execute()
      await db.schema
        .createIndex('sponsored_batches_user')
        .on('sponsored_batches')
        .columns(['user_id', 'created_at'])
        .execute()
    },
  },
  '0019_refresh_retry_id': {
    async up(db: Kysely<unknown>) {
      // The hash of the Latch-Refresh-Id of the request that rotated a token: a retry of that
      // same request, whose answer was lost, is answered the live pair (sessions/service.ts).
      await db.schema.alterTable('refresh_tokens').addColumn('rotated_by', 'text').execute()
    },
  },
  '0017_wallet_pairing': {
    async up(db: Kysely<unknown>) {
      // A fork reaches the wallet only once paired from inside the wallet origin
      // (server/src/wallets/fork-pair.ts): the pairing's MAC on the fork token's row, which no
      // database writer without the server secret can make. A confirmation recorded the old way
      // (wallet_confirmed_at) no longer counts; such a session pairs or recovers with its
      // passcode. Fork tokens are now stored as a MAC under the secret: the unspent ones of the
      // old form (two minutes' life) simply stop opening.
      await db.schema.alterTable('fork_tokens').addColumn('paired_mac', 'text').execute()
      // Each pairing code the original device's wallet frame showed: its MAC, bound to that
      // session; single use, short lived, a few tries.
      await db.schema
        .createTable('wallet_pairings')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) =>
          c.notNull().references('sessions.id').onDelete('cascade'),
        )
        .addColumn('code_mac', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('expires_at', time, (c) => c.notNull())
        .addColumn('used_at', time)
        .execute()
      await db.schema
        .createIndex('wallet_pairings_session')
        .on('wallet_pairings')
        .column('session_id')
        .execute()
      // The visitor's approvals of a new sign-in method, recorded by the wallet frame: single
      // use, short lived, bound (by their MAC) to user, session, method kind and identifier.
      await db.schema
        .createTable('link_approvals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) =>
          c.notNull().references('sessions.id').onDelete('cascade'),
        )
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('identifier', 'text', (c) => c.notNull())
        .addColumn('mac', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('expires_at', time, (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('link_approvals_session')
        .on('link_approvals')
        .column('session_id')
        .execute()
    },
  },
  '0021_pending_flow_macs': {
    async up(db: Kysely<unknown>) {
      // A fork token's row and a pending OAuth flow's row each carry a MAC under the server
      // secret over what they grant and to whom (server/src/row-mac.ts): the session a fork
      // token opens a child of, and where an OAuth flow returns its code and which browser may
      // finish it. A row without one grants nothing: the fork tokens and OAuth flows pending at
      // the upgrade (two and ten minutes' life) stop opening, and their visitors start again.
      await db.schema.alterTable('fork_tokens').addColumn('mac', 'text').execute()
      await db.schema.alterTable('oauth_states').addColumn('mac', 'text').execute()
    },
  },
}

/**
 * The set itself, in name order; exported so tests can stop part way. Without the server secret:
 * a migration that must seal existing rows refuses to (use `migrate` with the secrets).
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = migrationsFor(null)

/**
 * Brings the schema up to date; throws with the failing migration's error. `secrets` seal the
 * rows a migration gives a MAC (an empty database needs none).
 */
export async function migrate(db: Kysely<unknown>, secrets: Secrets | null = null): Promise<void> {
  const all = migrationsFor(secrets)
  const provider: MigrationProvider = { getMigrations: async () => all }
  const migrator = new Migrator({ db, provider })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown'
    throw new Error(`Migration ${failed} failed: ${String(error)}`, { cause: error })
  }
}
