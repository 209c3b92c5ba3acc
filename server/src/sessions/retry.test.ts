/**
 * A refresh sent again after its answer was lost (a restart, a failover, a dropped connection)
 * is the same request when it carries the same Latch-Refresh-Id: answered the live pair for
 * REFRESH_RETRY_WINDOW_MS. Anything else presenting a rotated token past the 10 s grace is
 * reuse and revokes the family, as before.
 */
import { randomBytes } from 'node:crypto'
import { REFRESH_ID_HEADER, type RefreshResponse } from '@latch/shared'
import { expect, test } from 'vitest'
import { describeBackends } from '../testing/test-server.ts'
import { REFRESH_GRACE_MS, REFRESH_RETRY_WINDOW_MS } from './service.ts'

let n = 0
const email = () => `retry.${++n}.${Date.now()}@example.com`
const newId = () => randomBytes(16).toString('base64url')

describeBackends('sessions: a retried refresh', (get) => {
  async function rotatedOnce() {
    const s = get()
    const app = await s.newApp()
    const auth = await s.emailLogin(app.id, email())
    const id = newId()
    // The rotation commits; its answer is what the client never received.
    const lost = await s.request<RefreshResponse>('/sessions', {
      appId: app.id,
      body: { refresh_token: auth.refresh_token },
      headers: { [REFRESH_ID_HEADER]: id },
    })
    expect(lost.status).toBe(200)
    const again = (headers: Record<string, string>) =>
      s.request<RefreshResponse>('/sessions', {
        appId: app.id,
        body: { refresh_token: auth.refresh_token },
        headers,
      })
    return { s, appId: app.id, id, lost: lost.body, again }
  }

  test('behavior: the same refresh sent again after the 10 s grace, with the same id, is answered the pair the lost answer held', async () => {
    const { s, appId, id, lost, again } = await rotatedOnce()
    s.clock.advance(REFRESH_GRACE_MS + 20_000)
    const retry = await again({ [REFRESH_ID_HEADER]: id })
    expect(retry.status).toBe(200)
    expect(retry.body.refresh_token).toBe(lost.refresh_token)
    // The session lives on: the pair refreshes as usual.
    const next = await s.request<RefreshResponse>('/sessions', {
      appId,
      body: { refresh_token: retry.body.refresh_token },
      headers: { [REFRESH_ID_HEADER]: newId() },
    })
    expect(next.status).toBe(200)
  })

  test('refusal: the rotated token past the grace with a different id is reuse: refused, and the family is revoked', async () => {
    const { s, appId, lost, again } = await rotatedOnce()
    s.clock.advance(REFRESH_GRACE_MS + 1_000)
    const stolen = await again({ [REFRESH_ID_HEADER]: newId() })
    expect(stolen.status).toBe(401)
    expect(stolen.body).toMatchObject({ error: { code: 'invalid_refresh_token' } })
    const live = await s.request('/sessions', {
      appId,
      body: { refresh_token: lost.refresh_token },
    })
    expect(live.status).toBe(401)
  })

  test('refusal: the rotated token past the grace without an id is reuse, and so is the right id once the window has passed', async () => {
    const none = await rotatedOnce()
    none.s.clock.advance(REFRESH_GRACE_MS + 1_000)
    expect((await none.again({})).status).toBe(401)

    const late = await rotatedOnce()
    late.s.clock.advance(REFRESH_RETRY_WINDOW_MS + 1_000)
    expect((await late.again({ [REFRESH_ID_HEADER]: late.id })).status).toBe(401)
    const live = await late.s.request('/sessions', {
      appId: late.appId,
      body: { refresh_token: late.lost.refresh_token },
    })
    expect(live.status).toBe(401)
  })

  test('refusal: the right id after the pair it answered was used is reuse (the token was rotated on since)', async () => {
    const { s, appId, id, lost, again } = await rotatedOnce()
    const used = await s.request<RefreshResponse>('/sessions', {
      appId,
      body: { refresh_token: lost.refresh_token },
      headers: { [REFRESH_ID_HEADER]: newId() },
    })
    expect(used.status).toBe(200)
    s.clock.advance(REFRESH_GRACE_MS + 1_000)
    expect((await again({ [REFRESH_ID_HEADER]: id })).status).toBe(401)
    const live = await s.request('/sessions', {
      appId,
      body: { refresh_token: used.body.refresh_token },
    })
    expect(live.status).toBe(401)
  })

  test('refusal: a malformed Latch-Refresh-Id is 400 invalid_data and rotates nothing', async () => {
    const s = get()
    const app = await s.newApp()
    const auth = await s.emailLogin(app.id, email())
    for (const bad of [
      'short',
      'x'.repeat(129),
      'has spaces in it, sixteen+',
      'ünïcödé-ünïcödé-ünïcödé',
    ]) {
      const r = await s.request('/sessions', {
        appId: app.id,
        body: { refresh_token: auth.refresh_token },
        headers: { [REFRESH_ID_HEADER]: bad },
      })
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({ error: { code: 'invalid_data' } })
    }
    const ok = await s.request('/sessions', {
      appId: app.id,
      body: { refresh_token: auth.refresh_token },
    })
    expect(ok.status).toBe(200)
  })
})
