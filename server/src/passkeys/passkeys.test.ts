import { createHash, randomBytes } from 'node:crypto'
import type { AuthResponse, PasskeyAccount, User } from '@latch/shared'
import { describe, expect, test } from 'vitest'
import { deleteUser } from '../admin/users.ts'
import { loadConfig } from '../config.ts'
import { type Answer, describeBackends, freshIp } from '../testing/test-server.ts'
import { SoftAuthenticator } from '../testing/webauthn.ts'
import { defaultRpId, resolveRpId } from './rp-id.ts'
import { PASSKEY_CHALLENGE_TTL_MS } from './service.ts'

const MODAL = 'https://auth.example.test'
const RP_ID = 'example.test'

interface Creation {
  challenge: string
  rp: { id: string; name: string }
  user: { id: string; name: string }
  authenticatorSelection: Record<string, unknown>
  extensions: Record<string, unknown>
  excludeCredentials: { id: string }[]
}
interface Request {
  challenge: string
  rpId: string
  userVerification: string
}

/** A browser: its own binding secret per ceremony, as the modal makes them. */
function browserSecret(): { secret: string; hash: string } {
  const secret = randomBytes(32).toString('base64url')
  return { secret, hash: createHash('sha256').update(secret).digest('base64url') }
}

function passkeys(user: User): PasskeyAccount[] {
  return user.linkedAccounts.filter((a): a is PasskeyAccount => a.type === 'passkey')
}

