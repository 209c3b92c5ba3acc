/**
 * The session fork's refusals (sessions.test.ts holds its happy path and its family races):
 * a spent, expired, unknown or other app's token, the family's revocation, the shortened life a
 * setting gives, and the rate limits; a token read only from a POST body; and the wallet: a
 * forked session reaches no share until paired, with a code the forking session's wallet frame
 * showed, typed into the forked session's wallet frame (or with the passcode).
 */
import { type ForkResponse, isLatchError, type RefreshResponse } from '@latch/shared'
import { fetchApi, type ShareStore, walletCore } from '@latch/wallet-frame'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createSecrets, hashToken } from '../crypto.ts'
import { rotateSecret } from '../ops/rotate.ts'
import { sweep } from '../sweep.ts'
import {
  describeBackends,
  freshIp,
  startTestServer,
  TEST_SECRET,
  type TestServer,
  type TestSignIn,
} from '../testing/test-server.ts'
import {
  WALLET_CREDENTIAL_PREFIX,
  walletCredentialName,
  walletCredentialValue,
} from '../wallets/credential.ts'
import { PAIRING_MAX_ATTEMPTS, PAIRING_TTL_MS, walletHandedOver } from '../wallets/fork-pair.ts'
import { FORK_IP_LIMIT, FORK_RECOVER_IP_LIMIT } from './routes.ts'

let n = 0
const email = () => `fork.${++n}.${Date.now()}@example.com`

async function forked(s: TestServer, ip = freshIp()) {
  const app = await s.newApp()
  const auth: TestSignIn = await s.emailLogin(app.id, email(), ip)
  const fork = await s.request<ForkResponse>('/sessions/fork', {
    appId: app.id,
    ip,
    body: { refresh_token: auth.refresh_token },
  })
  expect(fork.status).toBe(200)
  return { appId: app.id, auth, fork: fork.body, ip }
}

function recover(s: TestServer, appId: string, token: string, ip = freshIp()) {
  return s.request<RefreshResponse>('/sessions/fork/recover', {
    appId,
    ip,
    body: { refresh_token: token },
  })
}

