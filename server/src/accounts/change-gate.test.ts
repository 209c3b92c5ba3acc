/**
 * A change of the sign-in methods needs more than the access token (change-gate.ts): the host
 * page, its scripts, its backend and its logs hold the token, and an account they link would sign
 * in as the user and recover the wallet. Each refusal here is a way a token holder would try.
 */
import type { ForkResponse, RefreshResponse, User } from '@latch/shared'
import { expect, test } from 'vitest'
import { describeBackends, freshIp, type TestServer } from '../testing/test-server.ts'

let n = 0
const email = (who: string) => `${who}.${Date.now()}.${n++}@example.com`
const phone = () => `+1415555${String(2000 + ((Date.now() + n++) % 7000)).padStart(4, '0')}`

/** A phone number's code, sent for the number (a link's first step). */
async function phoneCode(s: TestServer, appId: string, ip: string) {
  const number = phone()
  const init = await s.request('/passwordless_sms/init', {
    appId,
    ip,
    body: { phoneNumber: number },
  })
  expect(init.status).toBe(200)
  return { number, code: await s.twilio.waitForCode(number) }
}

/** Every route that changes a user's sign-in methods. */
const CHANGE_ROUTES = [
  '/passwordless/link',
  '/passwordless/unlink',
  '/passwordless_sms/link',
  '/passwordless_sms/unlink',
  '/oauth/link',
  '/oauth/unlink',
  '/siwe/link',
  '/siwe/unlink',
  '/passkeys/link',
  '/passkeys/rename',
  '/passkeys/unlink',
]

describeBackends('changing sign-in methods', (get) => {
  test('security: the access token alone, or with another session’s credential, changes no sign-in method on any route; the signed-in browser’s request does', async () => {
    const s = get()
    const app = await s.newApp({ loginMethods: ['email', 'sms', 'wallet', 'passkey'] })
    const victim = await s.emailLogin(app.id, email('victim'))
    const elsewhere = await s.emailLogin(app.id, email('elsewhere'))
    const otherCookie = (s.walletCookie(elsewhere.token) ?? '').replace(/^[^=]+=/, '')
    const { sid } = JSON.parse(atob(victim.token.split('.')[1] ?? '')) as { sid: string }
    const forged = [
      { name: 'no cookie', cookie: '' },
      {
        name: 'another session’s value under this name',
        cookie: `__Host-latch-w-${sid}=${otherCookie}`,
      },
      { name: 'a guessed value', cookie: `__Host-latch-w-${sid}=${'A'.repeat(43)}` },
    ]
    for (const path of CHANGE_ROUTES) {
      for (const { name, cookie } of forged) {
        const r = await s.request<{ error: { code: string } }>(path, {
          appId: app.id,
          token: victim.token,
          body: {},
          headers: { cookie },
        })
        expect([path, name, r.status, r.body.error?.code]).toEqual([
          path,
          name,
          401,
          'link_sign_in_required',
        ])
      }
    }

    // An attacker's phone, linked with the token alone: refused, and the code stays unused.
    const ip = freshIp()
    const { number, code } = await phoneCode(s, app.id, ip)
    const refused = await s.request('/passwordless_sms/link', {
      appId: app.id,
      ip,
      token: victim.token,
      body: { phoneNumber: number, code },
      headers: { cookie: '' },
    })
    expect(refused.status).toBe(401)
    const me = await s.request<{ user: User }>('/sessions', {
      appId: app.id,
      body: { refresh_token: victim.refresh_token },
    })
    expect(me.body.user.linkedAccounts.map((a) => a.type)).toEqual(['email'])

    // The browser that signed in (its credential comes along) links the same address.
    const linked = await s.request<User>('/passwordless_sms/link', {
      appId: app.id,
      ip,
      token: victim.token,
      body: { phoneNumber: number, code },
    })
    expect([linked.status, JSON.stringify(linked.body).slice(0, 200)]).toEqual([
      200,
      expect.any(String),
    ])
    expect(linked.body.linkedAccounts).toHaveLength(2)
  })

  test('security: a session opened by a fork link changes no sign-in method until its wallet handover is confirmed; the forking session still can', async () => {
    const s = get()
    const app = await s.newApp({ loginMethods: ['email', 'sms'] })
    const auth = await s.emailLogin(app.id, email('forker'))
    const fork = await s.request<ForkResponse>('/sessions/fork', {
      appId: app.id,
      body: { refresh_token: auth.refresh_token },
    })
    expect(fork.status).toBe(200)
    // Whoever holds the link (it passes through the host page) redeems it in their own browser,
    // which then holds that session's credential too.
    const child = await s.request<RefreshResponse>('/sessions/fork/recover', {
      appId: app.id,
      body: { refresh_token: fork.body.new_session_refresh_token },
    })
    expect(child.status).toBe(200)
    expect(s.walletCookie(child.body.token)).toBeDefined()
    const ip = freshIp()
    const { number, code } = await phoneCode(s, app.id, ip)
    const refused = await s.request<{ error: { code: string } }>('/passwordless_sms/link', {
      appId: app.id,
      ip,
      token: child.body.token,
      body: { phoneNumber: number, code },
    })
    expect([refused.status, refused.body.error?.code]).toEqual([401, 'link_sign_in_required'])
    const own = await s.request<User>('/passwordless_sms/link', {
      appId: app.id,
      ip,
      token: fork.body.token,
      body: { phoneNumber: number, code },
    })
    expect(own.status).toBe(200)
  })
})
