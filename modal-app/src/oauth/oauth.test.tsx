import {
  type HostMethods,
  LatchError,
  type LoginResult,
  OAUTH_PROVIDER_NAMES,
  OAUTH_PROVIDERS,
  type OAuthReturnParams,
  type PendingOAuthFlow,
  type User,
} from '@latch/shared'
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest'
import { login } from '../flow/flow.ts'
import { runtime } from '../runtime.ts'
import { resetStore, store } from '../store.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { authAnswer, jwt, user } from '../test/fixtures.ts'
import { type Harness, renderModal } from '../test/harness.tsx'
import { linkOAuth, oauthErrorView, redirectTarget } from './oauth.ts'
import { resumeOAuth, UNSTARTED_RETURN_WARNING } from './oauth-return.ts'
import { isInAppBrowser, showTwitterButton } from './platform.ts'

const PAGE = 'http://localhost:5173/shop?item=7&latch_oauth_code=old&latch_token=t#top'
const CLEAN_PAGE = 'http://localhost:5173/shop?item=7#top'
const AUTHORIZE = 'https://accounts.example.com/authorize?client_id=c&state=state-1'
const ALL_SOCIAL = {
  googleOAuth: true,
  twitterOAuth: true,
  discordOAuth: true,
  githubOAuth: true,
  appleOAuth: true,
}

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
beforeEach(() => {
  resetStore()
  sessionStorage.clear()
})
afterEach(() => {
  vi.restoreAllMocks()
  api.requests.length = 0
})

interface TestHost {
  navigated: string[]
  /** The flow the host page was asked to keep with each navigation. */
  flows: PendingOAuthFlow[]
  /** Makes the next navigate refuse, as the host SDK does outside a flow. */
  refuseNext(): void
}

/** Replaces the recording host with one that reports a page URL and records navigations. */
function installHost(harness: Harness): TestHost {
  const navigated: string[] = []
  const flows: PendingOAuthFlow[] = []
  let refuse = false
  const base = runtime().host as HostMethods
  runtime().host = {
    ...base,
    setOpen: (open) => base.setOpen(open),
    emit: (event, payload) => base.emit(event, payload),
    pageUrl: async () => PAGE,
    navigate: async (url, flow) => {
      if (refuse) {
        refuse = false
        throw new Error('navigate: refused')
      }
      navigated.push(url)
      flows.push(flow)
    },
  }
  void harness
  return { navigated, flows, refuseNext: () => (refuse = true) }
}

function signIn(harness: Harness, who: User = user()): void {
  act(() => harness.session.start({ token: jwt(Date.now() / 1000 + 3600) }, who))
}

const returnParams = (patch: Partial<OAuthReturnParams> = {}): OAuthReturnParams => ({
  code: 'code-1',
  state: 'state-1',
  provider: 'google',
  ...patch,
})

/** A browser secret as the modal makes them (32 bytes, base64url). */
const SECRET = 'S'.repeat(43)

/** The flow the host page saved when this return's flow left. */
const savedFlow = (patch: Partial<PendingOAuthFlow> = {}): PendingOAuthFlow => ({
  state: 'state-1',
  provider: 'google',
  intent: 'login',
  secret: SECRET,
  ...patch,
})

/** A return and the flow saved for it, as the host SDK hands them to init. */
const back = (
  patch: Partial<OAuthReturnParams> = {},
  intent: PendingOAuthFlow['intent'] = 'login',
): [OAuthReturnParams, PendingOAuthFlow] => {
  const params = returnParams(patch)
  return [params, savedFlow({ state: params.state, provider: params.provider, intent })]
}