describeBackends('session fork', (get) => {
  test('behavior: the fork answers the rotated pair of this session and a different token', async () => {
    const s = get()
    const { appId, auth, fork } = await forked(s)
    expect(fork.new_session_refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(fork.new_session_refresh_token).not.toBe(fork.refresh_token)
    // The fork token is no refresh token: it refreshes nothing.
    const asRefresh = await s.request('/sessions', {
      appId,
      body: { refresh_token: fork.new_session_refresh_token },
    })
    expect(asRefresh.status).toBe(401)
    const child = await recover(s, appId, fork.new_session_refresh_token)
    expect(child.status).toBe(200)
    expect(child.body.user.id).toBe(auth.user.id)
  })

  test('error: a fork token is refused the second time with its own message, and the first session stays', async () => {
    const s = get()
    const { appId, fork } = await forked(s)
    const first = await recover(s, appId, fork.new_session_refresh_token)
    expect(first.status).toBe(200)
    const second = await recover(s, appId, fork.new_session_refresh_token)
    expect(second.status).toBe(401)
    expect(second.body).toEqual({
      requestId: expect.any(String),
      error: {
        type: 'api_error',
        code: 'fork_token_used',
        message: 'This session link has already been used',
      },
    })
    const refreshed = await s.request('/sessions', {
      appId,
      body: { refresh_token: first.body.refresh_token },
    })
    expect(refreshed.status).toBe(200)
  })

  test('error: an expired fork token says so, the moment its 2 minutes end', async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const { appId, fork } = await forked(s)
      const row = await s.deps.db
        .selectFrom('fork_tokens')
        .select(['created_at', 'expires_at'])
        .where('app_id', '=', appId)
        .executeTakeFirstOrThrow()
      expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(2 * 60_000)
      s.clock.advance(2 * 60_000)
      const late = await recover(s, appId, fork.new_session_refresh_token)
      expect(late.status).toBe(401)
      expect(late.body).toMatchObject({
        error: { code: 'fork_token_expired', message: 'This session link has expired' },
      })
    })
  })

  test('behavior: a fork token is alive just before its 2 minutes end', async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const { appId, fork } = await forked(s)
      s.clock.advance(2 * 60_000 - 1)
      expect((await recover(s, appId, fork.new_session_refresh_token)).status).toBe(200)
    })
  })

  test('error: an unknown token, or one of another app, is an invalid token and spends nothing', async () => {
    const s = get()
    const { appId, fork } = await forked(s)
    const other = await s.newApp()
    const elsewhere = await recover(s, other.id, fork.new_session_refresh_token)
    expect(elsewhere.status).toBe(401)
    expect(elsewhere.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
    const unknown = await recover(s, appId, 'A'.repeat(43))
    expect(unknown.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
    // Still good for its own app.
    expect((await recover(s, appId, fork.new_session_refresh_token)).status).toBe(200)
  })

  test('error: bad bodies get invalid_data, never a 500', async () => {
    const s = get()
    const app = await s.newApp()
    for (const body of [{}, { refresh_token: 7 }, { refresh_token: 'x'.repeat(5000) }, []]) {
      const r = await s.request('/sessions/fork/recover', { appId: app.id, body })
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({ error: { code: 'invalid_data' } })
      // A fork reads the refresh cookie, never a body: without the cookie it is a 401.
      const f = await s.request('/sessions/fork', { appId: app.id, body })
      expect(f.status).toBe(401)
      expect(f.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
    }
  })

  test('error: forking needs a live refresh token', async () => {
    const s = get()
    const { appId, auth } = await forked(s)
    // auth.refresh_token was rotated by the fork: forking with it again is reuse.
    s.clock.advance(11_000)
    const again = await s.request('/sessions/fork', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(again.status).toBe(401)
    expect(again.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
  })

  test('behavior: revoking the family kills an unspent fork token and the session a spent one opened', async () => {
    const s = get()
    const a = await forked(s)
    const b = await forked(s)
    const child = await recover(s, b.appId, b.fork.new_session_refresh_token)
    expect(child.status).toBe(200)
    for (const { appId, fork } of [a, b]) {
      const out = await s.request('/sessions/logout', {
        appId,
        body: { refresh_token: fork.refresh_token },
      })
      expect(out.status).toBe(200)
    }
    const unspent = await recover(s, a.appId, a.fork.new_session_refresh_token)
    expect(unspent.status).toBe(401)
    expect(unspent.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
    const childRefresh = await s.request('/sessions', {
      appId: b.appId,
      body: { refresh_token: child.body.refresh_token },
    })
    expect(childRefresh.status).toBe(401)
  })

  test('behavior: logging out the forked session ends its parent too (one family)', async () => {
    const s = get()
    const { appId, fork } = await forked(s)
    const child = await recover(s, appId, fork.new_session_refresh_token)
    await s.request('/sessions/logout', {
      appId,
      body: { refresh_token: child.body.refresh_token },
    })
    const parent = await s.request('/sessions', {
      appId,
      body: { refresh_token: fork.refresh_token },
    })
    expect(parent.status).toBe(401)
  })

  test('error: forks and redemptions are rate limited per client address, before anything rotates', async () => {
    const s = get()
    const ip = freshIp()
    const app = await s.newApp()
    const auth = await s.emailLogin(app.id, email(), ip)
    let refresh = auth.refresh_token
    for (let i = 0; i < FORK_IP_LIMIT.max; i++) {
      const r = await s.request<ForkResponse>('/sessions/fork', {
        appId: app.id,
        ip,
        body: { refresh_token: refresh },
      })
      expect(r.status).toBe(200)
      refresh = r.body.refresh_token
    }
    const over = await s.request('/sessions/fork', {
      appId: app.id,
      ip,
      body: { refresh_token: refresh },
    })
    expect(over.status).toBe(429)
    expect(over.body).toMatchObject({ error: { code: 'too_many_requests' } })
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    // The refused fork did not rotate the pair: it still refreshes.
    const still = await s.request('/sessions', { appId: app.id, body: { refresh_token: refresh } })
    expect(still.status).toBe(200)

    const rip = freshIp()
    for (let i = 0; i < FORK_RECOVER_IP_LIMIT.max; i++) {
      expect((await recover(s, app.id, 'B'.repeat(43), rip)).status).toBe(401)
    }
    const capped = await recover(s, app.id, 'B'.repeat(43), rip)
    expect(capped.status).toBe(429)
  })
})

// A server whose fork tokens live 2 s (LATCH_FORK_TOKEN_TTL), as the end-to-end test runs it.
let short: { server: TestServer; close(): Promise<void> } | undefined
beforeAll(async () => {
  short = await startTestServer('pglite', 'memory://', { LATCH_FORK_TOKEN_TTL: '2' })
})
afterAll(async () => {
  await short?.close()
})

test('param: LATCH_FORK_TOKEN_TTL shortens a fork token life', async () => {
  const s = short?.server as TestServer
  await s.clock.frozen(async () => {
    const { appId, fork } = await forked(s)
    const row = await s.deps.db
      .selectFrom('fork_tokens')
      .select(['created_at', 'expires_at'])
      .where('app_id', '=', appId)
      .executeTakeFirstOrThrow()
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(2000)
    s.clock.advance(2000)
    const late = await recover(s, appId, fork.new_session_refresh_token)
    expect(late.body).toMatchObject({ error: { code: 'fork_token_expired' } })
  })
})

/** A signed-in session's wallet credential, as its sign-in set it: `name=value`. */
function credentialOf(s: TestServer, appId: string, accessToken: string): string {
  const { sid } = JSON.parse(
    Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString('utf8'),
  ) as { sid: string }
  return `${walletCredentialName(sid)}=${walletCredentialValue(s.deps, appId, sid)}`
}

/** The cookie an answer set (the fork redemption's own wallet credential). */
function cookieSetBy(headers: Headers): string {
  const set = headers.getSetCookie().find((c) => c.startsWith(WALLET_CREDENTIAL_PREFIX))
  if (!set) throw new Error('no wallet credential was set')
  return set.split(';')[0] as string
}

/** The wallet frame's own requests: same-origin fetch metadata and the session's cookie. */
const frameHeaders = (cookie: string) => ({ cookie, 'sec-fetch-site': 'same-origin' })

/** A device's wallet frame (its own code, its own share store) in the browser of `cookie`. */
function device(s: TestServer, appId: string, cookie: string) {
  const shares = new Map<string, Uint8Array>()
  const store: ShareStore = {
    persistent: false,
    get: (a) => shares.get(a.toLowerCase()),
    set: (a, share) => void shares.set(a.toLowerCase(), share),
  }
  const fetcher = ((url: string, init: RequestInit) =>
    s.api.request(url, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), ...frameHeaders(cookie) },
    })) as typeof fetch
  return walletCore({ api: fetchApi('', appId, fetcher), store, kdf: { m: 64, t: 1, p: 1 } })
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

describeBackends('session fork: the token travels only in bodies', (get) => {
  test('behavior: the server reads a fork token from the POST body only, never from the address, and logs none', async () => {
    const s = get()
    const { appId, fork } = await forked(s)
    const token = fork.new_session_refresh_token
    // A token on the request's address (where a fragment never arrives, and a query string
    // would be logged) is not read: nothing redeemed, nothing spent.
    const inQuery = await s.request(`/sessions/fork/recover?latch_fork=${token}`, {
      appId,
      body: {},
    })
    expect(inQuery.status).toBe(400)
    expect(inQuery.body).toMatchObject({ error: { code: 'invalid_data' } })
    const spent = await s.deps.db
      .selectFrom('fork_tokens')
      .select('used_at')
      .where('app_id', '=', appId)
      .executeTakeFirstOrThrow()
    expect(spent.used_at).toBeNull()
    expect((await recover(s, appId, token)).status).toBe(200)
    expect(s.logs.join('\n')).not.toContain(token)
  })
})

describeBackends('session fork: the wallet only through pairing', (get) => {
  /** Signs in, creates an automatic-recovery wallet (or a passcode one), forks and redeems. */
  async function forkedWithWallet(recoveryPin?: string) {
    const s = get()
    const { appId, auth, fork } = await forked(s)
    const cookie = credentialOf(s, appId, auth.token)
    const { address } = await device(s, appId, cookie).create({
      accessToken: fork.token,
      ...(recoveryPin ? { recoveryPin } : {}),
    })
    const child = await recover(s, appId, fork.new_session_refresh_token)
    expect(child.status).toBe(200)
    const childCookie = cookieSetBy(child.headers)
    return { s, appId, auth, fork, cookie, address, child: child.body, childCookie }
  }

  const start = (s: TestServer, appId: string, token: string, headers = {}) =>
    s.request<{ code: string; expiresAt: string }>('/wallets/fork/pair/start', {
      appId,
      token,
      headers,
      body: {},
    })
  const finish = (s: TestServer, appId: string, token: string, code: string, headers = {}) =>
    s.request('/wallets/fork/pair/finish', { appId, token, headers, body: { code } })
  /** A code the forking session's wallet frame showed. */
  const shown = async (s: TestServer, appId: string, token: string, cookie: string) => {
    const r = await start(s, appId, token, frameHeaders(cookie))
    expect(r.status).toBe(200)
    expect(r.body.code).toMatch(/^\d{6}$/)
    return r.body.code
  }
  /** Another six digits. */
  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0')

  test('attack: a refresh token alone, forked and redeemed from outside any browser, reaches no share: automatic recovery and the auth share are refused until paired', async () => {
    const { s, appId, fork, cookie, address, child, childCookie } = await forkedWithWallet()
    // The redemption handed this client the forked session's credential; it forges the
    // wallet frame's metadata too. Still nothing that holds a share answers.
    const headers = { authorization: `Bearer ${child.token}`, ...frameHeaders(childCookie) }
    for (const path of ['/wallets/recover', '/wallets/shares']) {
      const r = await s.request(path, { appId, headers, body: { address } })
      expect(r.status).toBe(403)
      expect(r.body).toMatchObject({ error: { code: 'fork_wallet_not_confirmed' } })
    }
    const phone = device(s, appId, childCookie)
    const before = await refusal(phone.recover({ address, accessToken: child.token }))
    expect(before.code).toBe('fork_wallet_not_confirmed')
    expect(before.status).toBe(403)
    // Nor can it make a code of its own (an unpaired fork hands nothing on), or link a method.
    const own = await start(s, appId, child.token, frameHeaders(childCookie))
    expect(own.body).toMatchObject({ error: { code: 'fork_wallet_not_confirmed' } })

    // The legitimate path: the code the original device's frame shows, typed on the new one.
    const code = await shown(s, appId, fork.token, cookie)
    const ok = await finish(s, appId, child.token, code, frameHeaders(childCookie))
    expect(ok.status).toBe(200)
    expect(ok.body).toEqual({ paired: true })
    await expect(phone.recover({ address, accessToken: child.token })).resolves.toEqual({
      address,
    })
  })

  test('refusal: pairing happens only in the wallet frames: no cookie, no same-origin metadata, or a mixed credential records nothing', async () => {
    const { s, appId, fork, cookie, child, childCookie } = await forkedWithWallet()
    // The host page's view: the access token, no cookie (or the browser's cross-site metadata).
    expect((await start(s, appId, fork.token)).body).toMatchObject({
      error: { code: 'origin_not_allowed' },
    })
    const noCookie = await start(s, appId, fork.token, { 'sec-fetch-site': 'same-origin' })
    expect(noCookie.body).toMatchObject({ error: { code: 'wallet_sign_in_required' } })
    for (const site of ['cross-site', 'same-site']) {
      const r = await start(s, appId, fork.token, { cookie, 'sec-fetch-site': site })
      expect(r.status).toBe(403)
    }
    const code = await shown(s, appId, fork.token, cookie)
    // The code sent by a script of the modal or the host page, not the new device's frame.
    const fromHost = await finish(s, appId, child.token, code, {
      cookie: childCookie,
      'sec-fetch-site': 'cross-site',
    })
    expect(fromHost.status).toBe(403)
    // The forked session's token with another session's cookie.
    const mixed = await finish(s, appId, child.token, code, frameHeaders(cookie))
    expect(mixed.body).toMatchObject({ error: { code: 'wallet_sign_in_required' } })
    const row = await s.deps.db
      .selectFrom('fork_tokens')
      .select('paired_mac')
      .where('hash', '=', s.deps.secrets.mac('fork-token', fork.new_session_refresh_token))
      .executeTakeFirstOrThrow()
    expect(row.paired_mac).toBeNull()
  })

  test('refusal: a wrong, expired, replayed or spent-by-guessing code pairs nothing, and a code typed in another session is refused', async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const { appId, auth, fork, cookie, address, child, childCookie } = await forkedWithWallet()
      const phone = { token: child.token, headers: frameHeaders(childCookie) }
      // Wrong: refused with a clear error, counted.
      const code = await shown(s, appId, fork.token, cookie)
      const bad = await finish(s, appId, phone.token, wrong(code), phone.headers)
      expect(bad.status).toBe(422)
      expect(bad.body).toMatchObject({
        error: {
          code: 'invalid_verification_code',
          message:
            'That pairing code is not right, or it expired. Show a new one on your other device.',
        },
      })
      expect((await finish(s, appId, phone.token, 'abc', phone.headers)).status).toBe(400)
      // Expired: the right code after its 5 minutes.
      s.clock.advance(PAIRING_TTL_MS)
      const late = await finish(s, appId, phone.token, code, phone.headers)
      expect(late.body).toMatchObject({ error: { code: 'invalid_verification_code' } })
      // Attempt-limited: five wrong codes spend it; the right one then opens nothing.
      const second = await shown(s, appId, fork.token, cookie)
      for (let i = 0; i < PAIRING_MAX_ATTEMPTS; i++) {
        await finish(s, appId, phone.token, wrong(second), phone.headers)
      }
      const spent = await finish(s, appId, phone.token, second, phone.headers)
      expect(spent.body).toMatchObject({ error: { code: 'invalid_verification_code' } })
      // Another session types this session's code: a second sign-in of the same user, and a
      // fork of that other session. Neither was forked from the session that showed it.
      const third = await shown(s, appId, fork.token, cookie)
      const other = await s.emailLogin(appId, auth.user.email?.address ?? '')
      const otherCookie = credentialOf(s, appId, other.token)
      const notFork = await finish(s, appId, other.token, third, frameHeaders(otherCookie))
      expect(notFork.status).toBe(409)
      const otherFork = await s.request<ForkResponse>('/sessions/fork', {
        appId,
        ip: freshIp(),
        body: { refresh_token: other.refresh_token },
      })
      const cousin = await recover(s, appId, otherFork.body.new_session_refresh_token)
      const cousinTry = await finish(
        s,
        appId,
        cousin.body.token,
        third,
        frameHeaders(cookieSetBy(cousin.headers)),
      )
      expect(cousinTry.body).toMatchObject({ error: { code: 'invalid_verification_code' } })
      const cousinRecover = await refusal(
        device(s, appId, cookieSetBy(cousin.headers)).recover({
          address,
          accessToken: cousin.body.token,
        }),
      )
      expect(cousinRecover.code).toBe('fork_wallet_not_confirmed')
      // The right session, the right code: paired; the same code again is spent.
      expect((await finish(s, appId, phone.token, third, phone.headers)).status).toBe(200)
      const again = await forkedAgain(s, appId, fork.refresh_token)
      const replay = await finish(s, appId, again.token, third, frameHeaders(again.cookie))
      expect(replay.body).toMatchObject({ error: { code: 'invalid_verification_code' } })
    })
  })

  /** Another fork of the first session (its latest refresh token), redeemed. */
  async function forkedAgain(s: TestServer, appId: string, latest: string) {
    const again = await s.request<ForkResponse>('/sessions/fork', {
      appId,
      ip: freshIp(),
      body: { refresh_token: latest },
    })
    expect(again.status).toBe(200)
    const redeemed = await recover(s, appId, again.body.new_session_refresh_token)
    return { token: redeemed.body.token, cookie: cookieSetBy(redeemed.headers) }
  }

  test('refusal: a user without a wallet has nothing to pair, and an unpaired fork cannot hand the wallet on by forking again', async () => {
    const { s, appId, address, child, childCookie } = await forkedWithWallet()
    const again = await s.request<ForkResponse>('/sessions/fork', {
      appId,
      ip: freshIp(),
      body: { refresh_token: child.refresh_token },
    })
    expect(again.status).toBe(200)
    const relay = await start(s, appId, again.body.token, frameHeaders(childCookie))
    expect(relay.body).toMatchObject({ error: { code: 'fork_wallet_not_confirmed' } })
    const grandchild = await recover(s, appId, again.body.new_session_refresh_token)
    const refused = await refusal(
      device(s, appId, cookieSetBy(grandchild.headers)).recover({
        address,
        accessToken: grandchild.body.token,
      }),
    )
    expect(refused.code).toBe('fork_wallet_not_confirmed')
    const none = await forked(s)
    const r = await start(
      s,
      none.appId,
      none.auth.token,
      frameHeaders(credentialOf(s, none.appId, none.auth.token)),
    )
    expect(r.status).toBe(409)
    expect(r.body).toMatchObject({ error: { message: 'There is no wallet to pair' } })
  })

  test('attack: a database writer without the secret plants a fork token of its own choosing, or marks a fork paired: neither opens', async () => {
    const { s, appId, auth, fork, cookie, address, child, childCookie } = await forkedWithWallet()
    // A row holding the SHA-256 of a token the writer chose (what the old form stored).
    const chosen = 'W'.repeat(43)
    const now = new Date()
    await s.deps.db
      .insertInto('fork_tokens')
      .values({
        hash: hashToken(chosen),
        app_id: appId,
        session_id: sessionOf(auth.token),
        created_at: now,
        expires_at: new Date(now.getTime() + 60_000),
        wallet_confirmed_at: now,
      })
      .execute()
    const planted = await recover(s, appId, chosen)
    expect(planted.status).toBe(401)
    expect(planted.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
    // The old confirmation column, and a pairing MAC the writer made up or copied, open nothing.
    const phone = device(s, appId, childCookie)
    const tokenRow = s.deps.secrets.mac('fork-token', fork.new_session_refresh_token)
    await s.deps.db
      .updateTable('fork_tokens')
      .set({ wallet_confirmed_at: now, paired_mac: 'x'.repeat(43) })
      .where('hash', '=', tokenRow)
      .execute()
    expect((await refusal(phone.recover({ address, accessToken: child.token }))).code).toBe(
      'fork_wallet_not_confirmed',
    )
    // A genuine pairing of one fork, copied onto another fork's row.
    const code = await shown(s, appId, fork.token, cookie)
    expect((await finish(s, appId, child.token, code, frameHeaders(childCookie))).status).toBe(200)
    const { paired_mac } = await s.deps.db
      .selectFrom('fork_tokens')
      .select('paired_mac')
      .where('hash', '=', tokenRow)
      .executeTakeFirstOrThrow()
    const other = await forkedAgain(s, appId, fork.refresh_token)
    await s.deps.db
      .updateTable('fork_tokens')
      .set({ paired_mac })
      .where('redeemed_session_id', '=', sessionOf(other.token))
      .execute()
    const copied = await refusal(
      device(s, appId, other.cookie).recover({ address, accessToken: other.token }),
    )
    expect(copied.code).toBe('fork_wallet_not_confirmed')
  })

  test('behavior: the sweep keeps a spent link while its sessions live; a forked session without its row is refused', async () => {
    const { s, appId, fork, cookie, address, child, childCookie } = await forkedWithWallet()
    const code = await shown(s, appId, fork.token, cookie)
    expect((await finish(s, appId, child.token, code, frameHeaders(childCookie))).status).toBe(200)
    // Past the token's life: an unspent one goes, the spent one stays.
    const unspent = await forked(s)
    s.clock.advance(PAIRING_TTL_MS + 1)
    await sweep(s.deps.db, s.clock)
    const rows = await s.deps.db
      .selectFrom('fork_tokens')
      .select('hash')
      .where('app_id', 'in', [appId, unspent.appId])
      .execute()
    expect(rows.map((r) => r.hash)).toEqual([
      s.deps.secrets.mac('fork-token', fork.new_session_refresh_token),
    ])
    const pairings = await s.deps.db
      .selectFrom('wallet_pairings')
      .select('id')
      .where('app_id', '=', appId)
      .execute()
    expect(pairings).toEqual([])
    const phone = device(s, appId, childCookie)
    await expect(phone.recover({ address, accessToken: child.token })).resolves.toEqual({
      address,
    })
    // Fail closed: a forked session whose row is gone cannot recover automatically.
    await s.deps.db.deleteFrom('fork_tokens').where('app_id', '=', appId).execute()
    const orphan = await refusal(
      device(s, appId, childCookie).recover({ address, accessToken: child.token }),
    )
    expect(orphan.code).toBe('fork_wallet_not_confirmed')
  })

  test('behavior: passcode recovery stays open to an unpaired forked session (it needs the passcode)', async () => {
    const { s, appId, address, child, childCookie } = await forkedWithWallet('k7Qm2x')
    await expect(
      device(s, appId, childCookie).recover({
        address,
        accessToken: child.token,
        recoveryPin: 'k7Qm2x',
      }),
    ).resolves.toEqual({ address })
  })
})