describeBackends(
  'passkeys',
  (get) => {
    const newApp = () => get().newApp({ loginMethods: ['email', 'passkey'] })

    function expectRefused(res: Answer<unknown>, code: string, status: number): void {
      expect(res.body, JSON.stringify(res.body)).toMatchObject({ error: { code } })
      expect(res.status).toBe(status)
    }

    async function options<T>(
      appId: string,
      kind: 'register' | 'authenticate',
      hash: string,
      token?: string,
    ): Promise<T> {
      const res = await get().request<{ options: T }>(`/passkeys/${kind}/options`, {
        appId,
        body: { browser_hash: hash },
        ip: freshIp(),
        ...(token ? { token } : {}),
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      return res.body.options
    }

    function finish<T = Record<string, unknown>>(
      path: '/passkeys/register' | '/passkeys/authenticate' | '/passkeys/link',
      appId: string,
      credential: unknown,
      secret: string,
      extra: { token?: string; name?: string } = {},
    ): Promise<Answer<T>> {
      return get().request<T>(path, {
        appId,
        body: { credential, browser_secret: secret, ...(extra.name ? { name: extra.name } : {}) },
        ip: freshIp(),
        ...(extra.token ? { token: extra.token } : {}),
      })
    }

    /** Sign-up with a new passkey on `device`. */
    async function signUp(appId: string, device: SoftAuthenticator, name?: string) {
      const b = browserSecret()
      const opts = await options<Creation>(appId, 'register', b.hash)
      const res = await finish<AuthResponse>(
        '/passkeys/register',
        appId,
        device.create(opts),
        b.secret,
        name ? { name } : {},
      )
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      return res
    }

    async function signInWith(appId: string, device: SoftAuthenticator) {
      const b = browserSecret()
      const opts = await options<Request>(appId, 'authenticate', b.hash)
      return finish<AuthResponse>('/passkeys/authenticate', appId, device.get(opts), b.secret)
    }

    test('sign-up: the options ask for a discoverable, verified credential with PRF on the modal origin’s RP ID; the answer signs in a new user with the wallet credential cookie', async () => {
      const app = await newApp()
      const b = browserSecret()
      const opts = await options<Creation>(app.id, 'register', b.hash)
      expect(opts.rp.id).toBe(RP_ID)
      expect(opts.authenticatorSelection).toMatchObject({
        residentKey: 'required',
        userVerification: 'required',
      })
      expect(opts.extensions).toMatchObject({ prf: {} })
      const device = new SoftAuthenticator(MODAL)
      const res = await finish<AuthResponse>(
        '/passkeys/register',
        app.id,
        device.create(opts),
        b.secret,
        { name: 'Laptop' },
      )
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.is_new_user).toBe(true)
      expect(passkeys(res.body.user)).toEqual([
        expect.objectContaining({ type: 'passkey', name: 'Laptop' }),
      ])
      expect(get().walletCookie(res.body.token)).toBeDefined()
      const row = await get()
        .deps.db.selectFrom('passkeys')
        .selectAll()
        .where('app_id', '=', app.id)
        .executeTakeFirstOrThrow()
      expect(Number(row.counter)).toBe(0)
      expect(row.device_type).toBe('singleDevice')
      expect(row.backed_up).toBe(false)
    })

    test('sign-in: the same user, by a synced copy of the credential on another device; backup flags stored', async () => {
      const app = await newApp()
      const device = new SoftAuthenticator(MODAL, { counting: false, backedUp: true })
      const first = await signUp(app.id, device)
      const res = await signInWith(app.id, device.synced())
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.is_new_user).toBe(false)
      expect(res.body.user.id).toBe(first.body.user.id)
      expect(get().walletCookie(res.body.token)).toBeDefined()
      const row = await get()
        .deps.db.selectFrom('passkeys')
        .select(['backed_up', 'device_type', 'last_used_at'])
        .where('user_id', '=', first.body.user.id)
        .executeTakeFirstOrThrow()
      expect(row).toMatchObject({ backed_up: true, device_type: 'multiDevice' })
      expect(row.last_used_at).not.toBeNull()
    })

    test('refused: a replayed assertion (the challenge is used up)', async () => {
      const app = await newApp()
      const device = new SoftAuthenticator(MODAL)
      await signUp(app.id, device)
      const b = browserSecret()
      const opts = await options<Request>(app.id, 'authenticate', b.hash)
      const assertion = device.get(opts)
      const once = await finish('/passkeys/authenticate', app.id, assertion, b.secret)
      expect(once.status).toBe(200)
      expectRefused(
        await finish('/passkeys/authenticate', app.id, assertion, b.secret),
        'passkey_not_initialized',
        400,
      )
    })

    test('refused: an assertion made on another origin, and one without user verification', async () => {
      const app = await newApp()
      const device = new SoftAuthenticator(MODAL)
      await signUp(app.id, device)
      for (const ceremony of [{ origin: 'https://evil.example.test' }, { userVerified: false }]) {
        const b = browserSecret()
        const opts = await options<Request>(app.id, 'authenticate', b.hash)
        expectRefused(
          await finish('/passkeys/authenticate', app.id, device.get(opts, ceremony), b.secret),
          'passkey_verification_failed',
          401,
        )
      }
      expect(get().logs.some((l) => l.includes('assertion refused'))).toBe(true)
    })

    test('in the modal’s frame: an assertion made inside one of the app’s pages passes, inside another page is refused', async () => {
      const app = await newApp()
      const device = new SoftAuthenticator(MODAL)
      await signUp(app.id, device)
      const framed = async (topOrigin: string) => {
        const b = browserSecret()
        const opts = await options<Request>(app.id, 'authenticate', b.hash)
        return finish('/passkeys/authenticate', app.id, device.get(opts, { topOrigin }), b.secret)
      }
      expect((await framed('http://localhost:5173')).status).toBe(200)
      expectRefused(await framed('https://evil.example.test'), 'passkey_verification_failed', 401)
    })

    test('refused: a challenge issued to another browser, an expired one, one of another app', async () => {
      const app = await newApp()
      const other = await newApp()
      const device = new SoftAuthenticator(MODAL)
      await signUp(app.id, device)
      const asker = browserSecret()
      const opts = await options<Request>(app.id, 'authenticate', asker.hash)
      // Another browser holds the assertion but not the asking browser's secret.
      expectRefused(
        await finish('/passkeys/authenticate', app.id, device.get(opts), browserSecret().secret),
        'passkey_not_initialized',
        400,
      )
      const late = await options<Request>(app.id, 'authenticate', asker.hash)
      get().clock.advance(PASSKEY_CHALLENGE_TTL_MS + 1000)
      expectRefused(
        await finish('/passkeys/authenticate', app.id, device.get(late), asker.secret),
        'passkey_not_initialized',
        400,
      )
      const foreign = await options<Request>(other.id, 'authenticate', asker.hash)
      expectRefused(
        await finish('/passkeys/authenticate', app.id, device.get(foreign), asker.secret),
        'passkey_not_initialized',
        400,
      )
    })

    test('refused: an unknown credential, and a counter that went back', async () => {
      const app = await newApp()
      const stranger = new SoftAuthenticator(MODAL)
      stranger.create({
        challenge: 'x',
        rp: { id: RP_ID, name: 'x' },
        user: { id: randomBytes(8).toString('base64url'), name: 'x' },
      })
      expectRefused(await signInWith(app.id, stranger), 'passkey_verification_failed', 401)
      expect(get().logs.some((l) => l.includes('(unknown credential)'))).toBe(true)

      const device = new SoftAuthenticator(MODAL)
      await signUp(app.id, device)
      expect((await signInWith(app.id, device)).status).toBe(200)
      expect((await signInWith(app.id, device)).status).toBe(200)
      // A clone made earlier: its counter is behind the one the server saw last.
      const cred = device.credentials[0]
      if (!cred) throw new Error('no credential')
      cred.counter = 0
      expectRefused(await signInWith(app.id, device), 'passkey_verification_failed', 401)
      expect(get().logs.some((l) => /assertion refused \(.*counter/i.test(l))).toBe(true)
    })

    test('refused: a registration response for another origin, and a sign-up challenge presented to /link', async () => {
      const app = await newApp()
      const device = new SoftAuthenticator(MODAL)
      const b = browserSecret()
      const opts = await options<Creation>(app.id, 'register', b.hash)
      expectRefused(
        await finish(
          '/passkeys/register',
          app.id,
          device.create(opts, { origin: 'https://evil.example.test' }),
          b.secret,
        ),
        'passkey_verification_failed',
        401,
      )
      const user = await get().emailLogin(app.id, `pk.${Date.now()}@example.com`)
      const signedOut = await options<Creation>(app.id, 'register', b.hash)
      expectRefused(
        await finish('/passkeys/link', app.id, device.create(signedOut), b.secret, {
          token: user.token,
        }),
        'passkey_not_initialized',
        400,
      )
    })

    test('link several, rename and remove; the last sign-in method cannot be removed', async () => {
      const app = await newApp()
      const email = `pk.link.${Date.now()}@example.com`
      const signedIn = await get().emailLogin(app.id, email)
      const device = new SoftAuthenticator(MODAL)
      let user: User | undefined
      for (const name of ['Phone', 'Laptop']) {
        const b = browserSecret()
        const opts = await options<Creation>(app.id, 'register', b.hash, signedIn.token)
        expect(opts.user.name).toBe(email)
        const res = await finish<User>('/passkeys/link', app.id, device.create(opts), b.secret, {
          token: signedIn.token,
          name,
        })
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        user = res.body
      }
      if (!user) throw new Error('no user')
      const [phone, laptop] = passkeys(user)
      if (!phone || !laptop) throw new Error('two passkeys expected')
      expect([phone.name, laptop.name]).toEqual(['Phone', 'Laptop'])
      // The second registration excluded the first credential and kept the user handle.
      const third = await options<Creation>(
        app.id,
        'register',
        browserSecret().hash,
        signedIn.token,
      )
      expect(third.excludeCredentials.map((c) => c.id).sort()).toEqual(
        [phone.credentialId, laptop.credentialId].sort(),
      )

      const renamed = await get().request<User>('/passkeys/rename', {
        appId: app.id,
        body: { credential_id: phone.credentialId, name: 'Work phone' },
        token: signedIn.token,
      })
      expect(renamed.status).toBe(200)
      expect(passkeys(renamed.body).map((p) => p.name)).toEqual(['Work phone', 'Laptop'])

      // The linked passkey signs in as the e-mail user.
      const viaPasskey = await signInWith(app.id, device)
      expect(viaPasskey.body.user?.id).toBe(signedIn.user.id)

      const removed = await get().request<User>('/passkeys/unlink', {
        appId: app.id,
        body: { credential_id: laptop.credentialId },
        token: signedIn.token,
      })
      expect(removed.status).toBe(200)
      expect(passkeys(removed.body).map((p) => p.name)).toEqual(['Work phone'])
      const rows = await get()
        .deps.db.selectFrom('passkeys')
        .select('credential_id')
        .where('user_id', '=', signedIn.user.id)
        .execute()
      expect(rows.map((r) => r.credential_id)).toEqual([phone.credentialId])

      // A passkey-only user keeps their last passkey.
      const solo = await signUp(app.id, new SoftAuthenticator(MODAL))
      const only = passkeys(solo.body.user)[0]
      expectRefused(
        await get().request('/passkeys/unlink', {
          appId: app.id,
          body: { credential_id: only?.credentialId },
          token: solo.body.token,
        }),
        'last_account_unlink_forbidden',
        400,
      )
      // Another user's passkey is not found for this one.
      expectRefused(
        await get().request('/passkeys/rename', {
          appId: app.id,
          body: { credential_id: only?.credentialId, name: 'Mine now' },
          token: signedIn.token,
        }),
        'not_found',
        404,
      )
    })

    test('refused: a registration whose credential id is already registered (a sign-up may not take over its holder)', async () => {
      const app = await newApp()
      const device = new SoftAuthenticator(MODAL)
      const holder = await signUp(app.id, device)
      const existing = device.credentials[0]
      if (!existing) throw new Error('no credential')
      const attacker = new SoftAuthenticator(MODAL)
      const b = browserSecret()
      const opts = await options<Creation>(app.id, 'register', b.hash)
      // The attacker's own key, under the holder's credential id (learnt from a log, say).
      const id = existing.id.toString('base64url')
      const res = await finish(
        '/passkeys/register',
        app.id,
        attacker.create(opts, { credentialId: existing.id }),
        b.secret,
      )
      expectRefused(res, 'linked_to_another_user', 400)
      const users = await get()
        .deps.db.selectFrom('passkeys')
        .select('user_id')
        .where('credential_id', '=', id)
        .execute()
      expect(users.map((u) => u.user_id)).toEqual([holder.body.user.id])
    })

    test('a deleted user’s passkeys and pending challenges go with them', async () => {
      const app = await newApp()
      const solo = await signUp(app.id, new SoftAuthenticator(MODAL))
      // A link ceremony left unfinished: its challenge names the user.
      await options<Creation>(app.id, 'register', browserSecret().hash, solo.body.token)
      await deleteUser(get().deps.db, app.id, solo.body.user.id, get().clock.now())
      const left = await Promise.all([
        get()
          .deps.db.selectFrom('passkeys')
          .select('credential_id')
          .where('user_id', '=', solo.body.user.id)
          .execute(),
        get()
          .deps.db.selectFrom('passkey_challenges')
          .select('challenge_hash')
          .where('user_id', '=', solo.body.user.id)
          .execute(),
      ])
      expect(left).toEqual([[], []])
    })

    test('the method is off by default and refused while off', async () => {
      const app = await get().newApp()
      expect(app.passkeyAuth).toBe(false)
      expectRefused(
        await get().request('/passkeys/authenticate/options', {
          appId: app.id,
          body: { browser_hash: browserSecret().hash },
          ip: freshIp(),
        }),
        'method_not_available',
        403,
      )
    })
  },
  { LATCH_MODAL_ORIGIN: MODAL, LATCH_PUBLIC_URL: 'https://api.example.test' },
)

describe('RP ID', () => {
  test('default: the API host without its first label, when the modal origin is within it', () => {
    expect(defaultRpId('auth.example.com')).toBe('example.com')
    expect(defaultRpId('auth.example.co.uk')).toBe('example.co.uk')
    expect(defaultRpId('localhost')).toBe('localhost')
    expect(defaultRpId('127.0.0.1')).toBeNull()
    expect(
      resolveRpId({
        configured: null,
        publicUrl: 'https://api.example.com',
        modalOrigin: 'https://auth.example.com',
      }),
    ).toEqual({ rpId: 'example.com' })
    // A derived RP ID the modal is outside of leaves passkeys off rather than stopping the start.
    expect(
      resolveRpId({
        configured: null,
        publicUrl: 'https://api.example.com',
        modalOrigin: 'https://auth.other.com',
      }),
    ).toEqual({ rpId: null })
  })

  test('LATCH_PASSKEY_RP_ID: the start is refused when the modal origin is outside it', () => {
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: 'memory://',
      LATCH_SECRET: 'x'.repeat(40),
      LATCH_MODAL_ORIGIN: 'https://auth.example.com',
    }
    expect(loadConfig({ ...env, LATCH_PASSKEY_RP_ID: 'example.com' }).passkeyRpId).toBe(
      'example.com',
    )
    expect(() => loadConfig({ ...env, LATCH_PASSKEY_RP_ID: 'other.com' })).toThrow(/outside it/)
    expect(() => loadConfig({ ...env, LATCH_PASSKEY_RP_ID: 'https://example.com' })).toThrow(
      /domain name/,
    )
  })
})
