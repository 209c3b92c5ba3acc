/**
 * Passkeys: WebAuthn registration (sign-up and link) and authentication with discoverable
 * credentials, on @simplewebauthn/server. Challenges are single use, short lived and bound to
 * the browser that asked (and, for a link, the user). Threat model: README.md beside this file.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { LatchError, type PasskeyAccount, type User } from '@latch/shared'
import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { Selectable } from 'kysely'
import {
  accountHolds,
  accountRecordInvalid,
  linkAccount,
  loadUser,
  type NewAccount,
} from '../accounts/service.ts'
import type { AppRecord } from '../apps/service.ts'
import type { Deps } from '../context.ts'
import { json } from '../db/index.ts'
import type { PasskeyChallengesTable, PasskeysTable } from '../db/schema.ts'
import { rowMac, rowMacHolds } from '../row-mac.ts'

/** How long a challenge waits for its ceremony: the browser's own timeout, and a little more. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000
/** What the browser is told to wait for the person (ms). */
const CEREMONY_TIMEOUT_MS = 4 * 60_000
/** The name of a passkey nobody named. */
export const DEFAULT_PASSKEY_NAME = 'Passkey'

type ChallengeKind = 'register' | 'authenticate'
type ChallengeRow = Selectable<PasskeyChallengesTable>
type PasskeyRow = Selectable<PasskeysTable>

const sha256hex = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * Where ceremonies happen: the RP ID and the modal origin. Without both (no RP ID fits the
 * modal origin) the method is not available on this server, whatever the app says.
 */
function relyingParty(deps: Deps): { rpId: string; origin: string } {
  const { passkeyRpId, modalOrigin } = deps.config
  if (!passkeyRpId || !modalOrigin) throw LatchError.of('method_not_available')
  return { rpId: passkeyRpId, origin: modalOrigin }
}

async function storeChallenge(
  deps: Deps,
  input: {
    challenge: string
    appId: string
    kind: ChallengeKind
    userId: string | null
    userHandle: string
    browserHash: string
  },
): Promise<void> {
  const now = deps.clock.now()
  // Abandoned ceremonies are swept as new ones start.
  await deps.db.deleteFrom('passkey_challenges').where('expires_at', '<', now).execute()
  await deps.db
    .insertInto('passkey_challenges')
    .values({
      challenge_hash: sha256hex(input.challenge),
      app_id: input.appId,
      kind: input.kind,
      user_id: input.userId,
      user_handle: input.userHandle,
      browser_hash: input.browserHash,
      expires_at: new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_MS),
      created_at: now,
    })
    .execute()
}

/** Whether `secret` (base64url) hashes to `hash` (base64url SHA-256), in constant time. */
function secretMatches(secret: string, hash: string): boolean {
  const got = createHash('sha256').update(secret).digest()
  const want = Buffer.from(hash, 'base64url')
  return got.length === want.length && timingSafeEqual(got, want)
}

/** The challenge the browser signed, read from clientDataJSON; null when unreadable. */
function signedChallenge(clientDataJSON: unknown): string | null {
  if (typeof clientDataJSON !== 'string' || clientDataJSON.length > 4096) return null
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    const challenge = (data as { challenge?: unknown } | null)?.challenge
    return typeof challenge === 'string' && challenge.length <= 512 ? challenge : null
  } catch {
    return null
  }
}

/**
 * Uses up the challenge the response signed, before anything else is checked: DELETE …
 * RETURNING, so of two requests with one response exactly one gets the row, and a refused
 * response cannot be tried again. Refuses (passkey_not_initialized) a challenge this server did
 * not issue for this app and ceremony, an expired one, one asked for by another user or flow,
 * and one whose browser secret is not the asking browser's.
 */
