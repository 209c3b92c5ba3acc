import { API_PREFIX, type User } from '@latch/shared'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { expect, test } from 'vitest'
import { demoUser, expectOk, latchCall, newEmail, settle, signInByEmail } from './flows.ts'
import { waitReady } from './harness.ts'
import { useHarness } from './use-harness.ts'

// 30 s tokens: always within the 30 s expiry margin, so every getAccessToken() refreshes.
const h = useHarness({ serverEnv: { LATCH_ACCESS_TOKEN_TTL: '30' } })

async function verify(token: string, appId: string) {
  const jwks = createRemoteJWKSet(new URL(`${h().apiUrl}/api/v1/apps/${appId}/jwks.json`))
  return (await jwtVerify(token, jwks, { audience: appId })).payload
}

test('behavior: a reload keeps the session and getAccessToken() refreshes the token', async () => {
  const email = newEmail('reload')
  const hp = await h().open()
  const { user } = await signInByEmail(h(), hp, email)

  // Every access token the modal gets from a refresh, from the reload on. Other callers of the
  // API (the idle analytics POST) may be refreshing when a getAccessToken() comes in, and it then
  // joins that refresh instead of starting a second one; so the test asks where each token came
  // from rather than counting requests.
  const issued: Promise<string | undefined>[] = []
  hp.page.on('response', (response) => {
    const url = new URL(response.url())
    if (response.request().method() !== 'POST' || url.pathname !== `${API_PREFIX}/sessions`) return
    issued.push(
      response
        .json()
        .then((body: { token?: string }) => body.token)
        .catch(() => undefined),
    )
  })
  const refreshed = async () => (await Promise.all(issued)).filter((t) => t !== undefined)

  await hp.page.reload({ waitUntil: 'load' })
  await waitReady(hp)
  const after = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))
  expect(after?.id).toBe(user.id)
  await demoUser(hp.page, (u) => u?.id === user.id)

  const first = expectOk(await settle(latchCall<string | null>(hp.page, 'getAccessToken')))
  expect(first).toEqual(expect.any(String))
  const claims = await verify(first as string, h().app.id)
  expect(claims.sub).toBe(user.id)
  await expect.poll(refreshed).toContain(first)

  // A 30 s token is inside the margin as soon as it is issued: the next call refreshes again.
  const second = expectOk(await settle(latchCall<string | null>(hp.page, 'getAccessToken')))
  expect(second).toEqual(expect.any(String))
  expect(second).not.toBe(first)
  expect((await verify(second as string, h().app.id)).sub).toBe(user.id)
  await expect.poll(refreshed).toContain(second)

  // The demo page's button shows a token too.
  await hp.page.getByTestId('get-token').click()
  await expect
    .poll(() => hp.page.getByTestId('status').textContent())
    .toMatch(/^access token: ey[\w-]+\.[\w-]+\.[\w-]+$/)
})

test('behavior: logout ends the session, here and after a reload', async () => {
  const hp = await h().open()
  await signInByEmail(h(), hp, newEmail('logout'))
  await hp.page.evaluate(() => {
    window.events = []
    window.latch?.on('logout', () => window.events?.push('logout'))
  })

  // The demo page's own buttons: Log out, then Get access token answers null.
  await hp.page.getByTestId('logout').click()
  await expect.poll(() => hp.page.getByTestId('status').textContent()).toBe('logout: null')
  await hp.page.getByTestId('get-token').click()
  await expect.poll(() => hp.page.getByTestId('status').textContent()).toBe('access token: null')
  expect(expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))).toBeNull()
  expect(expectOk(await settle(latchCall<string | null>(hp.page, 'getAccessToken')))).toBeNull()
  await expect.poll(() => hp.page.evaluate(() => window.events)).toEqual(['logout'])
  await demoUser(hp.page, (u) => u === null)

  await hp.page.reload({ waitUntil: 'load' })
  await waitReady(hp)
  expect(expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))).toBeNull()
  expect(expectOk(await settle(latchCall<string | null>(hp.page, 'getAccessToken')))).toBeNull()
})