/** The session id an access token names. */
function sessionOf(accessToken: string): string {
  return (
    JSON.parse(Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      sid: string
    }
  ).sid
}

test('behavior: a pairing made before a secret rotation keeps the wallet during it, and secret rotate makes it again under the new secret', async () => {
  const started = await startTestServer('pglite', 'memory://')
  try {
    const s = started.server
    const { appId, auth, fork } = await forked(s)
    const cookie = credentialOf(s, appId, auth.token)
    await device(s, appId, cookie).create({ accessToken: fork.token })
    const child = await recover(s, appId, fork.new_session_refresh_token)
    const childCookie = cookieSetBy(child.headers)
    const code = await s.request<{ code: string }>('/wallets/fork/pair/start', {
      appId,
      token: fork.token,
      headers: frameHeaders(cookie),
      body: {},
    })
    const paired = await s.request('/wallets/fork/pair/finish', {
      appId,
      token: child.body.token,
      headers: frameHeaders(childCookie),
      body: { code: code.body.code },
    })
    expect(paired.status).toBe(200)
    const sid = sessionOf(child.body.token)
    const NEW = 'a-new-secret-a-new-secret-a-new-secret-0123456789'
    const during = { ...s.deps, secrets: createSecrets(NEW, TEST_SECRET) }
    expect(await walletHandedOver(during, sid)).toBe(true)
    expect((await rotateSecret(during, { check: true })).tables.fork_tokens).toEqual({
      resealed: 1,
      current: 0,
      unreadable: 0,
    })
    await rotateSecret(during)
    const after = { ...s.deps, secrets: createSecrets(NEW) }
    expect(await walletHandedOver(after, sid)).toBe(true)
    // Under the old secret alone the rewritten MAC no longer opens: it was made again.
    expect(await walletHandedOver(s.deps, sid)).toBe(false)
  } finally {
    await started.close()
  }
})
