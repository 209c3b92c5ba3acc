/**
 * Social sign-in end to end: the demo page, the real modal and API, and one oauth2-mock-server
 * standing in for Google, Twitter, Discord, GitHub and Apple (their endpoints pointed there).
 * A click on a provider button leaves the host page for the provider, which sends the browser
 * back through the API's callback to the page with latch_oauth_* parameters.
 */

import { type MockPerson, type MockProviders, startMockProviders } from '@latch/server/testing'
import {
  HOST_ELEMENT_IDS,
  type LoginResult,
  OAUTH_PROVIDERS,
  OAUTH_RETURN_PARAM_NAMES,
  type OAuthProvider,
  type ServerAppConfig,
  SUCCESS_CLOSE_DELAY_MS,
  type User,
} from '@latch/shared'
import type { MutableRedirectUri, MutableResponse } from 'oauth2-mock-server'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { expectModalAccessible } from './axe.ts'
import {
  demoUser,
  expectOk,
  latchCall,
  newEmail,
  runOutPause,
  screen,
  settle,
  signInByEmail,
  visit,
} from './flows.ts'
import { type HostPage, WAIT_MS, waitReady } from './harness.ts'
import { INLINE_PARENT_ID } from './host-server.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()
let mock: MockProviders
let app: ServerAppConfig

beforeAll(async () => {
  mock = await startMockProviders()
  app = await h().createApp({
    loginMethods: ['email', ...OAUTH_PROVIDERS],
    oauth: mock.settings(),
  })
})
afterAll(async () => {
  await mock?.stop()
})

let sequence = 0
/** A person new to the provider; GitHub's ids are numbers. */
function person(provider: OAuthProvider): MockPerson {
  sequence += 1
  const n = `${process.pid}${Date.now() % 100_000}${sequence}`
  return {
    sub: provider === 'github' ? n : `${provider}-${n}`,
    email: `${provider}-${n}@example.com`,
    name: `Person ${n}`,
    username: `user${n}`,
  }
}

const hasLatchParams = (url: string) =>
  Object.values(OAUTH_RETURN_PARAM_NAMES).some((name) => new URL(url).searchParams.has(name))

/**
 * The 'login' events the demo page recorded, once there are `count` of them; the success
 * screen's pause run out on the page clock (runOutPause) unless `realPause` (a spec that
 * measures the pause itself).
 */
async function logins(hp: HostPage, count: number, realPause = false): Promise<LoginResult[]> {
  const arrived = hp.page.waitForFunction((n) => (window.latchLogins?.length ?? 0) >= n, count, {
    timeout: WAIT_MS,
  })
  if (!realPause) {
    // The title, not getByText: the dialog's live region repeats the title for screen readers.
    const success = hp.modal
      .getByTestId('oauth-title')
      .filter({ hasText: /^Successfully connected with / })
    await runOutPause(hp.page, success, SUCCESS_CLOSE_DELAY_MS, arrived)
  }
  await arrived
  return hp.page.evaluate(() => window.latchLogins ?? [])
}

/**
 * Clicks the provider's button (or runs `start`) and follows the round trip: answers the URL
 * the provider sent the browser back to, once the page is ready again.
 */
async function roundTrip(hp: HostPage, start: () => Promise<unknown>): Promise<string> {
  const back = hp.page.waitForRequest(
    (req) => req.isNavigationRequest() && req.url().includes(OAUTH_RETURN_PARAM_NAMES.code),
    { timeout: WAIT_MS },
  )
  // The page that comes back (the request above is seen while the old one is still shown).
  const committed = hp.page.waitForEvent('framenavigated', {
    predicate: (frame) =>
      frame === hp.page.mainFrame() && frame.url().includes(OAUTH_RETURN_PARAM_NAMES.code),
    timeout: WAIT_MS,
  })
  await start()
  const url = (await back).url()
  await committed
  await hp.page.waitForLoadState('load')
  await waitReady(hp)
  return url
}

/** login() then a click on the provider's button on the landing. */
async function leaveFromLanding(hp: HostPage, provider: OAuthProvider): Promise<void> {
  // The page navigates away: this promise settles as a failed evaluation, never awaited.
  void latchCall(hp.page, 'login')
  await visit(hp, 'LANDING')
  await hp.modal.getByTestId(`social-${provider}`).click()
}

/** Holds the page's requests to `pattern` (any frame) until `release()`. */
async function holdRequest(hp: HostPage, pattern: string): Promise<{ release(): void }> {
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  await hp.page.route(pattern, async (route) => {
    await held
    await route.continue()
  })
  return { release: () => release() }
}

const oauthScreen = (hp: HostPage) => screen(hp.modal, 'AWAITING_OAUTH_SCREEN')