async function takeChallenge(
  deps: Deps,
  input: {
    appId: string
    kind: ChallengeKind
    userId: string | null
    clientDataJSON: unknown
    browserSecret: string
  },
): Promise<{ challenge: string; row: ChallengeRow }> {
  const refuse = (why: string) => {
    deps.log(`[latch] passkeys: app ${input.appId}: challenge refused (${why})`)
    return LatchError.of('passkey_not_initialized')
  }
  const challenge = signedChallenge(input.clientDataJSON)
  if (!challenge) throw refuse('unreadable')
  const row = await deps.db
    .deleteFrom('passkey_challenges')
    .where('challenge_hash', '=', sha256hex(challenge))
    .where('app_id', '=', input.appId)
    .returningAll()
    .executeTakeFirst()
  if (!row) throw refuse('unknown or used')
  if (new Date(row.expires_at).getTime() <= deps.clock.now().getTime()) throw refuse('expired')
  if (row.kind !== input.kind) throw refuse('another ceremony')
  // A signed-out challenge serves a sign-up or sign-in only; a user's, that user's link.
  if (row.user_id !== input.userId) throw refuse('another flow')
  if (!secretMatches(input.browserSecret, row.browser_hash)) throw refuse('another browser')
  return { challenge, row }
}

function passkeyRow(deps: Deps, appId: string, credentialId: string) {
  return deps.db
    .selectFrom('passkeys')
    .selectAll()
    .where('app_id', '=', appId)
    .where('credential_id', '=', credentialId)
    .executeTakeFirst()
}

/** The user's passkeys, for excludeCredentials and the user handle a link reuses. */
function userPasskeys(deps: Deps, appId: string, userId: string) {
  return deps.db
    .selectFrom('passkeys')
    .select(['credential_id', 'transports', 'user_handle'])
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute()
}

function transportsOf(text: string): AuthenticatorTransport[] {
  try {
    const list: unknown = JSON.parse(text)
    return Array.isArray(list)
      ? list.filter((t): t is AuthenticatorTransport => typeof t === 'string')
      : []
  } catch {
    return []
  }
}

/** The name the authenticator's picker shows for a new credential. */
function userNameFor(app: AppRecord, user: User | null, now: Date): string {
  const who = user?.email?.address ?? user?.phone?.number
  return who ?? `${app.name} ${now.toISOString().slice(0, 10)}`
}

/**
 * Options for navigator.credentials.create(): a discoverable credential with user
 * verification, ES256 or RS256 or EdDSA, no attestation. `userId` set: a link to that user, who
 * keeps one user handle across their passkeys, and whose passkeys are excluded.
 */
export async function registrationOptions(
  deps: Deps,
  input: { app: AppRecord; userId: string | null; browserHash: string },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rpId } = relyingParty(deps)
  const { app, userId } = input
  const existing = userId ? await userPasskeys(deps, app.id, userId) : []
  const user = userId ? await loadUser(deps, app.id, userId) : null
  const handle = existing[0]?.user_handle ?? randomBytes(32).toString('base64url')
  const options = await generateRegistrationOptions({
    rpName: app.name,
    rpID: rpId,
    userName: userNameFor(app, user, deps.clock.now()),
    userID: Buffer.from(handle, 'base64url'),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({
      id: p.credential_id,
      transports: transportsOf(p.transports),
    })),
    authenticatorSelection: {
      residentKey: 'required',
      requireResidentKey: true,
      userVerification: 'required',
    },
    // PRF on the same credential lets the wallet frame derive a recovery key from it later.
    extensions: { credProps: true, prf: {} },
  })
  await storeChallenge(deps, {
    challenge: options.challenge,
    appId: app.id,
    kind: 'register',
    userId,
    userHandle: handle,
    browserHash: input.browserHash,
  })
  return options
}

/** Options for navigator.credentials.get(): any discoverable credential of the RP ID. */
export async function authenticationOptions(
  deps: Deps,
  input: { app: AppRecord; browserHash: string },
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { rpId } = relyingParty(deps)
  const options = await generateAuthenticationOptions({
    rpID: rpId,
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: 'required',
  })
  await storeChallenge(deps, {
    challenge: options.challenge,
    appId: input.app.id,
    kind: 'authenticate',
    userId: null,
    userHandle: '',
    browserHash: input.browserHash,
  })
  return options
}

export interface RegisteredPasskey {
  account: NewAccount<PasskeyAccount>
  store(accountId: string, userId: string): Promise<void>
}

/**
 * Verifies a registration response and answers the passkey account it proves, with the write
 * of its credential row once the account exists. Refusals: passkey_not_initialized (the
 * challenge), passkey_verification_failed (origin, RP ID, user verification, the attestation;
 * the reason goes to the log), linked_to_another_user (a credential id already registered).
 */