/** base64url SHA-256, as the server hashes the browser secret. */
async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return btoa(String.fromCharCode(...new Uint8Array(digest)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
}

/** The flow kept with the one navigation, checked against the hash /oauth/init received. */
async function expectBoundFlow(host: TestHost, expected: Partial<PendingOAuthFlow>) {
  const [flow] = host.flows
  expect(flow).toMatchObject({ state: 'state-1', ...expected })
  expect(flow?.secret).toMatch(/^[\w-]{43}$/)
  const [init] = api.calls('POST /oauth/init')
  expect((init?.body as { browser_hash?: string } | undefined)?.browser_hash).toBe(
    await sha256(flow?.secret ?? ''),
  )
}

const title = () => screen.getByTestId('oauth-title').textContent
const description = () => screen.getByTestId('oauth-description').textContent

describe('social buttons', () => {
  test('behavior: one button per enabled provider after the Or divider, under Email & Social', () => {
    renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    expect(screen.getByRole('heading', { level: 2 }).textContent).toBe('Email & Social')
    const buttons = screen.getByTestId('social-buttons').querySelectorAll('button')
    expect([...buttons].map((b) => b.textContent)).toEqual([
      'Google',
      'Twitter',
      'Discord',
      'GitHub',
      'Apple',
    ])
    // The divider comes before the buttons.
    const divider = screen.getByText('Or')
    expect(
      divider.compareDocumentPosition(screen.getByTestId('social-buttons')) &
        Node.DOCUMENT_POSITION_FOLLOWING,
    ).toBeTruthy()
  })

  test('behavior: only the enabled providers show; none without social login', () => {
    renderModal(api, { walletAuth: false, githubOAuth: true })
    expect(screen.getByTestId('social-github')).toBeTruthy()
    expect(screen.queryByTestId('social-google')).toBeNull()
    cleanup()
    renderModal(api, { walletAuth: false })
    expect(screen.queryByTestId('social-buttons')).toBeNull()
    expect(screen.queryByText('Or')).toBeNull()
  })

  test('param: the Twitter button is hidden in in-app browsers (Google and Apple give way to the open-in-browser step)', () => {
    const inApp = [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148 [FBAN/FBIOS;FBAV/440.0]',
      'Mozilla/5.0 (iPhone) Mobile/15E148 Instagram 300.0.0',
      'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A; wv) AppleWebKit/537.36 Chrome/120 Mobile',
      'Mozilla/5.0 (iPhone) Mobile/15E148 Line/13.1.0',
    ]
    const regular = [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Version/17.0 Mobile/15E148 Safari/604.1',
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120 Mobile Safari/537.36',
    ]
    for (const ua of inApp) expect([ua, isInAppBrowser(ua)]).toEqual([ua, true])
    for (const ua of regular) expect([ua, showTwitterButton(ua)]).toEqual([ua, true])
    vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue(inApp[0] as string)
    renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    expect(screen.queryByTestId('social-twitter')).toBeNull()
    expect(screen.queryByTestId('social-google')).toBeNull()
    expect(screen.getByTestId('social-discord')).toBeTruthy()
  })
})

describe('leaving for the provider', () => {
  test('behavior: a click asks the API for the URL (redirect_to = the page without latch_ parameters, no token) and the host navigates', async () => {
    api.on('POST /oauth/init', { body: { url: AUTHORIZE } })
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    const host = installHost(harness)
    act(() => {
      login().catch(() => {})
    })
    fireEvent.click(screen.getByTestId('social-discord'))
    await waitFor(() => expect(host.navigated).toEqual([AUTHORIZE]))
    const [init] = api.calls('POST /oauth/init')
    expect(init?.body).toEqual({
      provider: 'discord',
      redirect_to: CLEAN_PAGE,
      browser_hash: expect.stringMatching(/^[\w-]{43}$/),
    })
    expect(init?.headers.authorization).toBeUndefined()
    await expectBoundFlow(host, { provider: 'discord', intent: 'login' })
    // The buttons stay disabled while the page leaves.
    expect((screen.getByTestId('social-google') as HTMLButtonElement).disabled).toBe(true)
  })

  test('error: the API refuses: Authentication failed. with Retry, which asks again', async () => {
    api.on('POST /oauth/init', apiError(403, 'method_not_available', 'Login method not enabled'))
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    const host = installHost(harness)
    act(() => {
      login().catch(() => {})
    })
    fireEvent.click(screen.getByTestId('social-apple'))
    await screen.findByTestId('oauth-retry')
    expect(title()).toBe('Authentication failed.')
    expect(description()).toBe('Something went wrong. Try again.')
    api.on('POST /oauth/init', { body: { url: AUTHORIZE } })
    fireEvent.click(screen.getByTestId('oauth-retry'))
    await waitFor(() => expect(host.navigated).toEqual([AUTHORIZE]))
    const inits = api.calls('POST /oauth/init').map((c) => c.body as Record<string, string>)
    expect(inits.map(({ browser_hash, ...rest }) => rest)).toEqual([
      { provider: 'apple', redirect_to: CLEAN_PAGE },
      { provider: 'apple', redirect_to: CLEAN_PAGE },
    ])
    // A fresh secret per flow.
    expect(inits[0]?.browser_hash).not.toBe(inits[1]?.browser_hash)
  })

  test('error: a navigation the host refuses shows the failure', async () => {
    api.on('POST /oauth/init', { body: { url: AUTHORIZE } })
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    const host = installHost(harness)
    host.refuseNext()
    act(() => {
      login().catch(() => {})
    })
    fireEvent.click(screen.getByTestId('social-google'))
    await screen.findByTestId('oauth-retry')
    expect(description()).toBe('Something went wrong. Try again.')
  })

  test('behavior: link(provider) leaves with the access token and remembers a link', async () => {
    api.on('POST /oauth/init', { body: { url: AUTHORIZE } })
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    const host = installHost(harness)
    signIn(harness)
    act(() => {
      linkOAuth('github').catch(() => {})
    })
    expect(store.getState().screen).toBe('AWAITING_OAUTH_SCREEN')
    expect(title()).toBe('Verifying connection to GitHub')
    await waitFor(() => expect(host.navigated).toEqual([AUTHORIZE]))
    expect(api.calls('POST /oauth/init')[0]?.headers.authorization).toMatch(/^Bearer /)
    await expectBoundFlow(host, { provider: 'github', intent: 'link' })
  })

  test('error: link(provider) of a provider the app does not offer, or signed out', async () => {
    const harness = renderModal(api, { walletAuth: false, googleOAuth: true })
    await expect(linkOAuth('twitter')).rejects.toMatchObject({ code: 'method_not_available' })
    await expect(linkOAuth('google')).rejects.toMatchObject({ code: 'not_authenticated' })
    signIn(harness)
    expect(api.calls('POST /oauth/init')).toHaveLength(0)
  })

  test('behavior: redirectTarget keeps the path, query and fragment, drops latch_ parameters', () => {
    expect(redirectTarget(PAGE)).toBe(CLEAN_PAGE)
    expect(redirectTarget('https://a.example/')).toBe('https://a.example/')
  })
})

describe('the return', () => {
  test('behavior: verifying, then success; closes after 1400 ms; login event and a joined login() carry isNewUser', async () => {
    const who = user('new@example.com', 'did:latch:new')
    let answer!: () => void
    api.on(
      'POST /oauth/authenticate',
      () =>
        new Promise((resolve) => {
          answer = () => resolve(authAnswer(who, true))
        }),
    )
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    installHost(harness)
    act(() => resumeOAuth(...back({ provider: 'github' })))
    expect(store.getState()).toMatchObject({ open: true, screen: 'AWAITING_OAUTH_SCREEN' })
    expect(title()).toBe('Verifying connection to GitHub')
    expect(description()).toBe('Just a few moments more')
    // The host asks for login() once ready: it joins the flow in progress.
    let joined!: Promise<LoginResult>
    act(() => {
      joined = login()
    })
    await waitFor(() => expect(api.calls('POST /oauth/authenticate')).toHaveLength(1))
    expect(api.calls('POST /oauth/authenticate')[0]?.body).toEqual({
      authorization_code: 'code-1',
      state_code: 'state-1',
      browser_secret: SECRET,
    })
    vi.useFakeTimers({ shouldAdvanceTime: true })
    answer()
    await waitFor(() => expect(title()).toBe('Successfully connected with GitHub'))
    expect(description()).toBe('You’re good to go!')
    expect(screen.queryByTestId('oauth-retry')).toBeNull()
    act(() => {
      vi.advanceTimersByTime(1300)
    })
    expect(store.getState().open).toBe(true)
    act(() => {
      vi.advanceTimersByTime(150)
    })
    expect(store.getState().open).toBe(false)
    await expect(joined).resolves.toEqual({ user: who, isNewUser: true })
    expect(harness.emitted('login')).toEqual([{ user: who, isNewUser: true }])
    expect(store.getState().user).toEqual(who)
    expect(harness.session.isAuthenticated()).toBe(true)
  })

  test('behavior: not in a dialog, it closes at once after success', async () => {
    const who = user()
    api.on('POST /oauth/authenticate', authAnswer(who, false))
    const harness = renderModal(
      api,
      { walletAuth: false, ...ALL_SOCIAL },
      { render: { inParentNodeId: 'inline' } },
    )
    installHost(harness)
    vi.useFakeTimers({ shouldAdvanceTime: true })
    act(() => resumeOAuth(...back()))
    await waitFor(() => expect(store.getState().oauth?.status).toBe('success'))
    act(() => {
      vi.advanceTimersByTime(0)
    })
    expect(store.getState().open).toBe(false)
    expect(harness.emitted('login')).toEqual([{ user: who, isNewUser: false }])
  })

  test('param: the OAuth error table; Retry only when retryable', async () => {
    const cases = [
      [
        apiError(400, 'linked_to_another_user', 'Another user has already linked this account.'),
        'This account has already been linked to another user.',
        false,
      ],
      [
        apiError(400, 'oauth_invalid_code', 'Invalid code during oauth flow.'),
        'Something went wrong. Try again.',
        true,
      ],
      [
        apiError(400, 'oauth_user_denied', 'User denied confirmation during OAuth flow'),
        'Retry and check Google to finish connecting your account.',
        true,
      ],
      [apiError(500, 'internal_error', 'Internal error'), 'Something went wrong. Try again.', true],
    ] as const
    for (const [i, [answer, message, retry]] of cases.entries()) {
      api.on('POST /oauth/authenticate', answer)
      const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
      installHost(harness)
      act(() => resumeOAuth(...back({ state: `table-${i}` })))
      await screen.findByText('Authentication failed.')
      expect([message, description()]).toEqual([message, message])
      expect([message, screen.queryByTestId('oauth-retry') !== null]).toEqual([message, retry])
      expect(harness.emitted('login')).toEqual([])
      cleanup()
    }
    expect(oauthErrorView(new Error('x'), 'discord')).toEqual({
      message: 'Something went wrong. Try again.',
      retryable: true,
    })
  })

  test('behavior: Retry after a failed return leaves again with the same provider', async () => {
    api.on(
      'POST /oauth/authenticate',
      apiError(400, 'oauth_invalid_code', 'Invalid code during oauth flow.'),
    )
    api.on('POST /oauth/init', { body: { url: AUTHORIZE } })
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    const host = installHost(harness)
    act(() => resumeOAuth(...back({ provider: 'twitter', state: 'failed-state' })))
    fireEvent.click(await screen.findByTestId('oauth-retry'))
    await waitFor(() => expect(host.navigated).toEqual([AUTHORIZE]))
    expect(api.calls('POST /oauth/init')[0]?.body).toMatchObject({
      provider: 'twitter',
      redirect_to: CLEAN_PAGE,
    })
    await expectBoundFlow(host, { provider: 'twitter', intent: 'login' })
  })

  test('behavior: a link return calls /oauth/link with the token; link() during it resolves with the user', async () => {
    const before = user()
    const after: User = {
      ...before,
      linkedAccounts: [
        ...before.linkedAccounts,
        {
          type: 'google_oauth',
          subject: 'g-1',
          email: 'ada@gmail.com',
          name: 'Ada',
          verifiedAt: '2026-01-01T00:00:00.000Z',
        },
      ],
    }
    api.on('POST /oauth/link', { body: after })
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    installHost(harness)
    signIn(harness, before)
    vi.useFakeTimers({ shouldAdvanceTime: true })
    act(() => resumeOAuth(...back({}, 'link')))
    let linked!: Promise<User>
    act(() => {
      linked = linkOAuth('google')
    })
    await waitFor(() => expect(title()).toBe('Successfully connected with Google'))
    const [call] = api.calls('POST /oauth/link')
    expect(call?.headers.authorization).toMatch(/^Bearer /)
    expect(call?.body).toMatchObject({ state_code: 'state-1', browser_secret: SECRET })
    expect(api.calls('POST /oauth/init')).toHaveLength(0)
    act(() => {
      vi.advanceTimersByTime(1400)
    })
    await expect(linked).resolves.toEqual(after)
    expect(store.getState().user).toEqual(after)
    expect(harness.emitted('login')).toEqual([])
  })

  test('error: a return without its saved flow is refused with a warning, never guessed', async () => {
    api.on('POST /oauth/authenticate', authAnswer(user(), true))
    api.on('POST /oauth/link', { body: user() })
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    installHost(harness)
    const refused: [OAuthReturnParams, PendingOAuthFlow | null][] = [
      [returnParams({ state: 'none-saved' }), null],
      [returnParams({ state: 'theirs' }), savedFlow({ state: 'mine' })],
      [
        returnParams({ state: 'other-provider' }),
        savedFlow({ state: 'other-provider', provider: 'github' }),
      ],
      [returnParams({ state: 'no-secret' }), { ...savedFlow({ state: 'no-secret' }), secret: '' }],
    ]
    // Signed out (the login-CSRF case), then signed in (the account-takeover case).
    for (const signedIn of [false, true]) {
      if (signedIn) signIn(harness)
      for (const [params, flow] of refused) act(() => resumeOAuth(params, flow))
    }
    expect(harness.emitted('warning')).toEqual(
      new Array(refused.length * 2).fill(UNSTARTED_RETURN_WARNING),
    )
    expect(UNSTARTED_RETURN_WARNING).toBe(
      'Ignored an OAuth return this browser did not start (Must initialize OAuth flow before calling loginWithOAuth)',
    )
    await new Promise((r) => setTimeout(r, 50))
    expect(store.getState().open).toBe(false)
    expect(api.calls('POST /oauth/authenticate')).toHaveLength(0)
    expect(api.calls('POST /oauth/link')).toHaveLength(0)
  })

  test('error: malformed parameters are ignored with a warning; a state completes once', async () => {
    api.on('POST /oauth/authenticate', authAnswer(user(), true))
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    installHost(harness)
    act(() =>
      resumeOAuth({ code: 'c', state: 's', provider: 'myspace' } as unknown as OAuthReturnParams),
    )
    expect(store.getState().open).toBe(false)
    expect(harness.emitted('warning')).toHaveLength(1)
    act(() => resumeOAuth(...back()))
    act(() => resumeOAuth(...back()))
    await waitFor(() => expect(api.calls('POST /oauth/authenticate')).toHaveLength(1))
  })

  test('behavior: closed while verifying: a joined login() rejects, the session still starts, no login event', async () => {
    const who = user()
    let answer!: () => void
    api.on(
      'POST /oauth/authenticate',
      () =>
        new Promise((resolve) => {
          answer = () => resolve(authAnswer(who, true))
        }),
    )
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    installHost(harness)
    act(() => resumeOAuth(...back()))
    let joined!: Promise<LoginResult>
    act(() => {
      joined = login()
    })
    await waitFor(() => expect(api.calls('POST /oauth/authenticate')).toHaveLength(1))
    fireEvent.click(screen.getByTestId('close-button'))
    await expect(joined).rejects.toMatchObject({ code: 'login_exited' })
    answer()
    await waitFor(() => expect(store.getState().user).toEqual(who))
    expect(harness.session.isAuthenticated()).toBe(true)
    expect(store.getState().open).toBe(false)
    expect(harness.emitted('login')).toEqual([])
  })

  test('behavior: closed while asking for the URL: no navigation', async () => {
    let answer!: () => void
    api.on(
      'POST /oauth/init',
      () =>
        new Promise((resolve) => {
          answer = () => resolve({ body: { url: AUTHORIZE } })
        }),
    )
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    const host = installHost(harness)
    let pending!: Promise<LoginResult>
    act(() => {
      pending = login()
    })
    fireEvent.click(screen.getByTestId('social-google'))
    await waitFor(() => expect(api.calls('POST /oauth/init')).toHaveLength(1))
    fireEvent.click(screen.getByTestId('close-button'))
    await expect(pending).rejects.toMatchObject({ code: 'login_exited' })
    answer()
    await new Promise((r) => setTimeout(r, 50))
    expect(host.navigated).toEqual([])
  })

  test('behavior: allowlist rejection goes to its screen', async () => {
    api.on('POST /oauth/authenticate', apiError(403, 'allowlist_rejected', 'Not allowed'))
    const harness = renderModal(api, { walletAuth: false, ...ALL_SOCIAL })
    installHost(harness)
    act(() => resumeOAuth(...back()))
    await waitFor(() => expect(store.getState().screen).toBe('ALLOWLIST_REJECTION_SCREEN'))
  })

  test('param: the denial text names each provider', () => {
    for (const provider of OAUTH_PROVIDERS) {
      expect(oauthErrorView(LatchError.of('oauth_user_denied'), provider).message).toBe(
        `Retry and check ${OAUTH_PROVIDER_NAMES[provider]} to finish connecting your account.`,
      )
    }
  })
})
