/**
 * A database writer without the server secret (the database's own operator, a restored backup,
 * an SQL injection anywhere), played with plain SQL on PGlite and PostgreSQL: rows written,
 * moved or copied so that they would grant access. Each is refused with a clear answer, logged,
 * and reaches nobody; the rows the server wrote go on working. Rows are copied whole
 * (`copyRow`), as a writer copies them, whatever columns the schema has.
 */
import { createHash } from 'node:crypto'
import type { AuthResponse, ForkResponse, RefreshResponse, ServerAppConfig } from '@latch/shared'
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { type RawBuilder, sql } from 'kysely'
import { afterEach, expect, test } from 'vitest'
import { frameDevice } from './testing/frame-fetch.ts'
import { describeBackends, freshIp, type TestServer } from './testing/test-server.ts'
import { SoftAuthenticator } from './testing/webauthn.ts'
import { type Receiver, startReceiver } from './testing/webhook-receiver.ts'
import { PASSCODE_FAILURES_BEFORE_SIGN_IN } from './wallets/passcode.ts'
import { addEndpoint } from './webhooks/endpoints.ts'
import { createWebhookWorker } from './webhooks/worker.ts'

const MODAL = 'https://auth.example.test'

let n = 0
const email = (who: string) => `${who}.${++n}.${Date.now()}@example.com`

const receivers: Receiver[] = []
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})

/**
 * Inserts a copy of the rows `where` selects with `patch` laid over them: one statement, as a
 * writer copies a row (its MAC, if it has one, comes along unchanged).
 */
async function copyRow(
  s: TestServer,
  table: string,
  where: RawBuilder<unknown>,
  patch: Record<string, unknown>,
): Promise<void> {
  await sql`INSERT INTO ${sql.table(table)}
    SELECT (jsonb_populate_record(NULL::${sql.table(table)}, to_jsonb(x) || ${JSON.stringify(patch)}::jsonb)).*
    FROM ${sql.table(table)} x WHERE ${where}`.execute(s.deps.db)
}

/** The answer's error code, or 'ok'. */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p
    return 'ok'
  } catch (e) {
    const text = (e as Error).message ?? ''
    const code = /"code":"([a-z_]+)"/.exec(text)?.[1] ?? (e as { code?: string }).code
    return code ?? text
  }
}

