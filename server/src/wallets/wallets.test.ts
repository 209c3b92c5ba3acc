import {
  isLatchError,
  type WalletAccount,
  type WalletCreateResponse,
  type WalletCreationParts,
  type WalletInfoResponse,
  type WalletSharesResponse,
  walletCreationDigest,
  walletCreationMessage,
} from '@latch/shared'
import {
  addressOf,
  blind,
  fetchApi,
  finish,
  newPrivateKey,
  sealShare,
  splitKey,
  stretch,
  toHex,
  walletCore,
} from '@latch/wallet-frame'
import { sql } from 'kysely'
import { privateKeyToAccount } from 'viem/accounts'
import { expect, test } from 'vitest'
import { createSecrets } from '../crypto.ts'
import { frameDevice, TEST_KDF as kdf } from '../testing/frame-fetch.ts'
import {
  describeBackends,
  type RequestOptions,
  type TestServer,
  type TestSignIn,
} from '../testing/test-server.ts'
import { lockMs, MAX_PASSCODE_FAILURES } from './passcode.ts'
import { PASSCODE_BEGIN_IP_LIMIT, PASSCODE_BEGIN_USER_LIMIT } from './routes.ts'

let n = 0
const email = () => `wallet.${++n}.${Date.now()}@example.com`

const device = frameDevice

/** A request of the wallet frame itself: same-origin, with the bearer's wallet credential. */
function frameRequest(s: TestServer) {
  return <T = Record<string, unknown>>(path: string, opts: RequestOptions = {}) => {
    const cookie = opts.token ? s.walletCookie(opts.token) : undefined
    const headers: Record<string, string> = {
      'sec-fetch-site': 'same-origin',
      ...(cookie ? { cookie } : {}),
      ...opts.headers,
    }
    return s.request<T>(path, { ...opts, headers })
  }
}

/**
 * Adds the proof of possession a creation needs, made by an implementation of EIP-191 other
 * than the frame's (viem's account), as the frame would: a challenge, then the new key signs.
 */
async function withProof<B extends Omit<WalletCreationParts, 'challenge'>>(
  s: TestServer,
  appId: string,
  token: string,
  key: Uint8Array,
  body: B,
): Promise<B & { proof: { challenge: string; signature: string } }> {
  const { body: answer } = await frameRequest(s)<{ challenge: string }>('/wallets/challenge', {
    appId,
    token,
    body: {},
  })
  const digest = await walletCreationDigest({ ...body, challenge: answer.challenge })
  const signature = await privateKeyToAccount(`0x${toHex(key)}`).signMessage({
    message: walletCreationMessage(body.address, digest),
  })
  return { ...body, proof: { challenge: answer.challenge, signature } }
}

async function refusal(p: Promise<unknown>) {
  try {
    await p
  } catch (e) {
    if (isLatchError(e)) return e
    throw e
  }
  throw new Error('expected a refusal')
}