export async function verifyRegistration(
  deps: Deps,
  input: {
    app: AppRecord
    userId: string | null
    credential: RegistrationResponseJSON
    browserSecret: string
    name: string | undefined
  },
): Promise<RegisteredPasskey> {
  const { rpId, origin } = relyingParty(deps)
  const { app } = input
  const { challenge, row } = await takeChallenge(deps, {
    appId: app.id,
    kind: 'register',
    userId: input.userId,
    clientDataJSON: input.credential.response?.clientDataJSON,
    browserSecret: input.browserSecret,
  })
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>
  try {
    verified = await verifyRegistrationResponse({
      response: input.credential,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      requireUserVerification: true,
    })
  } catch (e) {
    deps.log(`[latch] passkeys: app ${app.id}: registration refused (${(e as Error).message})`)
    throw LatchError.of('passkey_verification_failed')
  }
  if (!verified.verified) {
    deps.log(`[latch] passkeys: app ${app.id}: registration refused (not verified)`)
    throw LatchError.of('passkey_verification_failed')
  }
  const info = verified.registrationInfo
  const credentialId = info.credential.id
  // A credential id already here (this user's or another's): a new sign-up with it would
  // otherwise sign in as its holder with a key the holder never made.
  if (await passkeyRow(deps, app.id, credentialId)) throw LatchError.of('linked_to_another_user')
  const account: NewAccount<PasskeyAccount> = {
    type: 'passkey',
    credentialId,
    name: input.name ?? DEFAULT_PASSKEY_NAME,
  }
  return {
    account,
    async store(accountId, userId) {
      const now = deps.clock.now()
      const key = {
        app_id: app.id,
        credential_id: credentialId,
        account_id: accountId,
        user_id: userId,
        public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
        user_handle: row.user_handle,
      }
      await deps.db
        .insertInto('passkeys')
        .values({
          ...key,
          mac: rowMac(deps.secrets, 'passkey', key),
          counter: info.credential.counter,
          device_type: info.credentialDeviceType,
          backed_up: info.credentialBackedUp,
          transports: json(input.credential.response.transports ?? []),
          created_at: now,
          last_used_at: null,
        })
        .execute()
    },
  }
}

/** The id of the linked account that holds a passkey's credential id. */
export async function passkeyAccountId(
  deps: Deps,
  appId: string,
  credentialId: string,
): Promise<{ id: string; user_id: string } | undefined> {
  return deps.db
    .selectFrom('linked_accounts')
    .select(['id', 'user_id'])
    .where('app_id', '=', appId)
    .where('type', '=', 'passkey')
    .where('identifier', '=', credentialId)
    .executeTakeFirst()
}

/** Links a verified registration to a signed-in user and stores its credential. */
export async function linkPasskey(
  deps: Deps,
  appId: string,
  userId: string,
  registered: RegisteredPasskey,
): Promise<User> {
  await linkAccount(deps, appId, userId, registered.account, deps.clock.now())
  const linked = await passkeyAccountId(deps, appId, registered.account.credentialId)
  if (!linked) throw LatchError.of('passkey_verification_failed')
  await registered.store(linked.id, userId)
  return loadUser(deps, appId, userId)
}

/**
 * Verifies an assertion with a stored passkey and answers its account, after moving the
 * credential's counter forward (compare and set: of two assertions with one counter value,
 * one passes). Refusals: passkey_not_initialized (the challenge), passkey_verification_failed
 * (an unknown credential, origin, RP ID, signature, user verification, the user handle, a
 * counter that did not move forward; the log says which).
 */