describeBackends(
  'a database writer without the server secret',
  (get) => {
    const newApp = (input: Partial<{ allowedOrigins: string[] }> = {}) =>
      get().newApp({ loginMethods: ['email', 'passkey'], ...input })

    /** A user of the app who signed in by e-mail. */
    async function signedIn(app: ServerAppConfig, who: string) {
      const address = email(who)
      const auth = await get().emailLogin(app.id, address)
      return { address, auth, userId: auth.user.id }
    }

    const accountRow = (s: TestServer, address: string) =>
      s.deps.db
        .selectFrom('linked_accounts')
        .select(['id', 'user_id'])
        .where('identifier', '=', address)
        .executeTakeFirstOrThrow()

    /** The id of the user's one session. */
    const sessionIdOf = async (s: TestServer, userId: string) =>
      (
        await s.deps.db
          .selectFrom('sessions')
          .select('id')
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow()
      ).id

    const refresh = (appId: string, token: string) =>
      get().request<AuthResponse>('/sessions', { appId, body: { refresh_token: token } })

    test('security: a linked account inserted for the victim with the writer’s e-mail signs in as nobody: refused, logged, the victim not reached', async () => {
      const s = get()
      const app = await newApp()
      const victim = await signedIn(app, 'victim')
      const writer = email('writer')
      const own = await accountRow(s, victim.address)
      await copyRow(s, 'linked_accounts', sql`id = ${own.id}`, {
        id: 'planted0account0row0',
        identifier: writer,
        data: { type: 'email', address: writer, verifiedAt: new Date().toISOString() },
      })
      expect(await outcome(s.emailLogin(app.id, writer))).toBe('account_record_invalid')
      expect(s.logs.join('\n')).toContain('refused linked account planted0account0row0')
      // The victim signs in as before, and the planted address is none of theirs.
      const again = await s.emailLogin(app.id, victim.address)
      expect(again.user.id).toBe(victim.userId)
      expect(JSON.stringify(again.user.linkedAccounts)).not.toContain(writer)
    })

    test('security: an identity moved to another user, or to another app’s user, signs in as nobody', async () => {
      const s = get()
      const app = await newApp()
      const other = await newApp()
      const victim = await signedIn(app, 'victim')
      const elsewhere = await signedIn(other, 'victim')
      const writer = await signedIn(app, 'writer')
      const row = await accountRow(s, writer.address)
      await sql`UPDATE linked_accounts SET user_id = ${victim.userId} WHERE id = ${row.id}`.execute(
        s.deps.db,
      )
      expect(await outcome(s.emailLogin(app.id, writer.address))).toBe('account_record_invalid')
      await sql`UPDATE linked_accounts SET app_id = ${other.id}, user_id = ${elsewhere.userId}
        WHERE id = ${row.id}`.execute(s.deps.db)
      expect(await outcome(s.emailLogin(other.id, writer.address))).toBe('account_record_invalid')
      // The victims' own sign-ins are untouched.
      expect((await s.emailLogin(app.id, victim.address)).user.id).toBe(victim.userId)
      expect((await s.emailLogin(other.id, elsewhere.address)).user.id).toBe(elsewhere.userId)
    })

    test('security: a session moved to the victim, a session row copied, a refresh token of the writer’s choosing: none refreshes; the victim’s session still does', async () => {
      const s = get()
      const app = await newApp()
      const victim = await signedIn(app, 'victim')
      const { sid } = JSON.parse(
        Buffer.from(victim.auth.token.split('.')[1] ?? '', 'base64url').toString(),
      ) as { sid: string }

      // The writer's own session, moved to the victim's user.
      const moved = await signedIn(app, 'writer')
      const movedSid = await sessionIdOf(s, moved.userId)
      await sql`UPDATE sessions SET user_id = ${victim.userId} WHERE id = ${movedSid}`.execute(
        s.deps.db,
      )
      const first = await refresh(app.id, moved.auth.refresh_token)
      expect(first.status).toBe(401)
      expect(first.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })

      // The victim's session row copied under a new id, the writer's token moved to the copy.
      const copier = await signedIn(app, 'writer')
      const copierSid = await sessionIdOf(s, copier.userId)
      await copyRow(s, 'sessions', sql`id = ${sid}`, {
        id: 'copiedsession0000000000x',
        family_id: 'copiedsession0000000000x',
      })
      await sql`UPDATE refresh_tokens SET session_id = 'copiedsession0000000000x'
        WHERE session_id = ${copierSid}`.execute(s.deps.db)
      expect((await refresh(app.id, copier.auth.refresh_token)).status).toBe(401)

      // A token the writer chose, stored as its SHA-256 for the victim's own session.
      const chosen = `${sid}.chosen-by-the-writer-0123456789abcdefghijklmnop`
      await copyRow(s, 'refresh_tokens', sql`session_id = ${sid}`, {
        hash: createHash('sha256').update(chosen).digest('hex'),
        rotated_at: null,
        child_hash: null,
        child_sealed: null,
      })
      expect((await refresh(app.id, chosen)).status).toBe(401)

      // The victim's own token still refreshes their session.
      const own = await refresh(app.id, victim.auth.refresh_token)
      expect(own.status).toBe(200)
      expect(own.body.user.id).toBe(victim.userId)
    })

    test('security: a fork token pointed at the victim’s session, or redeemed from a session moved to the victim, opens no session; a genuine fork still does', async () => {
      const s = get()
      const app = await newApp()
      const victim = await signedIn(app, 'victim')
      const victimSid = await sessionIdOf(s, victim.userId)
      const fork = async (refreshToken: string) => {
        const forked = await s.request<ForkResponse>('/sessions/fork', {
          appId: app.id,
          ip: freshIp(),
          body: { refresh_token: refreshToken },
        })
        expect(forked.status).toBe(200)
        return forked.body.new_session_refresh_token
      }
      const redeem = (token: string) =>
        s.request<RefreshResponse>('/sessions/fork/recover', {
          appId: app.id,
          ip: freshIp(),
          body: { refresh_token: token },
        })
      const sessionsOf = async (userId: string) =>
        (
          await s.deps.db
            .selectFrom('sessions')
            .select('id')
            .where('user_id', '=', userId)
            .execute()
        ).length

      // The writer's own fork token, pointed at the victim's session.
      const writer = await signedIn(app, 'writer')
      const repointed = await fork(writer.auth.refresh_token)
      await sql`UPDATE fork_tokens SET session_id = ${victimSid}
        WHERE session_id <> ${victimSid} AND app_id = ${app.id}`.execute(s.deps.db)
      const first = await redeem(repointed)
      expect(first.status).toBe(401)
      expect(first.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
      expect(s.logs.join('\n')).toContain('refused fork token for session')

      // The writer's own session, moved to the victim, then forked with the writer's token.
      const mover = await signedIn(app, 'writer')
      const moved = await fork(mover.auth.refresh_token)
      await sql`UPDATE sessions SET user_id = ${victim.userId}
        WHERE user_id = ${mover.userId}`.execute(s.deps.db)
      const second = await redeem(moved)
      expect(second.status).toBe(401)
      expect(second.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
      expect(s.logs.join('\n')).toMatch(/refused session/)
      // The victim gained no session from either (their own, and the moved one).
      expect(await sessionsOf(victim.userId)).toBe(2)

      // The victim's own fork opens a session of theirs.
      const own = await redeem(await fork(victim.auth.refresh_token))
      expect(own.status).toBe(200)
      expect(own.body.user.id).toBe(victim.userId)
    })

    test('security: a passkey moved to the victim (the writer’s public key on the victim’s user) signs in as nobody, and its counter does not move', async () => {
      const s = get()
      const app = await newApp()
      const victim = await signedIn(app, 'victim')
      const device = new SoftAuthenticator(MODAL)
      const b = { secret: 'b'.repeat(43) }
      const hash = createHash('sha256').update(b.secret).digest('base64url')
      const ceremony = async (kind: 'register' | 'authenticate') => {
        const res = await s.request<{ options: never }>(`/passkeys/${kind}/options`, {
          appId: app.id,
          body: { browser_hash: hash },
          ip: freshIp(),
        })
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        const credential =
          kind === 'register' ? device.create(res.body.options) : device.get(res.body.options)
        return s.request<AuthResponse>(`/passkeys/${kind}`, {
          appId: app.id,
          body: { credential, browser_secret: b.secret },
          ip: freshIp(),
        })
      }
      const signUp = await ceremony('register')
      expect(signUp.status, JSON.stringify(signUp.body)).toBe(200)
      const writerId = signUp.body.user.id
      await sql`UPDATE passkeys SET user_id = ${victim.userId} WHERE user_id = ${writerId}`.execute(
        s.deps.db,
      )
      await sql`UPDATE linked_accounts SET user_id = ${victim.userId}
        WHERE user_id = ${writerId} AND type = 'passkey'`.execute(s.deps.db)
      const before = await s.deps.db
        .selectFrom('passkeys')
        .select('counter')
        .where('user_id', '=', victim.userId)
        .executeTakeFirstOrThrow()
      const res = await ceremony('authenticate')
      expect(res.status).toBe(409)
      expect(res.body).toMatchObject({ error: { code: 'account_record_invalid' } })
      expect(JSON.stringify(res.body)).not.toContain(victim.userId)
      const after = await s.deps.db
        .selectFrom('passkeys')
        .select('counter')
        .where('user_id', '=', victim.userId)
        .executeTakeFirstOrThrow()
      expect(after).toEqual(before)
      expect(s.logs.join('\n')).toMatch(/refused passkey/)
    })

    test('security: a webhook endpoint’s URL changed in the database gets no delivery; the attempt is recorded as refused', async () => {
      const s = get()
      const app = await newApp()
      const [legit, writer] = [await startReceiver(), await startReceiver()]
      receivers.push(legit, writer)
      const endpoint = await addEndpoint(s.deps, app.id, { url: legit.url, events: 'user.created' })
      await sql`UPDATE webhook_endpoints SET url = ${writer.url} WHERE id = ${endpoint.id}`.execute(
        s.deps.db,
      )
      await s.emailLogin(app.id, email('someone'))
      const worker = createWebhookWorker(s.deps)
      for (let i = 0; i < 20 && (await worker.runOnce()) > 0; i++) {}
      expect(writer.received).toEqual([])
      expect(legit.received).toEqual([])
      const delivery = await s.deps.db
        .selectFrom('webhook_deliveries')
        .select(['status', 'last_error'])
        .where('endpoint_id', '=', endpoint.id)
        .executeTakeFirstOrThrow()
      expect(delivery.last_error).toContain('not written with this server secret')
      await s.deps.db.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute()
    })

    test('security: an app’s allowed origins changed in the database are not honoured: the modal is told none', async () => {
      const s = get()
      const app = await newApp({ allowedOrigins: ['https://shop.example'] })
      await sql`UPDATE apps SET allowed_origins = '["https://shop.example","https://evil.example"]'::jsonb
        WHERE id = ${app.id}`.execute(s.deps.db)
      const res = await s.request<ServerAppConfig>(`/apps/${app.id}`, { method: 'GET' })
      expect(res.status).toBe(200)
      expect(res.body.allowedOrigins).toEqual([])
      expect(s.logs.join('\n')).toContain(`refused app origins ${app.id}`)
    })

    test('security: the wallet’s attempt state restored to an earlier one (with its own MAC) is refused: guesses are not unlimited', async () => {
      const s = get()
      const app = await newApp()
      const victim = await signedIn(app, 'victim')
      const phone = frameDevice(s, app.id)
      const { address } = await phone.create({
        accessToken: victim.auth.token,
        recoveryPin: 'Vict1m',
      })
      const guess = (pin: string) =>
        outcome(phone.recover({ address, accessToken: victim.auth.token, recoveryPin: pin }))
      expect(await guess('Wr0ng1')).toBe('invalid_recovery_pin')
      // The writer keeps the state after one failure, and restores it after three more.
      const saved = await sql<Record<string, unknown>>`
        SELECT failed_attempts, total_failures, locked_until, evaluated_at, reauth_after, state_mac
        FROM wallets WHERE address = ${address.toLowerCase()}`.execute(s.deps.db)
      const state = saved.rows[0] as Record<string, unknown>
      // The counter row too, where the schema has one (a writer copies whatever there is).
      const counter = (
        await sql<Record<string, unknown>>`SELECT wallet_id, counter, mac FROM wallet_attempts
          WHERE wallet_id = (SELECT id FROM wallets WHERE address = ${address.toLowerCase()})`
          .execute(s.deps.db)
          .catch(() => ({ rows: [] }))
      ).rows[0] as Record<string, unknown> | undefined
      for (const pin of ['Wr0ng2', 'Wr0ng3', 'Wr0ng4']) {
        expect(await guess(pin)).toBe('invalid_recovery_pin')
      }
      await sql`UPDATE wallets SET failed_attempts = ${state.failed_attempts},
          total_failures = ${state.total_failures}, locked_until = ${state.locked_until},
          evaluated_at = ${state.evaluated_at}, reauth_after = ${state.reauth_after},
          state_mac = ${state.state_mac}
        WHERE address = ${address.toLowerCase()}`.execute(s.deps.db)
      expect(await guess('Wr0ng5')).toBe('wallet_record_invalid')
      expect(await guess('Vict1m')).toBe('wallet_record_invalid')
      // Its counter row restored with it: this process saw a later counter, and refuses it too.
      expect(counter).toBeDefined()
      await sql`UPDATE wallet_attempts SET counter = ${counter?.counter}, mac = ${counter?.mac}
        WHERE wallet_id = ${counter?.wallet_id}`.execute(s.deps.db)
      expect(await guess('Wr0ng6')).toBe('wallet_record_invalid')
      expect(s.logs.join('\n')).toContain('is not the one its counter names')
    })

    test('security: a sign-in time moved forward in the database is not the new sign-in that more passcode guesses need', async () => {
      const s = get()
      const app = await newApp()
      const victim = await signedIn(app, 'victim')
      const phone = frameDevice(s, app.id)
      const { address } = await phone.create({
        accessToken: victim.auth.token,
        recoveryPin: 'Vict1m',
      })
      // The same session throughout, its access token refreshed as the modal would.
      let pair = { token: victim.auth.token, refresh: victim.auth.refresh_token }
      const guess = async (pin: string) => {
        const res = await refresh(app.id, pair.refresh)
        pair = { token: res.body.token, refresh: res.body.refresh_token }
        return outcome(phone.recover({ address, accessToken: pair.token, recoveryPin: pin }))
      }
      const wallet = () =>
        s.deps.db
          .selectFrom('wallets')
          .select(['locked_until', 'total_failures'])
          .where('address', '=', address.toLowerCase())
          .executeTakeFirstOrThrow()
      for (let k = 1; k <= PASSCODE_FAILURES_BEFORE_SIGN_IN; k++) {
        await guess(`Wr0n${String(k).padStart(2, '0')}`)
        const { locked_until } = await wallet()
        if (locked_until) {
          s.clock.advance(Math.max(0, locked_until.getTime() - s.clock.now().getTime()) + 1000)
        }
      }
      expect((await wallet()).total_failures).toBe(PASSCODE_FAILURES_BEFORE_SIGN_IN)
      expect(await guess('Vict1m')).toBe('wallet_sign_in_required')
      // The session's sign-in moved to after the failures, as if the victim had signed in again.
      const later = new Date(s.clock.now().getTime() + 60_000)
      await sql`UPDATE sessions SET created_at = ${later}
        WHERE user_id = ${victim.userId}`.execute(s.deps.db)
      // The session no longer holds: its access token buys no guess, and nothing is counted.
      const answer = await outcome(
        phone.recover({ address, accessToken: pair.token, recoveryPin: 'Vict1m' }),
      )
      expect(answer).not.toBe('ok')
      expect(answer).not.toBe('invalid_recovery_pin')
      expect((await wallet()).total_failures).toBe(PASSCODE_FAILURES_BEFORE_SIGN_IN)
      expect((await refresh(app.id, pair.refresh)).status).toBe(401)
      expect(s.logs.join('\n')).toMatch(/refused session/)
    })

    test('security: a signing key’s public key replaced in the database verifies no token and is not published', async () => {
      const s = get()
      const app = await newApp()
      const victim = await signedIn(app, 'victim')
      const { sid } = JSON.parse(
        Buffer.from(victim.auth.token.split('.')[1] ?? '', 'base64url').toString(),
      ) as { sid: string }
      const writer = await generateKeyPair('ES256', { extractable: true })
      const pem = await exportSPKI(writer.publicKey)
      const next = await s.deps.db
        .selectFrom('signing_keys')
        .select('kid')
        .where('app_id', '=', app.id)
        .where('status', '=', 'next')
        .executeTakeFirstOrThrow()
      const jwk = {
        ...(await exportJWK(writer.publicKey)),
        kid: next.kid,
        alg: 'ES256',
        use: 'sig',
      }
      await sql`UPDATE signing_keys SET public_pem = ${pem}, public_jwk = ${JSON.stringify(jwk)}::jsonb
        WHERE kid = ${next.kid}`.execute(s.deps.db)
      // The keys are read again (as after the cache's minutes, or a rotation by another process).
      await s.deps.keys.ensureKeys(s.deps.db, app.id)
      const iat = Math.floor(s.clock.now().getTime() / 1000)
      const forged = await new SignJWT({ sid })
        .setProtectedHeader({ alg: 'ES256', kid: next.kid, typ: 'JWT' })
        .setIssuer(s.deps.config.issuer)
        .setAudience(app.id)
        .setSubject(victim.userId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 600)
        .sign(writer.privateKey)
      await expect(s.deps.keys.verifyAccessToken(app.id, forged)).rejects.toMatchObject({
        code: 'not_authenticated',
      })
      const published = await s.request<{ keys: { kid: string; x: string }[] }>(
        `/apps/${app.id}/jwks.json`,
        { method: 'GET' },
      )
      expect(JSON.stringify(published.body)).not.toContain(jwk.x as string)
      // The genuine key still verifies the victim's token.
      await expect(s.deps.keys.verifyAccessToken(app.id, victim.auth.token)).resolves.toMatchObject(
        {
          sub: victim.userId,
        },
      )
      expect(s.logs.join('\n')).toContain(`refused signing key ${app.id}/${next.kid}`)
    })
  },
  { LATCH_MODAL_ORIGIN: MODAL, LATCH_PUBLIC_URL: 'https://api.example.test' },
)