describe('sign-in', () => {
  test('behavior: Google as a new user: the OAuth screen, login() joined after the return, parameters gone; then the same person again as a returning one', async () => {
    const who = person('google')
    mock.signIn('google', who)
    const hp = await h().open({ appId: app.id })
    // The modal's authenticate call is held until the verifying state has been seen.
    const hold = await holdRequest(hp, '**/api/v1/oauth/authenticate')
    const returnUrl = await roundTrip(hp, () => leaveFromLanding(hp, 'google'))
    expect(hasLatchParams(returnUrl)).toBe(true)
    // The host calls login() again after the return: it settles with the return's result.
    const joining = latchCall<LoginResult>(hp.page, 'login')
    const oauth = oauthScreen(hp)
    await oauth.getByText('Verifying connection to Google').waitFor({ state: 'visible' })
    expect(await hp.modal.getByTestId('oauth-description').textContent()).toBe(
      'Just a few moments more',
    )
    await expectModalAccessible(hp.page, 'the OAuth screen while verifying')
    hold.release()
    await oauth.getByText('Successfully connected with Google').waitFor({ state: 'visible' })
    expect(await hp.modal.getByTestId('oauth-description').textContent()).toBe('You’re good to go!')
    const joined = expectOk(await settle(joining, 'login()'))
    expect(joined.isNewUser).toBe(true)
    expect(joined.user.google).toMatchObject({ subject: who.sub, email: who.email, name: who.name })
    const [event] = await logins(hp, 1)
    expect(event).toEqual(joined)
    expect(hasLatchParams(hp.page.url())).toBe(false)
    expect(new URL(hp.page.url()).searchParams.get('appId')).toBe(app.id)
    await oauthScreen(hp).waitFor({ state: 'hidden' })
    await demoUser(hp.page, (u) => u?.id === joined.user.id)

    // Signed out, the same Google person signs in again: the same user, not a new one.
    expectOk(await settle(latchCall(hp.page, 'logout'), 'logout()'))
    await demoUser(hp.page, (u) => u === null)
    await roundTrip(hp, () => leaveFromLanding(hp, 'google'))
    const [second] = await logins(hp, 1)
    expect(second?.isNewUser).toBe(false)
    expect(second?.user.id).toBe(joined.user.id)
    expect(hasLatchParams(hp.page.url())).toBe(false)
  })

  // Google's new and returning sign-ins are the test above.
  for (const provider of OAUTH_PROVIDERS.filter((p) => p !== 'google')) {
    test(`behavior: ${provider} signs in a new user, then the same person again as a returning one`, async () => {
      const who = person(provider)
      mock.signIn(provider, who)
      const hp = await h().open({ appId: app.id })
      await roundTrip(hp, () => leaveFromLanding(hp, provider))
      const [first] = await logins(hp, 1)
      expect(first?.isNewUser).toBe(true)
      expect(first?.user[provider]?.subject).toBe(who.sub)
      expect(hasLatchParams(hp.page.url())).toBe(false)

      expectOk(await settle(latchCall(hp.page, 'logout'), 'logout()'))
      await demoUser(hp.page, (u) => u === null)
      await roundTrip(hp, () => leaveFromLanding(hp, provider))
      const [second] = await logins(hp, 1)
      expect(second?.isNewUser).toBe(false)
      expect(second?.user.id).toBe(first?.user.id)
      expect(hasLatchParams(hp.page.url())).toBe(false)
    })
  }

  test('error: a return address opened again (another browser, or the same tab) is ignored', async () => {
    const who = person('discord')
    mock.signIn('discord', who)
    const hp = await h().open({ appId: app.id })
    const returnUrl = await roundTrip(hp, () => leaveFromLanding(hp, 'discord'))
    const [first] = await logins(hp, 1)

    // Another browser never started this flow: the parameters go, nothing is tried
    // (oauth-attack.spec.ts has the replay into a victim's page).
    const again = await h().open({ appId: app.id, waitReady: false })
    const finishes: string[] = []
    again.page.on('request', (r) => {
      if (r.url().includes('/oauth/authenticate')) finishes.push(r.url())
    })
    await again.page.goto(returnUrl, { waitUntil: 'load' })
    await waitReady(again)
    expect(hasLatchParams(again.page.url())).toBe(false)
    expect(await oauthScreen(again).count()).toBe(0)
    expect(expectOk(await settle(latchCall<User | null>(again.page, 'getUser')))).toBeNull()
    expect(finishes).toEqual([])

    // The tab that started it used its saved flow up on the first return.
    await hp.page.goto(returnUrl, { waitUntil: 'load' })
    await waitReady(hp)
    expect(hasLatchParams(hp.page.url())).toBe(false)
    expect(await oauthScreen(hp).count()).toBe(0)
    const still = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser')))
    expect(still?.id).toBe(first?.user.id)
  })
})

