/**
 * The session fork's refusals (sessions.test.ts holds its happy path and its family races):
 * a spent, expired, unknown or other app's token, the family's revocation, the shortened life a
 * setting gives, and the rate limits.
 */
import type { AuthResponse, ForkResponse, RefreshResponse } from '@latch/shared'
import { afterAll, beforeAll, expect, test } from 'vitest'
import {
  describeBackends,
  freshIp,
  startTestServer,
  type TestServer,
} from '../testing/test-server.ts'
import { FORK_IP_LIMIT, FORK_RECOVER_IP_LIMIT } from './routes.ts'

let n = 0
const email = () => `fork.${++n}.${Date.now()}@example.com`

async function forked(s: TestServer, ip = freshIp()) {
  const app = await s.newApp()
  const auth: AuthResponse = await s.emailLogin(app.id, email(), ip)
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

  test('error: an expired fork token says so, the moment its life ends', async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const { appId, fork } = await forked(s)
      s.clock.advance(5 * 60_000)
      const late = await recover(s, appId, fork.new_session_refresh_token)
      expect(late.status).toBe(401)
      expect(late.body).toMatchObject({
        error: { code: 'fork_token_expired', message: 'This session link has expired' },
      })
    })
  })

  test('behavior: a fork token is alive just before its 5 minutes end', async () => {
    const s = get()
    await s.clock.frozen(async () => {
      const { appId, fork } = await forked(s)
      s.clock.advance(5 * 60_000 - 1)
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
      const f = await s.request('/sessions/fork', { appId: app.id, body })
      expect(f.status).toBe(400)
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
