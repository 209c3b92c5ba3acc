/**
 * New sign-in methods on a user whose wallet recovers automatically (link-approval.ts): each
 * link needs the visitor's approval of that very method, recorded by the wallet frame's own
 * request in that very session. Each refusal is a way a token holder, a modal-origin script or a
 * database writer would try; a passcode wallet's user links as before.
 */
import type { User } from '@latch/shared'
import { fetchApi, type ShareStore, walletCore } from '@latch/wallet-frame'
import { expect, test } from 'vitest'
import { describeBackends, freshIp, type TestServer } from '../testing/test-server.ts'

let n = 0
const email = (who: string) => `${who}.${Date.now()}.${n++}@example.com`
const phone = () => `+1415556${String(2000 + ((Date.now() + n++) % 7000)).padStart(4, '0')}`

/** The wallet frame's own requests: same-origin fetch metadata and the session's cookie. */
const frameHeaders = (s: TestServer, token: string) => ({
  cookie: s.walletCookie(token) ?? '',
  'sec-fetch-site': 'same-origin',
})

/** Creates the user's wallet through the frame's own code (automatic, or with a passcode). */
async function createWallet(s: TestServer, appId: string, token: string, recoveryPin?: string) {
  const shares = new Map<string, Uint8Array>()
  const store: ShareStore = {
    persistent: false,
    get: (a) => shares.get(a.toLowerCase()),
    set: (a, share) => void shares.set(a.toLowerCase(), share),
  }
  const fetcher = ((url: string, init: RequestInit) =>
    s.api.request(url, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), ...frameHeaders(s, token) },
    })) as typeof fetch
  const core = walletCore({ api: fetchApi('', appId, fetcher), store, kdf: { m: 64, t: 1, p: 1 } })
  return core.create({ accessToken: token, ...(recoveryPin ? { recoveryPin } : {}) })
}

/** A phone number's code, sent for the number (a link's first step). */
async function phoneCode(s: TestServer, appId: string, ip: string, number = phone()) {
  const init = await s.request('/passwordless_sms/init', {
    appId,
    ip,
    body: { phoneNumber: number },
  })
  expect(init.status).toBe(200)
  return { number, code: await s.twilio.waitForCode(number) }
}

const approve = (s: TestServer, appId: string, token: string, body: unknown, headers?: object) =>
  s.request('/wallets/approvals', {
    appId,
    token,
    body,
    headers: { ...frameHeaders(s, token), ...headers },
  })

describeBackends('new sign-in methods on an automatic wallet', (get) => {
  test('refusal: a link without the wallet frame’s approval of that very method is refused; with it, it links once', async () => {
    const s = get()
    const app = await s.newApp({ loginMethods: ['email', 'sms'] })
    const victim = await s.emailLogin(app.id, email('approver'))
    await createWallet(s, app.id, victim.token)
    const ip = freshIp()
    const link = (number: string, code: string) =>
      s.request<User & { error?: { code: string } }>('/passwordless_sms/link', {
        appId: app.id,
        ip,
        token: victim.token,
        body: { phoneNumber: number, code },
      })

    // The signed-in browser's own request (the modal's: its credential comes along), no approval.
    const first = await phoneCode(s, app.id, ip)
    const bare = await link(first.number, first.code)
    expect([bare.status, bare.body.error?.code]).toEqual([403, 'link_not_approved'])

    // An approval the modal's own fetch (cross-site metadata) or a client without the cookie
    // tries to record: refused.
    for (const headers of [{ 'sec-fetch-site': 'cross-site' }, { cookie: '' }]) {
      const r = await approve(
        s,
        app.id,
        victim.token,
        { type: 'phone', identifier: first.number },
        headers,
      )
      expect([403, 401]).toContain(r.status)
    }
    // An approval of another number does not let this one in.
    expect(
      (await approve(s, app.id, victim.token, { type: 'phone', identifier: '+14155550000' }))
        .status,
    ).toBe(200)
    const second = await phoneCode(s, app.id, ip)
    expect((await link(second.number, second.code)).body.error?.code).toBe('link_not_approved')

    // The frame's approval of this very number: linked, once.
    const third = await phoneCode(s, app.id, ip)
    const ok = await approve(s, app.id, victim.token, { type: 'phone', identifier: third.number })
    expect([ok.status, ok.body]).toEqual([200, { approved: true }])
    const linked = await link(third.number, third.code)
    expect(linked.status).toBe(200)
    expect(linked.body.linkedAccounts.map((a) => a.type)).toContain('phone')
    // Replayed: the approval is spent. Unlinked, the same number with a fresh code is refused.
    const unlinked = await s.request('/passwordless_sms/unlink', {
      appId: app.id,
      token: victim.token,
      body: { phoneNumber: third.number },
    })
    expect(unlinked.status).toBe(200)
    const fresh = await phoneCode(s, app.id, ip, third.number)
    const replay = await link(third.number, fresh.code)
    expect([replay.status, replay.body.error?.code]).toEqual([403, 'link_not_approved'])
  })

  test('refusal: an approval of another session, or one a database writer planted, lets nothing in', async () => {
    const s = get()
    const app = await s.newApp({ loginMethods: ['email', 'sms'] })
    const address = email('victim')
    const victim = await s.emailLogin(app.id, address)
    await createWallet(s, app.id, victim.token)
    const other = await s.emailLogin(app.id, address)
    const ip = freshIp()
    const { number, code } = await phoneCode(s, app.id, ip)
    // Approved in the other session's frame; the link comes from this one.
    expect(
      (await approve(s, app.id, other.token, { type: 'phone', identifier: number })).status,
    ).toBe(200)
    // And a row written without the secret, for this session.
    const { sid } = JSON.parse(atob(victim.token.split('.')[1] ?? '')) as { sid: string }
    const now = new Date()
    await s.deps.db
      .insertInto('link_approvals')
      .values({
        id: 'planted',
        app_id: app.id,
        session_id: sid,
        kind: 'phone',
        identifier: number,
        mac: 'A'.repeat(43),
        created_at: now,
        expires_at: new Date(now.getTime() + 60_000),
      })
      .execute()
    const r = await s.request<{ error: { code: string } }>('/passwordless_sms/link', {
      appId: app.id,
      ip,
      token: victim.token,
      body: { phoneNumber: number, code },
    })
    expect([r.status, r.body.error?.code]).toEqual([403, 'link_not_approved'])
  })

  test('behavior: a passcode wallet’s user links as before, without an approval', async () => {
    const s = get()
    const app = await s.newApp({ loginMethods: ['email', 'sms'] })
    const user = await s.emailLogin(app.id, email('passcode'))
    await createWallet(s, app.id, user.token, 'k7Qm2x')
    const ip = freshIp()
    const { number, code } = await phoneCode(s, app.id, ip)
    const r = await s.request<User>('/passwordless_sms/link', {
      appId: app.id,
      ip,
      token: user.token,
      body: { phoneNumber: number, code },
    })
    expect(r.status).toBe(200)
  })
})
