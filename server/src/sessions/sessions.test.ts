import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { AccessTokenClaims, AuthResponse, ForkResponse, RefreshResponse } from '@latch/shared'
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose'
import { expect, test } from 'vitest'
import { describeBackends } from '../test-support.ts'
import { FORK_TOKEN_TTL_MS, REFRESH_GRACE_MS, SESSION_LIFETIME_MS } from './service.ts'

let n = 0
const email = () => `session.${++n}.${Date.now()}@example.com`

describeBackends('sessions', (get) => {
  async function signedIn(): Promise<{ appId: string; auth: AuthResponse }> {
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

  test('error: unknown, empty, other-app and expired refresh tokens', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const unknown = await s.request('/sessions', { appId, body: { refresh_token: 'nope' } })
    expect(unknown.status).toBe(401)
    const empty = await s.request('/sessions', { appId, body: { refresh_token: '' } })
    expect(empty.status).toBe(400)
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
    const child = ok[0]?.body as RefreshResponse
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

  test('error: a fork token lives 60 s', async () => {
    const s = get()
    const { appId, auth } = await signedIn()
    const fork = await s.request<ForkResponse>('/sessions/fork', {
      appId,
      body: { refresh_token: auth.refresh_token },
    })
    s.clock.advance(FORK_TOKEN_TTL_MS + 1)
    const late = await s.request('/sessions/fork/recover', {
      appId,
      body: { refresh_token: fork.body.new_session_refresh_token },
    })
    expect(late.status).toBe(401)
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

  test('behavior: refresh tokens are stored hashed, the live child only sealed', async () => {
    const s = get()
    const { auth } = await signedIn()
    const rows = await s.deps.db.selectFrom('refresh_tokens').selectAll().execute()
    expect(JSON.stringify(rows)).not.toContain(auth.refresh_token)
  })
  test('behavior: a host backend verifies tokens against the published JWKS with jose', async () => {
    const s = get()
    // A real listener, as a host backend would fetch the key set over HTTP.
    const listener = serve({ fetch: s.app.fetch, port: 0, hostname: '127.0.0.1' })
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