describeBackends('wallets', (get) => {
  async function signedIn(): Promise<{ appId: string; auth: TestSignIn }> {
    const s = get()
    const app = await s.newApp()
    return { appId: app.id, auth: await s.emailLogin(app.id, email()) }
  }

  test('behavior: automatic recovery — create, one wallet per user, a new device recovers without a passcode', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const phone = device(s, appId)
    const { address } = await phone.create({ accessToken: auth.token })
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)

    const me = await s.request<{ user: { wallet?: WalletAccount } }>('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(me.body.user.wallet).toMatchObject({
      type: 'wallet',
      address,
      chainType: 'ethereum',
      chainId: 'eip155:1',
      walletClient: 'latch',
      walletClientType: 'latch',
      connectorType: 'embedded',
      recoveryMethod: 'latch',
    })

    const again = await refusal(phone.create({ accessToken: auth.token }))
    expect(again.message).toBe('Only one wallet per user is currently allowed')
    expect(again.status).toBe(409)

    await expect(phone.connect({ address, accessToken: auth.token })).resolves.toEqual({ address })
    const laptop = device(s, appId)
    const missing = await refusal(laptop.connect({ address, accessToken: auth.token }))
    expect(missing.code).toBe('wallet_not_on_device')
    await expect(laptop.recover({ address, accessToken: auth.token })).resolves.toEqual({
      address,
    })
    await expect(laptop.connect({ address, accessToken: auth.token })).resolves.toEqual({ address })
  })

  test('refusal: a browser that refused the wallet credential hears wallet_sign_in_required from connect at once, not wallet_not_on_device (no passcode would help)', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const { address } = await device(s, appId).create({ accessToken: auth.token })
    // The frame's own code in a browser that kept no cookie for it: fetch metadata only.
    const noCookie = ((url: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers)
      headers.set('sec-fetch-site', 'same-origin')
      return s.api.request(url, { ...init, headers })
    }) as typeof fetch
    const shares = new Map<string, Uint8Array>()
    const refused = walletCore({
      api: fetchApi('', appId, noCookie),
      store: {
        persistent: false,
        get: (a) => shares.get(a.toLowerCase()),
        set: (a, share) => void shares.set(a.toLowerCase(), share),
      },
      kdf,
    })
    const heard = await refusal(refused.connect({ address, accessToken: auth.token }))
    expect(heard.code).toBe('wallet_sign_in_required')
    // A browser that keeps it and lacks the share still hears that the wallet is not here.
    const laptop = await refusal(device(s, appId).connect({ address, accessToken: auth.token }))
    expect(laptop.code).toBe('wallet_not_on_device')
  })

  test('behavior: the in-app wallet cannot be unlinked', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const { address } = await device(s, appId).create({ accessToken: auth.token })
    // The account is stored as the in-app wallet, which accounts.ts refuses to unlink.
    const row = await s.deps.db
      .selectFrom('linked_accounts')
      .select('data')
      .where('identifier', '=', address.toLowerCase())
      .executeTakeFirstOrThrow()
    expect((row.data as unknown as WalletAccount).walletClient).toBe('latch')
    const { unlinkAccount } = await import('../accounts/service.ts')
    const err = await refusal(
      unlinkAccount(s.deps, appId, auth.user.id, { type: 'wallet', identifier: address }),
    )
    expect(err.message).toBe('Cannot unlink an embedded wallet')
  })

  test('refusal: the in-app wallet cannot be used to sign in or be linked, by its owner or anyone, nor can an outside account claim to be one', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const { address } = await device(s, appId).create({ accessToken: auth.token })
    const other = await s.emailLogin(appId, email())
    const { authenticateWithAccount, linkAccount, loadUser } = await import(
      '../accounts/service.ts'
    )
    const outside = (addr: string, claim = false) =>
      ({
        type: 'wallet',
        address: addr as `0x${string}`,
        chainType: 'ethereum',
        chainId: 'eip155:1',
        walletClient: 'unknown',
        walletClientType: claim ? 'latch' : 'metamask',
        connectorType: claim ? 'embedded' : 'injected',
        recoveryMethod: null,
      }) as const
    const forbidden = { code: 'embedded_wallet_link_forbidden', status: 400 }
    const message = 'Cannot link or login with embedded wallet'
    // A wallet sign-in with the in-app wallet's address (any case) would take over its account.
    const signIn = await refusal(
      authenticateWithAccount(s.deps, appId, outside(address.toUpperCase().replace('0X', '0x'))),
    )
    expect(signIn).toMatchObject(forbidden)
    expect(signIn.message).toBe(message)
    // Linking it, by the owner (would overwrite the record) or by another user.
    for (const userId of [auth.user.id, other.user.id]) {
      await expect(linkAccount(s.deps, appId, userId, outside(address))).rejects.toMatchObject(
        forbidden,
      )
    }
    // An outside wallet that claims to be an in-app one (new address, Latch's client or connector).
    const fresh = `0x${'5e'.repeat(20)}`
    await expect(
      authenticateWithAccount(s.deps, appId, outside(fresh, true)),
    ).rejects.toMatchObject(forbidden)
    await expect(
      linkAccount(s.deps, appId, other.user.id, outside(fresh, true)),
    ).rejects.toMatchObject(forbidden)
    // Refused before any write: the owner's record is untouched and no one else holds it.
    const owner = await loadUser(s.deps, appId, auth.user.id)
    expect(owner.wallet).toMatchObject({
      address,
      walletClientType: 'latch',
      connectorType: 'embedded',
    })
    const holders = await s.deps.db
      .selectFrom('linked_accounts')
      .select('user_id')
      .where('app_id', '=', appId)
      .where('identifier', 'in', [address.toLowerCase(), fresh])
      .execute()
    expect(holders).toEqual([{ user_id: auth.user.id }])
    // An ordinary outside wallet still links.
    const plain = await linkAccount(s.deps, appId, other.user.id, outside(`0x${'6f'.repeat(20)}`))
    expect(plain.linkedAccounts.some((a) => a.type === 'wallet')).toBe(true)
  })

  test('behavior: a passcode wallet recovers on a new device with its passcode only', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const { address } = await device(s, appId).create({
      accessToken: auth.token,
      recoveryPin: 'Abc1x3',
    })
    const info = await frameRequest(s)<WalletInfoResponse>('/wallets/info', {
      appId,
      token: auth.token,
      body: { address },
    })
    expect(info.body).toEqual({ recoveryMethod: 'user-passcode', salt: expect.any(String) })
    // Automatic recovery is refused for a passcode wallet.
    const auto = await frameRequest(s)('/wallets/recover', {
      appId,
      token: auth.token,
      body: { address },
    })
    expect(auto.status).toBe(400)

    const laptop = device(s, appId)
    const wrong = await refusal(
      laptop.recover({ address, accessToken: auth.token, recoveryPin: 'Abc1x4' }),
    )
    expect(wrong.code).toBe('invalid_recovery_pin')
    expect(wrong.message).toBe('Invalid recovery passcode, please try again.')
    const none = await refusal(laptop.recover({ address, accessToken: auth.token }))
    expect(none.code).toBe('invalid_recovery_pin')
    await expect(
      laptop.recover({ address, accessToken: auth.token, recoveryPin: 'Abc1x3' }),
    ).resolves.toEqual({ address })
    await expect(laptop.connect({ address, accessToken: auth.token })).resolves.toEqual({ address })
  })

  test('refusal: five wrong passcodes lock recovery, growing; the right one is refused while locked and resets the count after', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const { address } = await device(s, appId).create({
      accessToken: auth.token,
      recoveryPin: 'Right1',
    })
    const thief = device(s, appId)
    const guess = (pin: string) =>
      thief.recover({ address, accessToken: auth.token, recoveryPin: pin })
    for (let i = 0; i < MAX_PASSCODE_FAILURES; i++) {
      expect((await refusal(guess(`Wrong${i}`))).code).toBe(
        i < MAX_PASSCODE_FAILURES - 1 ? 'invalid_recovery_pin' : 'recovery_locked',
      )
    }
    // Locked: even the right passcode is refused, with a clear message and Retry-After.
    const evaluate = await frameRequest(s)('/wallets/passcode/evaluate', {
      appId,
      token: auth.token,
      body: { address, blinded: toHex(blind(new Uint8Array(32)).blinded) },
    })
    expect(evaluate.status).toBe(429)
    expect(evaluate.body).toMatchObject({
      error: {
        code: 'recovery_locked',
        message: 'Too many incorrect passcodes. Recovery is locked, please try again later.',
      },
    })
    expect(Number(evaluate.headers.get('retry-after'))).toBeGreaterThan(50)
    expect(Number(evaluate.headers.get('retry-after'))).toBeLessThanOrEqual(60)
    // The frame's error carries the wait, so the modal can say how long.
    const fromFrame = await refusal(guess('Right1'))
    expect(fromFrame.code).toBe('recovery_locked')
    expect(fromFrame.retryAfter).toBeGreaterThan(50)
    expect(fromFrame.retryAfter).toBeLessThanOrEqual(60)

    // After the lock, one more wrong guess locks again, twice as long.
    s.clock.advance(lockMs(5) + 1000)
    expect((await refusal(guess('Wrong9'))).code).toBe('recovery_locked')
    const second = await frameRequest(s)('/wallets/passcode/evaluate', {
      appId,
      token: auth.token,
      body: { address, blinded: toHex(blind(new Uint8Array(32)).blinded) },
    })
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(110)
    expect(lockMs(6)).toBe(2 * lockMs(5))
    expect(lockMs(40)).toBe(24 * 60 * 60_000)

    s.clock.advance(lockMs(6) + 1000)
    await expect(guess('Right1')).resolves.toEqual({ address })
    // The count is back to zero: four wrong guesses and the right one never lock.
    for (let i = 0; i < MAX_PASSCODE_FAILURES - 1; i++) {
      expect((await refusal(guess(`Again${i}`))).code).toBe('invalid_recovery_pin')
    }
    await expect(guess('Right1')).resolves.toEqual({ address })
  })

  test('refusal: parallel guesses are counted one by one — of 8 at once, 5 are answered and 3 refused as locked', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const { address } = await device(s, appId).create({
      accessToken: auth.token,
      recoveryPin: 'Race12',
    })
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        frameRequest(s)('/wallets/passcode/evaluate', {
          appId,
          token: auth.token,
          body: { address, blinded: toHex(blind(new Uint8Array(32)).blinded) },
        }),
      ),
    )
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429])
    const row = await s.deps.db
      .selectFrom('wallets')
      .select(['failed_attempts', 'locked_until'])
      .where('address', '=', address.toLowerCase())
      .executeTakeFirstOrThrow()
    expect(row.failed_attempts).toBe(MAX_PASSCODE_FAILURES)
    expect(row.locked_until).not.toBeNull()
  })

  test('refusal: a verifier without a fresh evaluation is refused, even the right one (no replay, every try counted)', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    // A hand-driven frame, to hold on to the verifier.
    const key = newPrivateKey()
    const address = addressOf(key)
    const shares = await splitKey(key)
    const salt = new Uint8Array(16).fill(7)
    const stretched = await stretch('Pin123', salt, kdf)
    const b = blind(stretched)
    const begun = await frameRequest(s)<{ evaluated: string; ticket: string }>(
      '/wallets/passcode/begin',
      {
        appId,
        token: auth.token,
        body: { blinded: toHex(b.blinded) },
      },
    )
    const keys = finish(stretched, b, Buffer.from(begun.body.evaluated, 'hex'))
    const created = await frameRequest(s)<WalletCreateResponse>('/wallets', {
      appId,
      token: auth.token,
      body: await withProof(s, appId, auth.token, key, {
        address,
        authShare: toHex(shares.auth),
        recovery: {
          method: 'user-passcode',
          salt: toHex(salt),
          ciphertext: toHex(await sealShare(keys.recoveryKey, shares.recovery, address)),
          verifier: toHex(keys.verifier),
          ticket: begun.body.ticket,
        },
      }),
    })
    expect(created.status).toBe(200)
    const verify = () =>
      frameRequest(s)<WalletSharesResponse>('/wallets/passcode/verify', {
        appId,
        token: auth.token,
        body: { address, verifier: toHex(keys.verifier) },
      })
    expect((await verify()).status).toBe(422)
    const evaluated = await frameRequest(s)('/wallets/passcode/evaluate', {
      appId,
      token: auth.token,
      body: { address, blinded: toHex(blind(stretched).blinded) },
    })
    expect(evaluated.status).toBe(200)
    const ok = await verify()
    expect(ok.status).toBe(200)
    expect(ok.body.authShare).toBe(toHex(shares.auth))
    // The evaluation is spent.
    expect((await verify()).status).toBe(422)
    // A stale evaluation is spent too.
    await frameRequest(s)('/wallets/passcode/evaluate', {
      appId,
      token: auth.token,
      body: { address, blinded: toHex(blind(stretched).blinded) },
    })
    s.clock.advance(6 * 60_000)
    expect((await verify()).status).toBe(422)
  })

  test('property: nothing a token holder receives before a matching verify depends on the passcode', async () => {
    const s = get()
    // Two users, same salt, different passcodes: every answer short of a matching verify has
    // the same shape and holds nothing derived from the passcode, so there is nothing to test a
    // guess against offline. The only passcode-dependent values (verifier, sealed recovery
    // share) never leave the server before a match.
    const seen: string[] = []
    const salt = new Uint8Array(16).fill(9)
    const answersFor = async (pin: string) => {
      const { appId, auth } = await signedIn()
      const key = newPrivateKey()
      const address = addressOf(key)
      const shares = await splitKey(key)
      const stretched = await stretch(pin, salt, kdf)
      const b = blind(stretched)
      const begun = await frameRequest(s)<{ evaluated: string; ticket: string }>(
        '/wallets/passcode/begin',
        { appId, token: auth.token, body: { blinded: toHex(b.blinded) } },
      )
      const keys = finish(stretched, b, Buffer.from(begun.body.evaluated, 'hex'))
      const ciphertext = toHex(await sealShare(keys.recoveryKey, shares.recovery, address))
      const verifier = toHex(keys.verifier)
      await frameRequest(s)('/wallets', {
        appId,
        token: auth.token,
        body: await withProof(s, appId, auth.token, key, {
          address,
          authShare: toHex(shares.auth),
          recovery: {
            method: 'user-passcode',
            salt: toHex(salt),
            ciphertext,
            verifier,
            ticket: begun.body.ticket,
          },
        }),
      })
      const call = async (path: string, body: unknown) => {
        const res = await frameRequest(s)(path, { appId, token: auth.token, body })
        seen.push(JSON.stringify(res.body))
        return { status: res.status, keys: Object.keys(res.body).sort() }
      }
      const guess = await stretch('Guess0', salt, kdf)
      const answers = [
        await call('/wallets/info', { address }),
        await call('/wallets/shares', { address }),
        await call('/wallets/recover', { address }),
        await call('/wallets/passcode/evaluate', { address, blinded: toHex(blind(guess).blinded) }),
        await call('/wallets/passcode/verify', {
          address,
          verifier: toHex(
            finish(guess, blind(guess), Buffer.from(begun.body.evaluated, 'hex')).verifier,
          ),
        }),
      ]
      return { answers, secrets: [ciphertext, verifier] }
    }
    const a = await answersFor('Aaaaa1')
    const b = await answersFor('Bbbbb2')
    expect(a.answers).toEqual(b.answers)
    expect(a.answers.map((x) => x.status)).toEqual([200, 200, 400, 200, 422])
    for (const value of [...a.secrets, ...b.secrets]) {
      expect(seen.some((body) => body.includes(value))).toBe(false)
    }
  })

  test('property: a copy of the database alone holds no share, verifier or salt in the clear', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const key = newPrivateKey()
    const address = addressOf(key)
    const shares = await splitKey(key)
    const salt = crypto.getRandomValues(new Uint8Array(16))
    const stretched = await stretch('Db1234', salt, kdf)
    const b = blind(stretched)
    const begun = await frameRequest(s)<{ evaluated: string; ticket: string }>(
      '/wallets/passcode/begin',
      {
        appId,
        token: auth.token,
        body: { blinded: toHex(b.blinded) },
      },
    )
    const keys = finish(stretched, b, Buffer.from(begun.body.evaluated, 'hex'))
    const ciphertext = toHex(await sealShare(keys.recoveryKey, shares.recovery, address))
    await frameRequest(s)('/wallets', {
      appId,
      token: auth.token,
      body: await withProof(s, appId, auth.token, key, {
        address,
        authShare: toHex(shares.auth),
        recovery: {
          method: 'user-passcode',
          salt: toHex(salt),
          ciphertext,
          verifier: toHex(keys.verifier),
          ticket: begun.body.ticket,
        },
      }),
    })
    const rows = await sql<{
      row: string
    }>`SELECT row_to_json(w)::text AS row FROM wallets w WHERE address = ${address.toLowerCase()}`.execute(
      s.deps.db,
    )
    const dump = rows.rows.map((r) => r.row).join('\n')
    expect(dump).not.toBe('')
    for (const value of [
      toHex(shares.auth),
      toHex(shares.recovery),
      ciphertext,
      toHex(keys.verifier),
      toHex(salt),
      toHex(key),
    ]) {
      expect(dump).not.toContain(value)
    }
    // Without the server secret the sealed columns do not open.
    const other = createSecrets('another-secret-another-secret-another-0123')
    const stored = await s.deps.db
      .selectFrom('wallets')
      .selectAll()
      .where('address', '=', address.toLowerCase())
      .executeTakeFirstOrThrow()
    expect(() => other.decrypt(stored.auth_share_sealed)).toThrow()
    expect(() => other.decrypt(stored.recovery_sealed)).toThrow()
  })

  test('refusal: passcode starts are limited per user and per address: 429 with Retry-After, a new window starts over', async () => {
    const s = get()
    const app = await s.newApp()
    const appId = app.id
    const ip = `198.51.100.${++n % 250}`
    const users = []
    for (let k = 0; k < 7; k++) users.push(await s.emailLogin(appId, email()))
    let i = 1
    const begin = (token: string, from = ip) =>
      frameRequest(s)('/wallets/passcode/begin', {
        appId,
        token,
        ip: from,
        body: { blinded: toHex(blind(new Uint8Array(32).fill(i++)).blinded) },
      })
    const [first, ...rest] = users.map((u) => u.token) as [string, ...string[]]
    for (let k = 0; k < PASSCODE_BEGIN_USER_LIMIT.max; k++) {
      expect((await begin(first)).status).toBe(200)
    }
    const over = await begin(first, '203.0.113.7')
    expect(over.status).toBe(429)
    expect(over.body).toMatchObject({ error: { code: 'too_many_requests' } })
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    // The address's budget: other users from it until it is spent, then everyone from it.
    let spent = PASSCODE_BEGIN_USER_LIMIT.max
    for (const token of rest) {
      while (spent < PASSCODE_BEGIN_IP_LIMIT.max && (await begin(token)).status === 200) {
        spent++
        if (spent % PASSCODE_BEGIN_USER_LIMIT.max === 0) break
      }
    }
    expect(spent).toBe(PASSCODE_BEGIN_IP_LIMIT.max)
    const last = rest[rest.length - 1] as string
    const fromIp = await begin(last)
    expect(fromIp.status).toBe(429)
    expect(Number(fromIp.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await begin(last, '203.0.113.8')).status).toBe(200)
    s.clock.advance(PASSCODE_BEGIN_IP_LIMIT.windowMs + 1000)
    expect((await begin(first)).status).toBe(200)
  })

  test('refusal: every route needs the owner’s live token; another user, a revoked session and bad input are refused without a 500', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const { address } = await device(s, appId).create({ accessToken: auth.token })
    const other = await s.emailLogin(appId, email())
    const paths = ['/wallets/info', '/wallets/shares', '/wallets/recover']
    for (const path of paths) {
      const anon = await frameRequest(s)(path, { appId, body: { address } })
      expect(anon.status).toBe(401)
      const foreign = await frameRequest(s)(path, { appId, token: other.token, body: { address } })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toMatchObject({
        error: {
          message: 'User must be authenticated and have a wallet before it can be recovered',
        },
      })
    }
    // Bad input: a clear 400.
    for (const [path, body] of [
      ['/wallets/info', { address: 'nope' }],
      ['/wallets/passcode/begin', { blinded: 'ff'.repeat(32) }],
      ['/wallets/passcode/begin', { blinded: 'zz' }],
      ['/wallets', { address, authShare: '00', recovery: { method: 'latch' } }],
    ] as const) {
      const res = await frameRequest(s)(path, { appId, token: other.token, body })
      expect(res.status).toBe(400)
    }
    // A ticket is bound to its user and expires.
    const blinded = toHex(blind(new Uint8Array(32)).blinded)
    const begun = await frameRequest(s)<{ ticket: string }>('/wallets/passcode/begin', {
      appId,
      token: other.token,
      body: { blinded },
    })
    const third = await s.emailLogin(appId, email())
    const key = newPrivateKey()
    const body = {
      address: addressOf(key),
      authShare: '00'.repeat(33),
      recovery: {
        method: 'user-passcode',
        salt: '00'.repeat(16),
        ciphertext: '00'.repeat(61),
        verifier: '00'.repeat(32),
        ticket: begun.body.ticket,
      },
    }
    expect((await frameRequest(s)('/wallets', { appId, token: third.token, body })).status).toBe(
      400,
    )
    s.clock.advance(11 * 60_000)
    const expired = await frameRequest(s)('/wallets', { appId, token: other.token, body })
    expect(expired.status).toBe(400)
    // The owner with a wallet cannot begin another.
    const owner = await frameRequest(s)('/wallets/passcode/begin', {
      appId,
      token: auth.token,
      body: { blinded },
    })
    expect(owner.status).toBe(409)
    // A browser page of another origin (the modal, a host page) is refused even with the token.
    const foreignPages: Record<string, string>[] = [
      { origin: 'http://127.0.0.1:5174' },
      { origin: 'http://localhost:5173' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site' },
    ]
    for (const headers of foreignPages) {
      const res = await frameRequest(s)('/wallets/shares', {
        appId,
        token: auth.token,
        headers,
        body: { address },
      })
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({
        error: { message: 'Only the wallet frame may call the wallet API' },
      })
    }
    // The frame itself: its own origin, same-origin fetch.
    const own = await frameRequest(s)('/wallets/shares', {
      appId,
      token: auth.token,
      headers: { origin: 'http://localhost', 'sec-fetch-site': 'same-origin' },
      body: { address },
    })
    expect(own.status).toBe(200)
    // A revoked session is refused.
    await s.request('/sessions/logout', {
      appId,
      token: auth.token,
      body: { refresh_token: auth.refresh_token },
    })
    const revoked = await frameRequest(s)('/wallets/shares', {
      appId,
      token: auth.token,
      body: { address },
    })
    expect(revoked.status).toBe(401)
  })
})
