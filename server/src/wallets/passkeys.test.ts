/**
 * Recovery by passkey against the real API, on PGlite and PostgreSQL: the wallet frame's own
 * code (walletCore with its passkey sealing) and a software authenticator with PRF standing in
 * for the visitor's passkey (testing/authenticator.ts). A synced passkey is the same
 * authenticator on a second device.
 */
import {
  type ForkResponse,
  isLatchError,
  type RefreshResponse,
  type WalletAccount,
  type WalletPasskeyRecoverResponse,
} from '@latch/shared'
import { addressOf, combineShares, fromHex, openWithPasskey, toHex } from '@latch/wallet-frame'
import { sql } from 'kysely'
import { expect, test } from 'vitest'
import { loadConfig } from '../config.ts'
import { softAuthenticator } from '../testing/authenticator.ts'
import { frameDevice } from '../testing/frame-fetch.ts'
import {
  describeBackends,
  freshIp,
  type TestServer,
  type TestSignIn,
} from '../testing/test-server.ts'
import { MAX_WALLET_PASSKEYS, passkeyRpId } from './passkeys.ts'
import { openWalletRecord } from './records.ts'

let n = 0
const email = () => `passkey.${++n}.${Date.now()}@example.com`

async function refusal(p: Promise<unknown>) {
  try {
    await p
  } catch (e) {
    if (isLatchError(e)) return e
    throw e
  }
  throw new Error('expected a refusal')
}

/** A request of the wallet frame itself: same-origin, with the bearer's wallet credential. */
function frameRequest(s: TestServer, appId: string, token: string) {
  return <T>(path: string, body: unknown) =>
    s.request<T>(path, {
      appId,
      token,
      body,
      headers: { 'sec-fetch-site': 'same-origin', cookie: s.walletCookie(token) ?? '' },
    })
}

test('behavior: the RP ID is LATCH_PASSKEY_RP_ID, else the API host’s parent domain, else the host', () => {
  const at = (publicUrl: string | null, passkey: string | null, request = 'http://localhost/x') =>
    passkeyRpId({ publicUrl, passkeyRpId: passkey }, request)
  expect(at('https://api.example.com', null)).toBe('example.com')
  expect(at('https://auth.shop.example.co.uk', null)).toBe('shop.example.co.uk')
  expect(at('https://example.com', null)).toBe('example.com')
  expect(at(null, null, 'https://api.example.test/api/v1/wallets')).toBe('example.test')
  expect(at(null, null)).toBe('localhost')
  expect(at(null, null, 'http://127.0.0.1:8080/')).toBe('127.0.0.1')
  expect(at('https://api.example.com', 'api.example.com')).toBe('api.example.com')
  const env = { DATABASE_URL: 'memory://', LATCH_SECRET: 'x'.repeat(40) }
  expect(loadConfig({ ...env, LATCH_PASSKEY_RP_ID: 'Example.Test' }).passkeyRpId).toBe(
    'example.test',
  )
  expect(loadConfig(env).passkeyRpId).toBeNull()
  for (const bad of ['https://example.test', 'example.test:443', 'example.test/x', '*.example']) {
    expect(() => loadConfig({ ...env, LATCH_PASSKEY_RP_ID: bad }), bad).toThrow(
      /LATCH_PASSKEY_RP_ID must be a domain/,
    )
  }
})

