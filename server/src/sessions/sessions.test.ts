import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { AccessTokenClaims, AuthResponse, ForkResponse, RefreshResponse } from '@latch/shared'
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose'
import { Kysely, Migrator, sql } from 'kysely'
import { expect, test } from 'vitest'
import { createSecrets } from '../crypto.ts'
import { MIGRATIONS, migrate } from '../db/migrations.ts'
import { pgliteDialect } from '../db/pglite-dialect.ts'
import type { Database } from '../db/schema.ts'
import { blankPglite } from '../testing/global-setup.ts'
import {
  type CookieToken,
  describeBackends,
  type RequestOptions,
  type TestSignIn,
} from '../testing/test-server.ts'
import { REFRESH_COOKIE_PREFIX, refreshCookieName } from './refresh-cookie.ts'
import { FORK_TOKEN_TTL_MS, REFRESH_GRACE_MS, SESSION_LIFETIME_MS } from './service.ts'

let n = 0
const email = () => `session.${++n}.${Date.now()}@example.com`

describeBackends('sessions', (get) => {
  async function signedIn(): Promise<{ appId: string; auth: TestSignIn }> {
    const s = get()
    const app = await s.newApp()
    return { appId: app.id, auth: await s.emailLogin(app.id, email()) }
  }

  test('behavior: the access token carries iss, aud = app id, sub = user id, sid, iat and a 15 minute exp', async () => {
    const { appId, auth } = await signedIn()
    const claims = decodeJwt(auth.token) as unknown as AccessTokenClaims
    expect(claims.iss).toBe('latch')
    expect(claims.aud).toBe(appId)
    expect(claims.sub).toBe(auth.user.id)
    expect(claims.sid).toMatch(/^[a-z0-9]{24}$/)
    expect(claims.exp - claims.iat).toBe(15 * 60)
  })

  test('behavior: refresh rotates the pair and answers the user', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const r = await s.request<RefreshResponse>('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(r.status).toBe(200)
    expect(r.body.user.id).toBe(auth.user.id)
    expect(r.body.refresh_token).not.toBe(auth.refresh_token)
    expect(decodeJwt(r.body.token).sid).toBe(decodeJwt(auth.token).sid)
    const again = await s.request<RefreshResponse>('/sessions', {
      appId,
      body: { refresh_token: r.body.refresh_token },
    })
    expect(again.status).toBe(200)
  })

  test('race: parallel refreshes with one token end with one live session, no revocation, one pair', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        s.request<RefreshResponse>('/sessions', {
          appId,
          body: { refresh_token: auth.refresh_token },
        }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200))
    const tokens = new Set(answers.map((a) => a.body.refresh_token))
    expect(tokens.size).toBe(1)
    const sid = decodeJwt(auth.token).sid as string
    const session = await s.deps.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', sid)
      .executeTakeFirstOrThrow()
    expect(session.revoked_at).toBeNull()
    const [current] = [...tokens]
    const next = await s.request('/sessions', { appId, body: { refresh_token: current } })
    expect(next.status).toBe(200)
  })

  test('behavior: the immediate parent within 10 s answers the current pair', async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const { appId, auth } = await signedIn()
      const first = await s.request<RefreshResponse>('/sessions', {
        appId,
        body: { refresh_token: auth.refresh_token },
      })
      s.clock.advance(REFRESH_GRACE_MS - 1000)
      const late = await s.request<RefreshResponse>('/sessions', {
        appId,
        body: { refresh_token: auth.refresh_token },
      })
      expect(late.status).toBe(200)
      expect(late.body.refresh_token).toBe(first.body.refresh_token)
    })
  })

  test('race: a stale token after the 10 s window revokes the whole session', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const first = await s.request<RefreshResponse>('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    s.clock.advance(REFRESH_GRACE_MS + 1000)
    const stale = await s.request('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(stale.status).toBe(401)
    expect(stale.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
    const current = await s.request('/sessions', {
      appId,
      body: { refresh_token: first.body.refresh_token },
    })
    expect(current.status).toBe(401)
    // The access token of the revoked session no longer passes either.
    const unlink = await s.request('/passwordless/unlink', {
      appId,
      token: first.body.token,
      body: { address: auth.user.email?.address },
    })
    expect(unlink.status).toBe(401)
  })

  test('behavior: a grandparent token inside 10 s is reuse too', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const a = await s.request<RefreshResponse>('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    await s.request('/sessions', { appId, body: { refresh_token: a.body.refresh_token } })
    const reuse = await s.request('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(reuse.status).toBe(401)
  })

  /** The app's refresh cookie as a browser holds it (name=value), from an answer's headers. */
  const refreshCookieOf = (headers: Headers, appId: string): string | undefined =>
    headers
      .getSetCookie()
      .find((c) => c.startsWith(`${refreshCookieName(appId)}=`))
      ?.split(';')[0]
  const modalFetch = (appId: string, cookie?: string): RequestOptions => ({
    appId,
    wire: true,
    body: {},
    headers: {
      origin: get().deps.config.modalOrigin ?? '',
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'cors',
      'sec-fetch-dest': 'empty',
      ...(cookie ? { cookie } : {}),
    },
  })

  test('security: a sign-in sets the refresh token only as an HttpOnly, Secure, SameSite=None, Partitioned cookie of the session routes; refresh rotates it, logout clears it, and no body carries it', async () => {
    const s = get()
    const app = await s.newApp()
    const address = email()
    await s.request('/passwordless/init', { appId: app.id, body: { email: address } })
    const code = await s.smtp.waitForCode(address, { timeoutMs: 10_000 })
    const auth = await s.request<AuthResponse>('/passwordless/authenticate', {
      appId: app.id,
      wire: true,
      body: { email: address, code },
    })
    expect(auth.status).toBe(200)
    expect(auth.body).not.toHaveProperty('refresh_token')
    const set = auth.headers.getSetCookie().find((c) => c.startsWith(REFRESH_COOKIE_PREFIX))
    expect(set).toMatch(
      new RegExp(
        `^${refreshCookieName(app.id)}=[a-z0-9]+\\.[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=/api/v1/sessions; HttpOnly; Secure; SameSite=None; Partitioned$`,
      ),
    )
    const first = refreshCookieOf(auth.headers, app.id)

    const refreshed = await s.request<RefreshResponse>('/sessions', modalFetch(app.id, first))
    expect(refreshed.status).toBe(200)
    expect(refreshed.body).not.toHaveProperty('refresh_token')
    expect(refreshed.body.user.id).toBe(auth.body.user.id)
    const second = refreshCookieOf(refreshed.headers, app.id)
    expect(second).toBeDefined()
    expect(second).not.toBe(first)

    const forked = await s.request<ForkResponse>('/sessions/fork', modalFetch(app.id, second))
    expect(forked.status).toBe(200)
    expect(Object.keys(forked.body).sort()).toEqual(['new_session_refresh_token', 'token'])
    const third = refreshCookieOf(forked.headers, app.id)
    expect(third).not.toBe(second)

    const out = await s.request('/sessions/logout', modalFetch(app.id, third))
    expect(out.status).toBe(200)
    expect(out.headers.getSetCookie()).toContain(
      `${refreshCookieName(app.id)}=; Max-Age=0; Path=/api/v1/sessions; HttpOnly; Secure; SameSite=None; Partitioned`,
    )
    // Logout ended the session: its last cookie refreshes nothing.
    expect((await s.request('/sessions', modalFetch(app.id, third))).status).toBe(401)
  })

  test('security: refresh, fork and logout refuse a request that is not the modal origin’s fetch, and change nothing', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const cookie = `${refreshCookieName(appId)}=${auth.refresh_token}`
    const refusedWith = async (path: string, headers: Record<string, string | undefined>) => {
      const options = modalFetch(appId, cookie)
      const merged = { ...options.headers, ...headers }
      for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key]
      const r = await s.request(path, { ...options, headers: merged as Record<string, string> })
      expect(r.status, `${path} ${JSON.stringify(headers)}`).toBe(403)
      expect(r.body).toMatchObject({ error: { code: 'origin_not_allowed' } })
      expect(r.headers.getSetCookie()).toEqual([])
    }
    for (const path of ['/sessions', '/sessions/fork', '/sessions/logout']) {
      // No Origin at all (a client outside a browser, or a browser that sent none).
      await refusedWith(path, { origin: undefined })
      // Another page's fetch: the host page, another site, the API origin's own pages.
      await refusedWith(path, { origin: 'http://localhost:5173' })
      await refusedWith(path, { origin: 'https://evil.example' })
      await refusedWith(path, { origin: 'null' })
      await refusedWith(path, { 'sec-fetch-site': 'same-origin' })
      // A navigation or a form post, whatever it claims.
      await refusedWith(path, { 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate' })
    }
    // Nothing changed: the token is still the live one.
    const r = await s.request('/sessions', modalFetch(appId, cookie))
    expect(r.status).toBe(200)
  })

  test('error: a refresh or fork without the cookie is a clear 401 and changes nothing; a body token is not read', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    for (const path of ['/sessions', '/sessions/fork']) {
      const bare = await s.request(path, modalFetch(appId))
      expect(bare.status).toBe(401)
      expect(bare.body).toMatchObject({
        error: {
          code: 'invalid_refresh_token',
          message: 'No refresh token: the session cookie was not sent',
        },
      })
      // The old body contract: the token in the body is ignored, not accepted.
      const inBody = await s.request(path, {
        ...modalFetch(appId),
        body: { refresh_token: auth.refresh_token },
      })
      expect(inBody.status).toBe(401)
    }
    const cookie = `${refreshCookieName(appId)}=${auth.refresh_token}`
    expect((await s.request('/sessions', modalFetch(appId, cookie))).status).toBe(200)
  })

  test('security: a replayed refresh cookie (past the grace) revokes the family, and the answer clears the cookie', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const old = `${refreshCookieName(appId)}=${auth.refresh_token}`
    const rotated = await s.request('/sessions', modalFetch(appId, old))
    expect(rotated.status).toBe(200)
    const live = refreshCookieOf(rotated.headers, appId)
    s.clock.advance(REFRESH_GRACE_MS + 1000)
    const replay = await s.request('/sessions', modalFetch(appId, old))
    expect(replay.status).toBe(401)
    expect(replay.headers.getSetCookie()).toContainEqual(
      expect.stringMatching(new RegExp(`^${refreshCookieName(appId)}=; Max-Age=0;`)),
    )
    // The thief's replay killed the live token too.
    expect((await s.request('/sessions', modalFetch(appId, live))).status).toBe(401)
  })

  test('error: unknown, empty, other-app and expired refresh tokens', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const unknown = await s.request('/sessions', { appId, body: { refresh_token: 'nope' } })
    expect(unknown.status).toBe(401)
    // No cookie: a 401 that says so.
    const empty = await s.request('/sessions', { appId, body: { refresh_token: '' } })
    expect(empty.status).toBe(401)
    expect(empty.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
    const other = await s.newApp()
    const cross = await s.request('/sessions', {
      appId: other.id,
      body: { refresh_token: auth.refresh_token },
    })
    expect(cross.status).toBe(401)
    s.clock.advance(SESSION_LIFETIME_MS + 1000)
    const expired = await s.request('/sessions', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(expired.status).toBe(401)
    s.clock.advance(-(SESSION_LIFETIME_MS + 1000))
  })

  test('behavior: logout revokes the session', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const out = await s.request('/sessions/logout', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(out.status).toBe(200)
    const r = await s.request('/sessions', { appId, body: { refresh_token: auth.refresh_token } })
    expect(r.status).toBe(401)
    const again = await s.request('/sessions/logout', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(again.status).toBe(200)
  })

  test('behavior: /sessions/user answers the user by the bearer token alone and rotates nothing; without a live session it is not_authenticated', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const out = await s.request<{ user: { id: string } }>('/sessions/user', {
      appId,
      token: auth.token,
      body: {},
    })
    expect(out.status).toBe(200)
    expect(Object.keys(out.body)).toEqual(['user'])
    expect(out.body.user.id).toBe(auth.user.id)
    // The refresh token is still the live one past the reuse grace: nothing rotated.
    s.clock.advance(REFRESH_GRACE_MS + 1000)
    const r = await s.request('/sessions', { appId, body: { refresh_token: auth.refresh_token } })
    expect(r.status).toBe(200)
    expect((await s.request('/sessions/user', { appId, body: {} })).status).toBe(401)
    await s.request('/sessions/logout', { appId, token: auth.token, body: {} })
    const ended = await s.request('/sessions/user', { appId, token: auth.token, body: {} })
    expect(ended.status).toBe(401)
    s.clock.advance(-(REFRESH_GRACE_MS + 1000))
  })

  test('behavior: logout with only the bearer token revokes its session', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const out = await s.request('/sessions/logout', { appId, token: auth.token, body: {} })
    expect(out.status).toBe(200)
    const r = await s.request('/sessions', { appId, body: { refresh_token: auth.refresh_token } })
    expect(r.status).toBe(401)
  })

  test('behavior: fork answers a rotated pair and a token that recovers into a child session once', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const fork = await s.request<ForkResponse>('/sessions/fork', {
      appId,
      token: auth.token,
      body: { refresh_token: auth.refresh_token },
    })
    expect(fork.status).toBe(200)
    expect(fork.body.refresh_token).not.toBe(auth.refresh_token)
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        s.request<RefreshResponse>('/sessions/fork/recover', {
          appId,
          body: { refresh_token: fork.body.new_session_refresh_token },
        }),
      ),
    )
    const ok = results.filter((r) => r.status === 200)
    expect(ok).toHaveLength(1)
    expect(results.filter((r) => r.status === 401)).toHaveLength(4)
    const child = ok[0]?.body as RefreshResponse & CookieToken
    expect(child.user.id).toBe(auth.user.id)
    const childSid = decodeJwt(child.token).sid
    expect(childSid).not.toBe(decodeJwt(auth.token).sid)
    const row = await s.deps.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', childSid as string)
      .executeTakeFirstOrThrow()
    expect(row.parent_id).toBe(decodeJwt(auth.token).sid)
    // Both sessions live on.
    expect(
      (await s.request('/sessions', { appId, body: { refresh_token: child.refresh_token } }))
        .status,
    ).toBe(200)
    expect(
      (await s.request('/sessions', { appId, body: { refresh_token: fork.body.refresh_token } }))
        .status,
    ).toBe(200)
  })

  test('error: a fork token lives 2 minutes', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const fork = await s.request<ForkResponse>('/sessions/fork', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(FORK_TOKEN_TTL_MS).toBe(2 * 60_000)
    s.clock.advance(FORK_TOKEN_TTL_MS + 1)
    const late = await s.request('/sessions/fork/recover', {
      appId,
      body: { refresh_token: fork.body.new_session_refresh_token },
    })
    expect(late.status).toBe(401)
    expect(late.body).toMatchObject({ error: { code: 'fork_token_expired' } })
  })

  test('error: a fork token of a logged-out session does not recover', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const fork = await s.request<ForkResponse>('/sessions/fork', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    await s.request('/sessions/logout', { appId, body: { refresh_token: fork.body.refresh_token } })
    const r = await s.request('/sessions/fork/recover', {
      appId,
      body: { refresh_token: fork.body.new_session_refresh_token },
    })
    expect(r.status).toBe(401)
  })

  /** Signs in, forks, and recovers the fork token into a child session. */
  async function family(): Promise<{
    appId: string
    auth: TestSignIn
    parent: ForkResponse & CookieToken
    child: RefreshResponse & CookieToken
  }> {
    const s = get()
    const { appId, auth } = await signedIn()
    const fork = await s.request<ForkResponse>('/sessions/fork', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    expect(fork.status).toBe(200)
    const child = await s.request<RefreshResponse>('/sessions/fork/recover', {
      appId,
      body: { refresh_token: fork.body.new_session_refresh_token },
    })
    expect(child.status).toBe(200)
    return { appId, auth, parent: fork.body, child: child.body }
  }

  /** Whether a refresh token still refreshes (it is spent when it does). */
  async function refreshes(appId: string, refreshToken: string): Promise<boolean> {
    const r = await get().request('/sessions', { appId, body: { refresh_token: refreshToken } })
    if (r.status !== 200 && r.status !== 401) throw new Error(`refresh answered ${r.status}`)
    return r.status === 200
  }

  /** Whether an access token still passes an endpoint that requires a live session. */
  async function authenticates(appId: string, token: string): Promise<boolean> {
    const r = await get().request('/passwordless/unlink', {
      appId,
      token,
      body: { address: 'not-linked@example.com' },
    })
    if (r.status !== 404 && r.status !== 401) throw new Error(`unlink answered ${r.status}`)
    // A forked session without its handover is refused the change, after its token was accepted.
    const code = (r.body as { error?: { code?: string } }).error?.code
    return r.status === 404 || code === 'link_sign_in_required'
  }

  test('race: a replayed parent token revokes the forked child and its rotations', async () => {
    const s = get()
    const { appId, auth, parent, child } = await family()
    // The child rotates once: its rotations belong to the family too.
    const rotated = await s.request<RefreshResponse>('/sessions', {
      appId,
      body: { refresh_token: child.refresh_token },
    })
    expect(rotated.status).toBe(200)
    s.clock.advance(REFRESH_GRACE_MS + 1000)
    // auth.refresh_token was rotated by the fork: presenting it now is reuse.
    expect(await refreshes(appId, auth.refresh_token)).toBe(false)
    expect(await refreshes(appId, rotated.body.refresh_token)).toBe(false)
    expect(await refreshes(appId, child.refresh_token)).toBe(false)
    expect(await refreshes(appId, parent.refresh_token)).toBe(false)
    expect(await authenticates(appId, rotated.body.token)).toBe(false)
    expect(await authenticates(appId, parent.token)).toBe(false)
    const rows = await s.deps.db
      .selectFrom('sessions')
      .select(['revoked_reason'])
      .where('id', 'in', [
        decodeJwt(parent.token).sid as string,
        decodeJwt(child.token).sid as string,
      ])
      .execute()
    expect(rows.map((r) => r.revoked_reason)).toEqual([
      'refresh_token_reuse',
      'refresh_token_reuse',
    ])
  })

  test('race: a replayed child token revokes the parent it was forked from', async () => {
    const s = get()
    const { appId, parent, child } = await family()
    const rotated = await s.request<RefreshResponse>('/sessions', {
      appId,
      body: { refresh_token: child.refresh_token },
    })
    expect(rotated.status).toBe(200)
    s.clock.advance(REFRESH_GRACE_MS + 1000)
    expect(await refreshes(appId, child.refresh_token)).toBe(false)
    expect(await authenticates(appId, parent.token)).toBe(false)
    expect(await refreshes(appId, parent.refresh_token)).toBe(false)
    expect(await refreshes(appId, rotated.body.refresh_token)).toBe(false)
  })

  test('behavior: logout of the parent ends the child, and logout of a child ends the parent', async () => {
    const s = get()
    const first = await family()
    const out = await s.request('/sessions/logout', {
      appId: first.appId,
      body: { refresh_token: first.parent.refresh_token },
    })
    expect(out.status).toBe(200)
    expect(await authenticates(first.appId, first.child.token)).toBe(false)
    expect(await refreshes(first.appId, first.child.refresh_token)).toBe(false)

    const second = await family()
    // The child's bearer token alone names its session.
    const childOut = await s.request('/sessions/logout', {
      appId: second.appId,
      token: second.child.token,
      body: {},
    })
    expect(childOut.status).toBe(200)
    expect(await authenticates(second.appId, second.parent.token)).toBe(false)
    expect(await refreshes(second.appId, second.parent.refresh_token)).toBe(false)
  })

  test("error: logout with another app's token or session revokes nothing", async () => {
    const s = get()
    const { appId, parent, child } = await family()
    const other = await s.newApp()
    const out = await s.request('/sessions/logout', {
      appId: other.id,
      body: { refresh_token: parent.refresh_token },
    })
    expect(out.status).toBe(200)
    const bearer = await s.request('/sessions/logout', {
      appId: other.id,
      token: child.token,
      body: {},
    })
    expect(bearer.status).toBe(200)
    expect(await authenticates(appId, child.token)).toBe(true)
    expect(await refreshes(appId, parent.refresh_token)).toBe(true)
  })

  test('race: recovering a fork while its parent token is replayed leaves no live child', async () => {
    const s = get()
    for (let round = 0; round < 3; round++) {
      const { appId, auth } = await signedIn()
      const fork = await s.request<ForkResponse>('/sessions/fork', {
        appId,
        body: { refresh_token: auth.refresh_token },
      })
      s.clock.advance(REFRESH_GRACE_MS + 1000)
      const [recovered, replay] = await Promise.all([
        s.request<RefreshResponse>('/sessions/fork/recover', {
          appId,
          body: { refresh_token: fork.body.new_session_refresh_token },
        }),
        s.request('/sessions', { appId, body: { refresh_token: auth.refresh_token } }),
      ])
      expect(replay.status).toBe(401)
      expect([200, 401]).toContain(recovered.status)
      if (recovered.status === 200) {
        expect(await authenticates(appId, recovered.body.token)).toBe(false)
        expect(await refreshes(appId, recovered.body.refresh_token)).toBe(false)
      }
    }
  })

  test('race: a child refreshing while the parent logs out ends revoked', async () => {
    const s = get()
    const { appId, parent, child } = await family()
    let current = child.refresh_token
    const refreshing = (async () => {
      for (let i = 0; i < 4; i++) {
        const r = await s.request<RefreshResponse>('/sessions', {
          appId,
          body: { refresh_token: current },
        })
        if (r.status !== 200) return
        current = r.body.refresh_token
      }
    })()
    const out = s.request('/sessions/logout', {
      appId,
      body: { refresh_token: parent.refresh_token },
    })
    await Promise.all([refreshing, out])
    expect(await refreshes(appId, current)).toBe(false)
  })

  test('behavior: a member made after its family was revoked is not live (the root is checked)', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const rootId = decodeJwt(auth.token).sid as string
    await s.request('/sessions/logout', { appId, body: { refresh_token: auth.refresh_token } })
    // What a fork/recover racing the revocation can leave behind: an unrevoked member whose
    // own row the revoking statement never saw.
    const { createSession, isSessionLive } = await import('./service.ts')
    const root = await s.deps.db
      .selectFrom('sessions')
      .select(['user_id', 'expires_at'])
      .where('id', '=', rootId)
      .executeTakeFirstOrThrow()
    const late = await createSession(s.deps, appId, root.user_id, {
      parentId: rootId,
      familyId: rootId,
      expiresAt: root.expires_at,
    })
    expect(await isSessionLive(s.deps, appId, late.sessionId)).toBe(false)
    expect(await authenticates(appId, late.token)).toBe(false)
    expect(await refreshes(appId, late.refreshToken)).toBe(false)
  })

  test("behavior: a fork ends with its family's sign-in, never later", async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const { appId, auth } = await signedIn()
      s.clock.advance(SESSION_LIFETIME_MS / 2)
      const fork = await s.request<ForkResponse>('/sessions/fork', {
        appId,
        body: { refresh_token: auth.refresh_token },
      })
      const child = await s.request<RefreshResponse>('/sessions/fork/recover', {
        appId,
        body: { refresh_token: fork.body.new_session_refresh_token },
      })
      expect(child.status).toBe(200)
      const [root, member] = await Promise.all(
        [auth.token, child.body.token].map((t) =>
          s.deps.db
            .selectFrom('sessions')
            .select('expires_at')
            .where('id', '=', decodeJwt(t).sid as string)
            .executeTakeFirstOrThrow(),
        ),
      )
      expect(member?.expires_at.getTime()).toBe(root?.expires_at.getTime())
      s.clock.advance(SESSION_LIFETIME_MS / 2 + 1000)
      expect(await refreshes(appId, child.body.refresh_token)).toBe(false)
      s.clock.advance(-(SESSION_LIFETIME_MS + 1000))
    })
  })

  test('behavior: the sweep deletes ended sessions with their tokens, forgets sealed copies after 10 s, keeps live rotations', async () => {
    const s = get()
    const { sweep } = await import('../sweep.ts')
    const ended = await signedIn()
    const live = await signedIn()
    const endedSid = decodeJwt(ended.auth.token).sid as string
    const liveSid = decodeJwt(live.auth.token).sid as string
    // The ended session is made to end now; the live one rotates twice.
    await s.deps.db
      .updateTable('sessions')
      .set({ expires_at: new Date(s.clock.now().getTime() - 1000) })
      .where('id', '=', endedSid)
      .execute()
    const once = await s.request<RefreshResponse>('/sessions', {
      appId: live.appId,
      body: { refresh_token: live.auth.refresh_token },
    })
    await s.request('/sessions', {
      appId: live.appId,
      body: { refresh_token: once.body.refresh_token },
    })
    const tokensOf = (sid: string) =>
      s.deps.db
        .selectFrom('refresh_tokens')
        .select(['rotated_at', 'child_sealed'])
        .where('session_id', '=', sid)
        .execute()
    await sweep(s.deps.db, s.clock)
    // Within the grace window the last rotation keeps its sealed copy.
    expect((await tokensOf(liveSid)).filter((t) => t.child_sealed !== null)).toHaveLength(1)
    s.clock.advance(REFRESH_GRACE_MS + 1000)
    await sweep(s.deps.db, s.clock)
    s.clock.advance(-(REFRESH_GRACE_MS + 1000))
    const gone = await s.deps.db
      .selectFrom('sessions')
      .select('id')
      .where('id', '=', endedSid)
      .execute()
    expect(gone).toHaveLength(0)
    expect(await tokensOf(endedSid)).toHaveLength(0)
    const kept = await tokensOf(liveSid)
    expect(kept).toHaveLength(3)
    expect(kept.filter((t) => t.rotated_at !== null)).toHaveLength(2)
    expect(kept.every((t) => t.child_sealed === null)).toBe(true)
    // A swept-away rotation is still recognized as reuse while its session lives.
    expect(await refreshes(live.appId, live.auth.refresh_token)).toBe(false)
    expect(await authenticates(live.appId, once.body.token)).toBe(false)
  })

  test('behavior: refresh tokens are stored hashed, the live child only sealed', async () => {
    const s = get()
    const { auth } = await signedIn()
    const rows = await s.deps.db.selectFrom('refresh_tokens').selectAll().execute()
    expect(JSON.stringify(rows)).not.toContain(auth.refresh_token)
  })
  test('behavior: a host backend verifies tokens against the published JWKS with jose', async () => {
    const s = get()
    // A real listener, as a host backend would fetch the key set over HTTP.
    const listener = serve({ fetch: s.api.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((resolve) => listener.once('listening', () => resolve()))
    const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`
    try {
      const { appId, auth } = await signedIn()
      const jwksUrl = new URL(`${base}/api/v1/apps/${appId}/jwks.json`)
      const { payload, protectedHeader } = await jwtVerify(
        auth.token,
        createRemoteJWKSet(jwksUrl),
        {
          issuer: 'latch',
          audience: appId,
          algorithms: ['ES256'],
          currentDate: s.clock.now(),
        },
      )
      expect(protectedHeader.alg).toBe('ES256')
      expect(payload.sub).toBe(auth.user.id)
      const keys = (await (await fetch(jwksUrl)).json()) as { keys: { kid: string; d?: string }[] }
      expect(keys.keys).toHaveLength(2)
      expect(keys.keys.every((k) => k.d === undefined)).toBe(true)
      // After a rotation the next key signs, and it was published before.
      await s.deps.keys.rotate(appId)
      const rotated = await s.request<RefreshResponse>('/sessions', {
        appId,
        body: { refresh_token: auth.refresh_token },
      })
      const kid = decodeProtectedKid(rotated.body.token)
      expect(kid).not.toBe(protectedHeader.kid)
      expect(keys.keys.map((k) => k.kid)).toContain(kid)
      // A token signed before the rotation still verifies, by the server and by the host.
      const stillOk = await s.request('/passwordless/unlink', {
        appId,
        token: auth.token,
        body: { address: 'not-linked@example.com' },
      })
      expect(stillOk.status).toBe(404)
      await jwtVerify(auth.token, createRemoteJWKSet(jwksUrl, { cacheMaxAge: 0 }), {
        audience: appId,
        currentDate: s.clock.now(),
      })
      // Another app's key set and audience refuse the token.
      const other = await s.newApp()
      await expect(
        jwtVerify(
          auth.token,
          createRemoteJWKSet(new URL(`${base}/api/v1/apps/${other.id}/jwks.json`)),
          { audience: other.id, currentDate: s.clock.now() },
        ),
      ).rejects.toThrow()
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()))
    }
  })
})

function decodeProtectedKid(token: string): string {
  const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as {
    kid: string
  }
  return header.kid
}

test('behavior: migration 0005 puts existing forks in their families, ends them with the root, and revokes children of a revoked parent', async () => {
  const db = new Kysely<Database>({ dialect: pgliteDialect(blankPglite()) })
  try {
    const raw = db as Kysely<unknown>
    const before = new Migrator({ db: raw, provider: { getMigrations: async () => MIGRATIONS } })
    // The schema just before 0005, whatever migrations precede it.
    const previous = Object.keys(MIGRATIONS)
      .sort()
      .filter((name) => name < '0005_session_family_indexes')
      .at(-1)
    expect((await before.migrateTo(previous ?? '')).error).toBeUndefined()
    const now = new Date()
    const later = (days: number) => new Date(now.getTime() + days * 86_400_000)
    await sql`INSERT INTO apps (id, name, allowed_origins, login_methods, allowlist_entries,
      allowlist_config, appearance, legal, embedded_wallet_config, created_at, updated_at)
      VALUES ('app', 'App', '[]', '[]', '[]', '{}', '{}', '{}', '{}', ${now}, ${now})`.execute(db)
    await sql`INSERT INTO users (id, app_id, created_at) VALUES ('u', 'app', ${now})`.execute(db)
    const session = (id: string, parent: string | null, expires: Date, revoked: Date | null) =>
      sql`INSERT INTO sessions (id, app_id, user_id, parent_id, created_at, expires_at, revoked_at,
        revoked_reason) VALUES (${id}, 'app', 'u', ${parent}, ${now}, ${expires}, ${revoked},
        ${revoked ? 'refresh_token_reuse' : null})`.execute(db)
    // A revoked sign-in with a live child and grandchild; a live sign-in with a live child
    // that would outlive it.
    await session('revoked-root', null, later(10), now)
    await session('revoked-child', 'revoked-root', later(20), null)
    await session('revoked-grandchild', 'revoked-child', later(30), null)
    await session('live-root', null, later(5), null)
    await session('live-child', 'live-root', later(25), null)
    await migrate(raw, createSecrets('migration-test-secret-0123456789abcdef'))
    const rows = await db
      .selectFrom('sessions')
      .select(['id', 'family_id', 'expires_at', 'revoked_reason'])
      .orderBy('id')
      .execute()
    expect(rows.map((r) => [r.id, r.family_id, r.revoked_reason])).toEqual([
      ['live-child', 'live-root', null],
      ['live-root', 'live-root', null],
      ['revoked-child', 'revoked-root', 'refresh_token_reuse'],
      ['revoked-grandchild', 'revoked-root', 'refresh_token_reuse'],
      ['revoked-root', 'revoked-root', 'refresh_token_reuse'],
    ])
    const expiry = Object.fromEntries(rows.map((r) => [r.id, r.expires_at.getTime()]))
    expect(expiry['live-child']).toBe(later(5).getTime())
    expect(expiry['revoked-grandchild']).toBe(later(10).getTime())
  } finally {
    await db.destroy()
  }
})