test('behavior: on the inline page the return comes back to /inline and closes at once', async () => {
  const who = person('github')
  mock.signIn('github', who)
  const hp = await h().open({ appId: app.id, path: '/inline' })
  const answered = hp.page
    .waitForResponse((r) => r.url().endsWith('/oauth/authenticate'), { timeout: WAIT_MS })
    .then(() => Date.now())
  const returnUrl = await roundTrip(hp, () => leaveFromLanding(hp, 'github'))
  expect(new URL(returnUrl).pathname).toBe('/inline')
  const [result] = await logins(hp, 1, true)
  const closedAfter = Date.now() - (await answered)
  expect(result?.user.github?.subject).toBe(who.sub)
  // Not a dialog: no 1400 ms success pause; the frame is hidden.
  expect(closedAfter).toBeLessThan(1200)
  const frame = hp.page.locator(`#${INLINE_PARENT_ID} [data-testid="${HOST_ELEMENT_IDS.frame}"]`)
  expect(await frame.isVisible()).toBe(false)
  expect(new URL(hp.page.url()).pathname).toBe('/inline')
  expect(hasLatchParams(hp.page.url())).toBe(false)
})

describe('errors and retry', () => {
  test('behavior: the visitor denies at Google: the denial text, then Retry signs in', async () => {
    const who = person('google')
    mock.signIn('google', who)
    mock.service.once('beforeAuthorizeRedirect', (redirect: MutableRedirectUri) => {
      redirect.url.searchParams.delete('code')
      redirect.url.searchParams.set('error', 'access_denied')
    })
    const hp = await h().open({ appId: app.id })
    await roundTrip(hp, () => leaveFromLanding(hp, 'google'))
    await oauthScreen(hp).getByText('Authentication failed.').waitFor({ state: 'visible' })
    await expectModalAccessible(hp.page, 'the OAuth screen after a failure')
    expect(await hp.modal.getByTestId('oauth-description').textContent()).toBe(
      'Retry and check Google to finish connecting your account.',
    )
    expect(hasLatchParams(hp.page.url())).toBe(false)
    await roundTrip(hp, () => hp.modal.getByTestId('oauth-retry').click())
    const [result] = await logins(hp, 1)
    expect(result?.user.google?.subject).toBe(who.sub)
  })

  test('behavior: the provider refuses the code: Something went wrong, then Retry signs in', async () => {
    const who = person('twitter')
    mock.signIn('twitter', who)
    mock.service.once('beforeResponse', (res: MutableResponse) => {
      res.statusCode = 400
      res.body = { error: 'invalid_grant', error_description: 'code expired' }
    })
    const hp = await h().open({ appId: app.id })
    await roundTrip(hp, () => leaveFromLanding(hp, 'twitter'))
    await oauthScreen(hp).getByText('Authentication failed.').waitFor({ state: 'visible' })
    await expectModalAccessible(hp.page, 'the OAuth screen after a failure')
    expect(await hp.modal.getByTestId('oauth-description').textContent()).toBe(
      'Something went wrong. Try again.',
    )
    await roundTrip(hp, () => hp.modal.getByTestId('oauth-retry').click())
    const [result] = await logins(hp, 1)
    expect(result?.isNewUser).toBe(true)
    expect(result?.user.twitter).toMatchObject({ subject: who.sub, username: who.username })
  })
})

describe('linking', () => {
  test('behavior: an e-mail user links Google; a second user is refused the same Google account', async () => {
    const google = person('google')
    mock.signIn('google', google)
    const hp = await h().open({ appId: app.id })
    const email = newEmail('oauth-link')
    const { user } = await signInByEmail(h(), hp, email)

    // The modal's link call is held until the page has called link('google') again.
    const hold = await holdRequest(hp, '**/api/v1/oauth/link')
    await roundTrip(hp, async () => {
      void latchCall(hp.page, 'link', 'google')
    })
    // link('google') called again after the return settles with the linked user.
    const linking = latchCall<User>(hp.page, 'link', 'google')
    await oauthScreen(hp).getByText('Verifying connection to Google').waitFor({ state: 'visible' })
    hold.release()
    const linked = expectOk(await settle(linking, 'link()'))
    expect(linked.id).toBe(user.id)
    expect(linked.email?.address).toBe(email)
    expect(linked.google).toMatchObject({ subject: google.sub, email: google.email })
    await demoUser(hp.page, (u) => u?.google?.subject === google.sub)
    expect(hasLatchParams(hp.page.url())).toBe(false)
    // A link is not a sign-in.
    expect(await hp.page.evaluate(() => window.latchLogins)).toEqual([])

    const other = await h().open({ appId: app.id })
    const second = await signInByEmail(h(), other, newEmail('oauth-second'))
    await roundTrip(other, async () => {
      void latchCall(other.page, 'link', 'google')
    })
    await oauthScreen(other).getByText('Authentication failed.').waitFor({ state: 'visible' })
    expect(await other.modal.getByTestId('oauth-description').textContent()).toBe(
      'This account has already been linked to another user.',
    )
    expect(await other.modal.getByTestId('oauth-retry').count()).toBe(0)
    const unchanged = expectOk(await settle(latchCall<User | null>(other.page, 'getUser')))
    expect(unchanged?.id).toBe(second.user.id)
    expect(unchanged?.google).toBeUndefined()
  })
})
