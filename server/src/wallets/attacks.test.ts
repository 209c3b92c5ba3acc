/**
 * The wallet API played as an attacker, on PGlite and PostgreSQL. Each attacker of the threat
 * table in wallet-frame/README.md that holds something short of the browser where the user
 * signed in: the access token (the host page, its scripts, its backend, its logs), forged
 * browser headers, another session's credential, a revoked session, write access to the
 * database without the server secret. Each gets no share, no ciphertext, no key, and leaves the
 * wallet as it was; the control, the frame's own requests, still works.
 */
import {
  type AuthResponse,
  type WalletCreationParts,
  walletCreationDigest,
  walletCreationMessage,
} from '@latch/shared'
import { addressOf, newPrivateKey, sealShare, splitKey, toHex } from '@latch/wallet-frame'
import { privateKeyToAccount } from 'viem/accounts'
import { expect, test } from 'vitest'
import { REFRESH_COOKIE_PREFIX } from '../sessions/refresh-cookie.ts'
import { frameDevice } from '../testing/frame-fetch.ts'
import { describeBackends, type TestServer } from '../testing/test-server.ts'
import { walletCredentialName } from './credential.ts'
import { PASSCODE_FAILURES_BEFORE_SIGN_IN } from './passcode.ts'

let n = 0
const email = () => `attack.${++n}.${Date.now()}@example.com`

const device = frameDevice

/** Every route that releases or stores key material, with a body that would pass its checks. */
function routes(address: string): [string, unknown][] {
  const blinded = 'e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76'
  return [
    ['/wallets/challenge', {}],
    ['/wallets/info', { address }],
    ['/wallets/shares', { address }],
    ['/wallets/recover', { address }],
    ['/wallets/passcode/begin', { blinded }],
    ['/wallets/passcode/evaluate', { address, blinded }],
    ['/wallets/passcode/verify', { address, verifier: '00'.repeat(32) }],
    ['/wallets', { address }],
    ['/wallets/passkey/options', {}],
    ['/wallets/passkey/add', { address }],
    ['/wallets/passkey/recover', { address }],
  ]
}

/** The wallet's row as it is stored: any change by a refused request shows here. */
async function snapshot(s: TestServer, address: string) {
  return s.deps.db
    .selectFrom('wallets')
    .selectAll()
    .where('address', '=', address.toLowerCase())
    .executeTakeFirstOrThrow()
}

/** What a body must never hold: a share, a recovery ciphertext, a recovery key. */
function holdsKeyMaterial(body: unknown): boolean {
  const text = JSON.stringify(body)
  return /authShare|ciphertext|"key"|[0-9a-f]{66}/i.test(text)
}