describeBackends('wallet passkeys', (get) => {
  async function signedIn(): Promise<{ s: TestServer; appId: string; auth: TestSignIn }> {
    const s = get()
    const app = await s.newApp()
    return { s, appId: app.id, auth: await s.emailLogin(app.id, email()) }
  }

  test('behavior: create with passkey recovery, then a new device with the synced passkey recovers without a passcode and signs', async () => {
    const { s, appId, auth } = await signedIn()
    const passkey = softAuthenticator()
    const phone = frameDevice(s, appId, passkey)
    const { address } = await phone.create({ accessToken: auth.token, recoveryMethod: 'passkey' })
    expect(passkey.credentials.size).toBe(1)
    expect(passkey.asked[0]?.rpId).toBe('localhost')

    const me = await s.request<{ user: { wallet?: WalletAccount } }>('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(me.body.user.wallet).toMatchObject({ address, recoveryMethod: 'passkey' })

    // Another device, signed in again, the same (synced) passkey.
    const again = await s.emailLogin(appId, auth.user.email?.address ?? '')
    const laptop = frameDevice(s, appId, passkey)
    expect((await refusal(laptop.connect({ address, accessToken: again.token }))).code).toBe(
      'wallet_not_on_device',
    )
    await expect(laptop.recover({ address, accessToken: again.token })).resolves.toEqual({
      address,
    })
    // The salt asked for on recovery is the one the creation drew.
    expect(passkey.asked[1]?.salts).toEqual(passkey.asked[0]?.salts)
    await expect(laptop.connect({ address, accessToken: again.token })).resolves.toEqual({
      address,
    })
    const signer = await laptop.withKey({ address, accessToken: again.token }, (key) =>
      addressOf(key),
    )
    expect(signer).toBe(address)

    // A device without the passkey (another authenticator) gets nothing.
    const stranger = frameDevice(s, appId, softAuthenticator())
    expect((await refusal(stranger.recover({ address, accessToken: again.token }))).code).toBe(
      'passkey_failed',
    )
    expect(stranger.shares.size).toBe(0)
    // Automatic recovery is not a way around the passkey.
    const automatic = await frameRequest(s, appId, again.token)('/wallets/recover', { address })
    expect(automatic.status).toBe(400)
    expect(JSON.stringify(automatic.body)).toContain('This wallet is recovered with its passkey')
    expect(JSON.stringify(automatic.body)).not.toMatch(/authShare|ciphertext/)
  })

  test('behavior: passkey recovery added to an automatic and to a passcode wallet; a new device recovers with it, no passcode', async () => {
    for (const recoveryPin of [undefined, 'Pk3yRc']) {
      const { s, appId, auth } = await signedIn()
      const passkey = softAuthenticator()
      const phone = frameDevice(s, appId, passkey)
      const { address } = await phone.create({
        accessToken: auth.token,
        ...(recoveryPin ? { recoveryPin } : {}),
      })
      await expect(phone.addPasskey({ address, accessToken: auth.token })).resolves.toEqual({
        address,
      })
      const laptop = frameDevice(s, appId, passkey)
      await expect(
        laptop.recover({ address, accessToken: auth.token, recoveryMethod: 'passkey' }),
      ).resolves.toEqual({ address })
      await expect(laptop.connect({ address, accessToken: auth.token })).resolves.toEqual({
        address,
      })
      // A device that does not hold the wallet cannot add a passkey to it.
      const empty = frameDevice(s, appId, softAuthenticator())
      expect((await refusal(empty.addPasskey({ address, accessToken: auth.token }))).code).toBe(
        'wallet_not_on_device',
      )
    }
  })

  test('refusal: an authenticator without PRF says so and stores nothing; a wallet without a passkey has none to recover with', async () => {
    const { s, appId, auth } = await signedIn()
    const phone = frameDevice(s, appId, softAuthenticator({ prf: false }))
    const noPrf = await refusal(
      phone.create({ accessToken: auth.token, recoveryMethod: 'passkey' }),
    )
    expect(noPrf.code).toBe('passkey_prf_unsupported')
    expect(noPrf.message).toBe('This passkey cannot protect your wallet. Use a passcode instead.')
    const rows = await s.deps.db
      .selectFrom('wallets')
      .select('id')
      .where('user_id', '=', auth.user.id)
      .execute()
    expect(rows).toEqual([])
    // The passcode, offered instead, works.
    const { address } = await phone.create({ accessToken: auth.token, recoveryPin: 'N0prfX' })
    expect((await refusal(phone.addPasskey({ address, accessToken: auth.token }))).code).toBe(
      'passkey_prf_unsupported',
    )
    const laptop = frameDevice(s, appId, softAuthenticator())
    const none = await refusal(
      laptop.recover({ address, accessToken: auth.token, recoveryMethod: 'passkey' }),
    )
    expect(none).toMatchObject({ code: 'recovery_not_allowed', status: 404 })
    expect(none.message).toBe('This wallet has no passkey')
  })

  test('security: the database plus the server secret do not open the passkey-sealed share', async () => {
    const { s, appId, auth } = await signedIn()
    const passkey = softAuthenticator()
    const phone = frameDevice(s, appId, passkey)
    const { address } = await phone.create({ accessToken: auth.token, recoveryMethod: 'passkey' })
    const device = phone.shares.get(address.toLowerCase())
    if (!device) throw new Error('no device share')

    // Everything the server holds for this wallet, opened with everything it knows.
    const wallet = await s.deps.db
      .selectFrom('wallets')
      .selectAll()
      .where('address', '=', address.toLowerCase())
      .executeTakeFirstOrThrow()
    const record = openWalletRecord(s.deps, wallet)
    expect(record.recovery).toEqual({ method: 'passkey' })
    const opened = (
      await frameRequest(
        s,
        appId,
        auth.token,
      )<WalletPasskeyRecoverResponse>('/wallets/passkey/recover', { address })
    ).body
    const sealing = opened.passkeys[0]
    if (!sealing) throw new Error('no sealing')
    const dump = [
      ...(
        await sql<{
          row: string
        }>`SELECT row_to_json(p)::text AS row FROM wallet_passkeys p`.execute(s.deps.db)
      ).rows.map((r) => r.row),
      JSON.stringify(wallet),
      JSON.stringify(record),
      JSON.stringify(opened),
      s.logs.join('\n'),
    ].join('\n')
    // The PRF output, the plain share and the device share appear nowhere.
    const secret = passkey.credentials.get(sealing.credentialId)
    if (!secret) throw new Error('no credential')
    for (const value of [secret.toString('hex'), toHex(device)]) {
      expect(dump.toLowerCase()).not.toContain(value)
    }
    // Every 32-byte value the server has, or derives from its secret, as a PRF output: none opens.
    const candidates = [
      fromHex(sealing.salt),
      fromHex(opened.authShare).slice(0, 32),
      Buffer.from(s.deps.secrets.hmac(`wallet-passkey:${sealing.credentialId}`), 'hex'),
      Buffer.from(s.deps.secrets.hmac(sealing.salt), 'hex'),
      Buffer.from(s.deps.secrets.mac('wallet-passkey', sealing.salt), 'hex').subarray(0, 32),
      new Uint8Array(32),
    ]
    const binding = { userId: auth.user.id, address, credentialId: sealing.credentialId }
    for (const candidate of candidates) {
      const attempt = await openWithPasskey(
        new Uint8Array(candidate),
        fromHex(sealing.ciphertext),
        binding,
      ).catch((e: unknown) => e)
      expect(isLatchError(attempt)).toBe(true)
    }
    // The auth share alone does not make the key (one share of a 2-of-3 split).
    await expect(combineShares([fromHex(opened.authShare)], address)).rejects.toThrow()
  })

  test('security: the token alone, another user, or a sealing moved by a database writer gets nothing from the passkey routes', async () => {
    const { s, appId, auth } = await signedIn()
    const passkey = softAuthenticator()
    const { address } = await frameDevice(s, appId, passkey).create({
      accessToken: auth.token,
      recoveryMethod: 'passkey',
    })
    const sealing = {
      credentialId: 'A'.repeat(43),
      salt: '11'.repeat(32),
      ciphertext: '22'.repeat(61),
    }
    const paths: [string, unknown][] = [
      ['/wallets/passkey/options', {}],
      ['/wallets/passkey/add', { address, ...sealing }],
      ['/wallets/passkey/recover', { address }],
    ]
    const count = async () =>
      (await s.deps.db.selectFrom('wallet_passkeys').select('id').execute()).length
    const before = await count()
    const variants: Record<string, string>[] = [
      {},
      { 'sec-fetch-site': 'same-origin', origin: 'http://localhost' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site', cookie: s.walletCookie(auth.token) ?? '' },
    ]
    for (const headers of variants) {
      for (const [path, body] of paths) {
        const res = await s.request(path, { appId, token: auth.token, headers, body })
        expect([401, 403], `${path} ${JSON.stringify(headers)}`).toContain(res.status)
        expect(JSON.stringify(res.body)).not.toMatch(/ciphertext|authShare|salt/)
      }
    }
    expect(await count()).toBe(before)

    // Another user, in their own browser, asks for this wallet: the same 404 as no wallet.
    const other = await s.emailLogin(appId, email())
    for (const [path, body] of paths.slice(1)) {
      const res = await frameRequest(s, appId, other.token)(path, body)
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ error: { code: 'recovery_not_allowed' } })
    }
    expect(await count()).toBe(before)

    // Ill-formed sealings are refused with a 400 naming the field.
    const frame = frameRequest(s, appId, auth.token)
    for (const bad of [
      { credentialId: 'short' },
      { credentialId: 'has+plus/and=pad'.padEnd(20, 'x') },
      { salt: '11'.repeat(16) },
      { ciphertext: '22'.repeat(60) },
    ]) {
      const res = await frame('/wallets/passkey/add', { address, ...sealing, ...bad })
      expect(res.status, JSON.stringify(bad)).toBe(400)
    }
    // The same credential twice is refused.
    const stored = await s.deps.db
      .selectFrom('wallet_passkeys as p')
      .innerJoin('wallets as w', 'w.id', 'p.wallet_id')
      .select('p.credential_id')
      .where('w.user_id', '=', auth.user.id)
      .executeTakeFirstOrThrow()
    const twice = await frame('/wallets/passkey/add', {
      address,
      ...sealing,
      credentialId: stored.credential_id,
    })
    expect(twice.status).toBe(400)

    // A database writer moves this wallet's sealing to the other user's wallet row: it no longer
    // opens under the server's seal there, and the other user gets wallet_record_invalid.
    const otherWallet = await frameDevice(s, appId, softAuthenticator()).create({
      accessToken: other.token,
      recoveryMethod: 'passkey',
    })
    const otherRow = await s.deps.db
      .selectFrom('wallets')
      .select('id')
      .where('user_id', '=', other.user.id)
      .executeTakeFirstOrThrow()
    const victimRow = await s.deps.db
      .selectFrom('wallets')
      .select('id')
      .where('user_id', '=', auth.user.id)
      .executeTakeFirstOrThrow()
    await s.deps.db
      .updateTable('wallet_passkeys')
      .set({ wallet_id: otherRow.id })
      .where('wallet_id', '=', victimRow.id)
      .execute()
    const moved = await frameRequest(
      s,
      appId,
      other.token,
    )('/wallets/passkey/recover', {
      address: otherWallet.address,
    })
    expect(moved.status).toBe(409)
    expect(moved.body).toMatchObject({ error: { code: 'wallet_record_invalid' } })
  })

  /**
   * A fork of the signed-in session (POST /sessions/fork), redeemed as the wallet app's browser
   * (or whoever read the link) redeems it: a session of the same user with its own wallet
   * credential, not paired. `original` is the forking session's access token after its rotation.
   */
  async function forkedSession(s: TestServer, appId: string, auth: TestSignIn) {
    const fork = await s.request<ForkResponse>('/sessions/fork', {
      appId,
      ip: freshIp(),
      body: { refresh_token: auth.refresh_token },
    })
    expect(fork.status).toBe(200)
    const redeemed = await s.request<RefreshResponse>('/sessions/fork/recover', {
      appId,
      ip: freshIp(),
      body: { refresh_token: fork.body.new_session_refresh_token },
    })
    expect(redeemed.status).toBe(200)
    expect(s.walletCookie(redeemed.body.token)).toBeDefined()
    return { original: fork.body.token, child: redeemed.body.token }
  }

  /** The pairing (fork-pair.ts): the code the original frame shows, typed in the fork's frame. */
  async function pair(s: TestServer, appId: string, original: string, child: string) {
    const shown = await frameRequest(
      s,
      appId,
      original,
    )<{ code: string }>('/wallets/fork/pair/start', {})
    expect(shown.status).toBe(200)
    const paired = await frameRequest(
      s,
      appId,
      child,
    )('/wallets/fork/pair/finish', {
      code: shown.body.code,
    })
    expect(paired.status).toBe(200)
  }

  /** Everything stored for the user's wallet: a write by a refused request shows here. */
  async function stored(s: TestServer, userId: string) {
    const wallet = await s.deps.db
      .selectFrom('wallets')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow()
    const passkeys = await s.deps.db
      .selectFrom('wallet_passkeys')
      .selectAll()
      .where('wallet_id', '=', wallet.id)
      .orderBy('credential_id')
      .execute()
    return { wallet, passkeys }
  }

  const notHandedOver = {
    error: {
      code: 'fork_wallet_not_confirmed',
      message: 'This link did not hand over your wallet. Sign in again here to use it.',
    },
  }

  test('attack: an unpaired fork adds no passkey through /wallets/passkey/add: the wallet keeps its MAX_WALLET_PASSKEYS slots for its owner', async () => {
    const { s, appId, auth } = await signedIn()
    const passkey = softAuthenticator()
    const phone = frameDevice(s, appId, passkey)
    const { address } = await phone.create({ accessToken: auth.token, recoveryMethod: 'passkey' })
    const { original, child } = await forkedSession(s, appId, auth)
    const before = await stored(s, auth.user.id)

    // Well-formed junk sealings, as many as a wallet holds: none is stored.
    const fork = frameRequest(s, appId, child)
    for (let k = 0; k < MAX_WALLET_PASSKEYS; k++) {
      const junk = await fork('/wallets/passkey/add', {
        address,
        credentialId: `${'J'.repeat(42)}${k}`,
        salt: '11'.repeat(32),
        ciphertext: '22'.repeat(61),
      })
      expect(junk.status, `junk ${k}`).toBe(403)
      expect(junk.body).toMatchObject(notHandedOver)
    }
    expect(await stored(s, auth.user.id)).toEqual(before)

    // The owner's session adds its own; so does the fork once paired (after its recovery).
    await expect(phone.addPasskey({ address, accessToken: original })).resolves.toEqual({
      address,
    })
    await pair(s, appId, original, child)
    const paired = frameDevice(s, appId, passkey)
    await paired.recover({ address, accessToken: child })
    await expect(paired.addPasskey({ address, accessToken: child })).resolves.toEqual({ address })
    expect((await stored(s, auth.user.id)).passkeys).toHaveLength(before.passkeys.length + 2)
  })

  test('refusal: a wallet holds at most MAX_WALLET_PASSKEYS passkeys', async () => {
    const { s, appId, auth } = await signedIn()
    const passkey = softAuthenticator()
    const phone = frameDevice(s, appId, passkey)
    const { address } = await phone.create({ accessToken: auth.token, recoveryMethod: 'passkey' })
    for (let k = 1; k < MAX_WALLET_PASSKEYS; k++) {
      await phone.addPasskey({ address, accessToken: auth.token })
    }
    const over = await refusal(phone.addPasskey({ address, accessToken: auth.token }))
    expect(over.status).toBe(400)
    expect(over.message).toContain(`at most ${MAX_WALLET_PASSKEYS} passkeys`)
  })
})