export async function verifyAuthentication(
  deps: Deps,
  input: { app: AppRecord; credential: AuthenticationResponseJSON; browserSecret: string },
): Promise<NewAccount<PasskeyAccount>> {
  const { rpId, origin } = relyingParty(deps)
  const { app } = input
  const { challenge } = await takeChallenge(deps, {
    appId: app.id,
    kind: 'authenticate',
    userId: null,
    clientDataJSON: input.credential.response?.clientDataJSON,
    browserSecret: input.browserSecret,
  })
  const row = await passkeyRow(deps, app.id, input.credential.id)
  if (!row) throw refuseUnknown(deps, app.id)
  // A passkey row (its public key, its user) written without the server secret signs in as
  // nobody: refused before its signature is even checked, so its counter does not move either.
  if (!rowMacHolds(deps, 'passkey', row, row.mac, `${app.id}/${row.credential_id}`)) {
    throw accountRecordInvalid()
  }
  await checkAssertion(deps, { app, row, challenge, rpId, origin, credential: input.credential })
  const account = await deps.db
    .selectFrom('linked_accounts')
    .select(['id', 'app_id', 'user_id', 'type', 'identifier', 'data', 'mac'])
    .where('app_id', '=', app.id)
    .where('type', '=', 'passkey')
    .where('identifier', '=', input.credential.id)
    .executeTakeFirst()
  if (!account) throw refuseUnknown(deps, app.id)
  // The account must be the one the passkey was registered for, and the server's.
  if (
    account.id !== row.account_id ||
    account.user_id !== row.user_id ||
    !accountHolds(deps, account, account.mac)
  ) {
    throw accountRecordInvalid()
  }
  const stored = account.data as unknown as PasskeyAccount
  return { type: 'passkey', credentialId: stored.credentialId, name: stored.name }
}

/** An assertion by a credential this app does not hold: refused as any failed check, logged apart. */
function refuseUnknown(deps: Deps, appId: string): LatchError {
  deps.log(`[latch] passkeys: app ${appId}: assertion refused (unknown credential)`)
  return LatchError.of('passkey_verification_failed')
}

async function checkAssertion(
  deps: Deps,
  input: {
    app: AppRecord
    row: PasskeyRow
    challenge: string
    rpId: string
    origin: string
    credential: AuthenticationResponseJSON
  },
): Promise<void> {
  const { app, row, credential } = input
  const refuse = (why: string) => {
    deps.log(`[latch] passkeys: app ${app.id}: assertion refused (${why})`)
    return LatchError.of('passkey_verification_failed')
  }
  const handle = credential.response?.userHandle
  if (handle !== undefined && handle !== row.user_handle) throw refuse('user handle')
  const counter = Number(row.counter)
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>
  try {
    verified = await verifyAuthenticationResponse({
      response: credential,
      expectedChallenge: input.challenge,
      expectedOrigin: input.origin,
      expectedRPID: input.rpId,
      // In the modal's frame the browser names the page around it: one of the app's pages.
      expectedTopOrigin: app.allowedOrigins,
      requireUserVerification: true,
      credential: {
        id: row.credential_id,
        publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')),
        counter,
        transports: transportsOf(row.transports),
      },
    })
  } catch (e) {
    throw refuse((e as Error).message)
  }
  if (!verified.verified) throw refuse('not verified')
  const info = verified.authenticationInfo
  const moved = await deps.db
    .updateTable('passkeys')
    .set({
      counter: info.newCounter,
      backed_up: info.credentialBackedUp,
      device_type: info.credentialDeviceType,
      last_used_at: deps.clock.now(),
    })
    .where('app_id', '=', app.id)
    .where('credential_id', '=', row.credential_id)
    .where('counter', '=', counter)
    .executeTakeFirst()
  if (moved.numUpdatedRows === 0n) throw refuse('counter raced')
}

/** Renames one of the user's passkeys (the name lives in its linked account). */
export async function renamePasskey(
  deps: Deps,
  appId: string,
  userId: string,
  credentialId: string,
  name: string,
): Promise<User> {
  const row = await deps.db
    .selectFrom('linked_accounts')
    .select(['id', 'data'])
    .where('app_id', '=', appId)
    .where('user_id', '=', userId)
    .where('type', '=', 'passkey')
    .where('identifier', '=', credentialId)
    .executeTakeFirst()
  if (!row) throw LatchError.of('not_found', { message: 'This passkey is not linked to the user' })
  const account = { ...(row.data as unknown as PasskeyAccount), name }
  await deps.db
    .updateTable('linked_accounts')
    .set({ data: json(account) })
    .where('id', '=', row.id)
    .execute()
  return loadUser(deps, appId, userId)
}