describeBackends('wallet attacks', (get) => {
  async function victim(method: 'latch' | 'passcode' = 'latch') {
    const s = get()
    const app = await s.newApp()
    const auth = await s.emailLogin(app.id, email())
    const { address } = await device(s, app.id).create({
      accessToken: auth.token,
      ...(method === 'passcode' ? { recoveryPin: 'Vict1m' } : {}),
    })
    return { s, appId: app.id, auth, address }
  }

  test('security: the access token alone — from outside a browser, with forged fetch metadata and Origin, with another session’s or a revoked session’s credential — gets nothing from any wallet route and changes nothing', async () => {
    const { s, appId, auth, address } = await victim()
    const before = await snapshot(s, address)
    // The same user signed in elsewhere (another browser): its credential names its own session.
    const elsewhere = await s.emailLogin(appId, `other.${email()}`)
    const otherCookie = s.walletCookie(elsewhere.token) ?? ''
    const own = `http://localhost`
    const attempts: { name: string; headers: Record<string, string> }[] = [
      { name: 'no browser headers', headers: {} },
      { name: 'forged same-origin', headers: { 'sec-fetch-site': 'same-origin', origin: own } },
      { name: 'host page fetch', headers: { 'sec-fetch-site': 'cross-site' } },
      { name: 'modal fetch', headers: { 'sec-fetch-site': 'same-site' } },
      {
        name: 'forged, with a guessed credential',
        headers: {
          'sec-fetch-site': 'same-origin',
          cookie: `${walletCredentialName('x')}=${'A'.repeat(43)}`,
        },
      },
      {
        name: 'forged, with another session’s credential under this session’s name',
        headers: {
          'sec-fetch-site': 'same-origin',
          cookie: otherCookie.replace(
            /^[^=]+/,
            walletCredentialName(JSON.parse(atob(auth.token.split('.')[1] ?? '')).sid),
          ),
        },
      },
    ]
    for (const { name, headers } of attempts) {
      for (const [path, body] of routes(address)) {
        const res = await s.request(path, { appId, token: auth.token, headers, body })
        expect([401, 403], `${name} ${path}: ${res.status}`).toContain(res.status)
        expect(holdsKeyMaterial(res.body), `${name} ${path}`).toBe(false)
      }
    }
    // The other session's own credential with its own token works for its own session, but it is
    // not this session: with this session's token it is refused.
    const crossed = await s.request('/wallets/shares', {
      appId,
      token: auth.token,
      headers: { 'sec-fetch-site': 'same-origin', cookie: otherCookie },
      body: { address },
    })
    expect(crossed.status).toBe(401)
    expect(crossed.body).toMatchObject({ error: { code: 'wallet_sign_in_required' } })
    expect(await snapshot(s, address)).toEqual(before)

    // The control: the frame's own request in the browser that signed in.
    const control = await device(s, appId).recover({ address, accessToken: auth.token })
    expect(control).toEqual({ address })

    // Logout ends the credential with the session.
    const out = await s.request('/sessions/logout', {
      appId,
      token: auth.token,
      body: { refresh_token: auth.refresh_token },
    })
    expect(out.headers.getSetCookie().some((c) => /Max-Age=0/.test(c))).toBe(true)
    const revoked = await s.request('/wallets/shares', {
      appId,
      token: auth.token,
      headers: { 'sec-fetch-site': 'same-origin', cookie: s.walletCookie(auth.token) ?? '' },
      body: { address },
    })
    expect(revoked.status).toBe(401)
  })

  test('security: a refresh never issues the wallet credential — a stolen refresh token buys access tokens, not the wallet', async () => {
    const { s, appId, auth, address } = await victim()
    const refreshed = await s.request<AuthResponse>('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(refreshed.status).toBe(200)
    // Only the rotated refresh cookie: no wallet credential.
    expect(
      refreshed.headers.getSetCookie().filter((c) => !c.startsWith(REFRESH_COOKIE_PREFIX)),
    ).toEqual([])
    const thief = await s.request('/wallets/recover', {
      appId,
      token: refreshed.body.token,
      headers: { 'sec-fetch-site': 'same-origin' },
      body: { address },
    })
    expect(thief.status).toBe(401)
    expect(holdsKeyMaterial(thief.body)).toBe(false)
  })

  test('security: the sign-in sets the credential HttpOnly, Secure, SameSite=None, Partitioned, host-only, for the session’s life', async () => {
    const s = get()
    const app = await s.newApp()
    await s.request('/passwordless/init', { appId: app.id, body: { email: 'cookie@example.com' } })
    const code = await s.smtp.waitForCode('cookie@example.com', { timeoutMs: 10_000 })
    const res = await s.request<AuthResponse>('/passwordless/authenticate', {
      appId: app.id,
      body: { email: 'cookie@example.com', code },
    })
    // The wallet credential, beside the refresh cookie (sessions.test.ts checks that one).
    const [cookie, ...more] = res.headers
      .getSetCookie()
      .filter((c) => !c.startsWith(REFRESH_COOKIE_PREFIX))
    expect(more).toEqual([])
    expect(cookie).toMatch(
      /^__Host-latch-w-[a-z0-9]+=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=None; Partitioned$/,
    )
    expect(cookie).not.toContain('Domain')
  })

  test('security: a database writer without the secret — a wallet row moved to another user, or its sealed values swapped — opens nothing', async () => {
    const { s, appId, address } = await victim()
    // The attacker is a user of the same app with a wallet of their own, in their own browser.
    const attacker = await s.emailLogin(appId, email())
    const mine = await device(s, appId).create({ accessToken: attacker.token })
    const victimRow = await snapshot(s, address)
    // 1. The victim's row handed to the attacker (their own row out of the way).
    await s.deps.db
      .deleteFrom('wallets')
      .where('address', '=', mine.address.toLowerCase())
      .execute()
    await s.deps.db
      .updateTable('wallets')
      .set({ user_id: attacker.user.id })
      .where('id', '=', victimRow.id)
      .execute()
    for (const [path] of routes(address).filter(([p]) =>
      ['/wallets/info', '/wallets/shares', '/wallets/recover'].includes(p),
    )) {
      const res = await s.request(path, {
        appId,
        token: attacker.token,
        headers: { 'sec-fetch-site': 'same-origin', cookie: s.walletCookie(attacker.token) ?? '' },
        body: { address },
      })
      expect(res.status, path).toBe(409)
      expect(res.body).toMatchObject({ error: { code: 'wallet_record_invalid' } })
      expect(holdsKeyMaterial(res.body)).toBe(false)
    }
    // 2. The victim's sealed values copied into a row the attacker owns.
    await s.deps.db
      .updateTable('wallets')
      .set({ user_id: victimRow.user_id })
      .where('id', '=', victimRow.id)
      .execute()
    const attackerKey = newPrivateKey()
    const planted = addressOf(attackerKey)
    await s.deps.db
      .insertInto('wallets')
      .values({
        ...victimRow,
        id: 'attackerswallet00000',
        user_id: attacker.user.id,
        address: planted.toLowerCase(),
      })
      .execute()
    const copied = await s.request('/wallets/recover', {
      appId,
      token: attacker.token,
      headers: { 'sec-fetch-site': 'same-origin', cookie: s.walletCookie(attacker.token) ?? '' },
      body: { address: planted },
    })
    expect(copied.status).toBe(409)
    expect(holdsKeyMaterial(copied.body)).toBe(false)
    expect(s.logs.some((l) => l.includes('does not open for its row'))).toBe(true)
  })

  test('security: a database writer without the secret cannot reset the passcode attempt state', async () => {
    const { s, appId, auth, address } = await victim('passcode')
    const phone = device(s, appId)
    for (let k = 0; k < 5; k++) {
      await phone
        .recover({ address, accessToken: auth.token, recoveryPin: `Wr0ng${k}` })
        .catch(() => undefined)
    }
    const locked = await snapshot(s, address)
    expect(locked.locked_until).not.toBeNull()
    await s.deps.db
      .updateTable('wallets')
      .set({ failed_attempts: 0, locked_until: null, total_failures: 0 })
      .where('id', '=', locked.id)
      .execute()
    const res = await phone
      .recover({ address, accessToken: auth.token, recoveryPin: 'Vict1m' })
      .then(
        () => null,
        (e: { code?: string }) => e.code,
      )
    expect(res).toBe('wallet_record_invalid')
  })

  test('refusal: after 10 wrong passcodes in all, a guess needs a sign-in made after them — waiting out the locks is not enough', async () => {
    const { s, appId, auth, address } = await victim('passcode')
    const phone = device(s, appId)
    // The same session throughout, its access token refreshed as the modal would.
    let pair = { token: auth.token, refresh: auth.refresh_token }
    const refreshed = async () => {
      const res = await s.request<AuthResponse>('/sessions', {
        appId,
        body: { refresh_token: pair.refresh },
      })
      pair = { token: res.body.token, refresh: res.body.refresh_token }
      return pair.token
    }
    const guess = (pin: string, token: string) =>
      phone.recover({ address, accessToken: token, recoveryPin: pin }).then(
        () => 'ok',
        (e: { code?: string }) => e.code,
      )
    for (let k = 1; k <= PASSCODE_FAILURES_BEFORE_SIGN_IN; k++) {
      // From the fifth, a wrong passcode also locks recovery (the answer may say either).
      const answer = await guess(`Wr0n${String(k).padStart(2, '0')}`, await refreshed())
      if (k < 5) expect(answer).toBe('invalid_recovery_pin')
      else expect(['invalid_recovery_pin', 'recovery_locked']).toContain(answer)
      // Each lock waited out.
      const { locked_until } = await snapshot(s, address)
      if (locked_until)
        s.clock.advance(Math.max(0, locked_until.getTime() - s.clock.now().getTime()) + 1000)
    }
    const before = await snapshot(s, address)
    expect(before.total_failures).toBe(PASSCODE_FAILURES_BEFORE_SIGN_IN)
    // The same session, every lock over: refused, and nothing counted.
    expect(await guess('Vict1m', await refreshed())).toBe('wallet_sign_in_required')
    expect(await snapshot(s, address)).toEqual(before)
    // A fresh sign-in (the user's own e-mail code) may try again, and the right passcode works.
    const fresh = await s.emailLogin(appId, (await userEmail(s, auth)) ?? '')
    expect(await guess('Vict1m', fresh.token)).toBe('ok')
  })

  test('refusal: a creation without the key’s proof — a planted address, someone else’s address, a proof replayed by another user, a proof of other shares — is refused and stores nothing', async () => {
    const s = get()
    const app = await s.newApp()
    const appId = app.id
    const mallory = await s.emailLogin(appId, email())
    const alice = await s.emailLogin(appId, email())
    const aliceKey = newPrivateKey()
    const aliceAddress = addressOf(aliceKey)
    const shares = await splitKey(aliceKey)
    const body = {
      address: aliceAddress,
      authShare: toHex(shares.auth),
      recovery: {
        method: 'latch',
        key: toHex(new Uint8Array(32).fill(1)),
        ciphertext: toHex(
          await sealShare(new Uint8Array(32).fill(1), shares.recovery, aliceAddress),
        ),
      },
    }
    const asFrame = (token: string) => ({
      'sec-fetch-site': 'same-origin',
      cookie: s.walletCookie(token) ?? '',
    })
    const challenge = async (token: string) =>
      (
        await s.request<{ challenge: string }>('/wallets/challenge', {
          appId,
          token,
          headers: asFrame(token),
          body: {},
        })
      ).body.challenge
    const sign = async (key: Uint8Array, parts: WalletCreationParts) =>
      privateKeyToAccount(`0x${toHex(key)}`).signMessage({
        message: walletCreationMessage(parts.address, await walletCreationDigest(parts)),
      })
    const create = (token: string, proof: { challenge: string; signature: string }) =>
      s.request('/wallets', { appId, token, headers: asFrame(token), body: { ...body, proof } })

    // Mallory claims Alice's address, signing with her own key.
    const c1 = await challenge(mallory.token)
    const squat = await create(mallory.token, {
      challenge: c1,
      signature: await sign(newPrivateKey(), { ...body, challenge: c1 }),
    })
    expect(squat.status).toBe(400)
    expect(squat.body).toMatchObject({
      error: { message: 'Request body is invalid: proof: not signed by the key of this address' },
    })
    // Alice's own proof, made for Alice, replayed by Mallory.
    const c2 = await challenge(alice.token)
    const aliceProof = {
      challenge: c2,
      signature: await sign(aliceKey, { ...body, challenge: c2 }),
    }
    expect((await create(mallory.token, aliceProof)).body).toMatchObject({
      error: { message: 'Request body is invalid: proof: not a challenge of this user' },
    })
    // A proof of other shares than those sent.
    const c3 = await challenge(alice.token)
    const otherShares = await sign(aliceKey, { ...body, authShare: '00'.repeat(33), challenge: c3 })
    expect((await create(alice.token, { challenge: c3, signature: otherShares })).status).toBe(400)
    // Not a signature at all; an expired challenge.
    expect(
      (await create(alice.token, { challenge: c3, signature: `0x${'00'.repeat(65)}` })).status,
    ).toBe(400)
    s.clock.advance(11 * 60_000)
    const stale = await create(alice.token, aliceProof)
    expect(stale.body).toMatchObject({
      error: { message: 'Request body is invalid: proof: the challenge has expired' },
    })
    const stored = await s.deps.db
      .selectFrom('wallets')
      .select('id')
      .where('address', '=', aliceAddress.toLowerCase())
      .execute()
    expect(stored).toEqual([])
    // The control: Alice's own, fresh proof is accepted.
    const c4 = await challenge(alice.token)
    const ok = await create(alice.token, {
      challenge: c4,
      signature: await sign(aliceKey, { ...body, challenge: c4 }),
    })
    expect(ok.status).toBe(200)
  })
})

async function userEmail(s: TestServer, auth: AuthResponse): Promise<string | undefined> {
  const row = await s.deps.db
    .selectFrom('linked_accounts')
    .select('identifier')
    .where('user_id', '=', auth.user.id)
    .where('type', '=', 'email')
    .executeTakeFirst()
  return row?.identifier
}
