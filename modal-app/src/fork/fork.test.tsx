import {
  FORK_RETURN_PARAM,
  isLatchError,
  LatchError,
  NO_REFRESH_COOKIE_MESSAGE,
  type User,
} from '@latch/shared'
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest'
import { createModalMethods } from '../startup/methods.ts'
import { setVerifiedHost } from '../startup/origin.ts'
import { store } from '../store.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { jwt, serverConfig, user } from '../test/fixtures.ts'
import { type Harness, renderModal } from '../test/harness.tsx'
import { walletAccount, walletFrameDouble } from '../test/wallet-frame-double.ts'
import { provideWalletFrame } from '../wallet/frame.ts'
import { FORK_QUERY_WARNING, FORK_SIGNED_IN_WARNING, FORK_UNVERIFIED_WARNING } from './fork.ts'

/** The host page's origin, as startup verifies it against the app's allowed origins. */
const HOST = 'http://localhost:5173'
beforeEach(() => setVerifiedHost(HOST, [HOST]))

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
  api.on('POST /analytics_events', { body: { success: true } })
})
afterAll(() => api.close())
afterEach(() => {
  cleanup()
  vi.restoreAllMocks()
  api.requests.length = 0
  provideWalletFrame(null)
  setVerifiedHost(null)
})

const methods = (restored: ReturnType<typeof user> | null = null) =>
  createModalMethods({
    serverConfig: async () => serverConfig(),
    restoredUser: async () => restored,
  })

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

/** The modal rendered with a signed-in session whose refresh token is 'rt'. */
function signedIn(who: User = user()): Harness {
  const harness = renderModal(api)
  act(() => harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 600) }, who))
  return harness
}

const ADDRESS = `0x${'12'.repeat(20)}` as const
/** A user with an automatic-recovery in-app wallet. */
function walletUser(): User {
  const base = user()
  return { ...base, linkedAccounts: [...base.linkedAccounts, walletAccount(ADDRESS, 'latch')] }
}

function forkAnswers() {
  api.on('POST /sessions/fork', {
    body: {
      token: jwt(Math.floor(Date.now() / 1000) + 900),
      refresh_token: 'rt2',
      new_session_refresh_token: 'fork-tok',
    },
  })
}

describe('forkSession', () => {
  test('behavior: forks, offers the app whose link keeps the fragment, opens it on the host page with the token in the fragment and resolves with its link', async () => {
    api.on('POST /sessions/fork', {
      body: {
        token: jwt(Math.floor(Date.now() / 1000) + 900),
        refresh_token: 'rt2',
        new_session_refresh_token: 'fork-tok',
      },
    })
    const harness = signedIn()
    const opened = vi.spyOn(window, 'open').mockImplementation(() => null)
    const result = methods().forkSession()
    expect(await screen.findByRole('heading', { name: 'Continue in a wallet app' })).toBeTruthy()
    expect(
      screen.getByText(
        "Open this page in your wallet's browser, still signed in. The link works once, within 2 minutes.",
      ),
    ).toBeTruthy()
    // No wallet of this user: nothing is said of one.
    expect(screen.queryByTestId('fork-wallet-note')).toBeNull()
    const names = within(screen.getByTestId('fork-wallet-list'))
      .getAllByRole('button')
      .map((b) => b.textContent)
    // The others' links would send the address, token and all, to their link service.
    expect(names).toEqual(['MetaMask'])
    const metamask = screen.getByTestId('fork-wallet-metamask') as HTMLButtonElement
    await waitFor(() => expect(metamask.disabled).toBe(false))
    // The fork carried the session's refresh token and its bearer; the session took the new pair.
    const call = api.calls('POST /sessions/fork')[0]
    // The refresh token rides in the API's cookie: the body names none.
    expect(call?.body).toEqual({})
    expect(call?.headers.authorization).toMatch(/^Bearer /)
    expect(harness.tokens.value).toBe(true)

    fireEvent.click(metamask)
    const link = `https://metamask.app.link/dapp/localhost:5173/#${FORK_RETURN_PARAM}=fork-tok`
    expect(opened).toHaveBeenCalledWith(link, '_blank', 'noopener,noreferrer')
    expect(await result).toBe(link)
    expect(store.getState().open).toBe(false)
  })

  test('behavior: an expired access token is refreshed first, and the fork presents the refreshed pair', async () => {
    const fresh = jwt(Math.floor(Date.now() / 1000) + 900)
    api.on('POST /sessions', { body: { token: fresh, refresh_token: 'rt2', user: user() } })
    api.on('POST /sessions/fork', {
      body: { token: fresh, refresh_token: 'rt3', new_session_refresh_token: 'fork-tok' },
    })
    const harness = renderModal(api)
    act(() => harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) - 10) }, user()))
    expect(await harness.session.fork()).toBe('fork-tok')
    expect(api.calls('POST /sessions').map((c) => c.body)).toEqual([{}])
    const fork = api.calls('POST /sessions/fork')
    expect(fork.map((c) => c.body)).toEqual([{}])
    expect(fork[0]?.headers.authorization).toBe(`Bearer ${fresh}`)
    expect(harness.tokens.value).toBe(true)
  })

  test('error: a fork refused as an invalid refresh token ends the session here', async () => {
    api.on(
      'POST /sessions/fork',
      apiError(401, 'invalid_refresh_token', 'Invalid or expired refresh token'),
    )
    const harness = signedIn()
    const e = await rejection(harness.session.fork())
    expect(e).toMatchObject({ code: 'not_authenticated' })
    expect(harness.tokens.value).toBe(false)
    expect(store.getState().user).toBeNull()
  })

  test('error: a fork without the cookie a sign-in in this page set rejects at once with session_cookie_refused and shows why, not the signed-out text', async () => {
    api.on('POST /sessions/fork', apiError(401, 'invalid_refresh_token', NO_REFRESH_COOKIE_MESSAGE))
    const harness = signedIn()
    const e = await rejection(methods().forkSession())
    expect(e).toMatchObject({
      code: 'session_cookie_refused',
      message:
        'This browser refused the sign-in cookie in this app’s frame. Allow cross-site cookies for this app, or use another browser.',
    })
    expect(
      await screen.findByRole('heading', { name: 'Your wallet can’t open in this browser' }),
    ).toBeTruthy()
    expect(screen.queryByText('User is not authenticated.')).toBeNull()
    expect(harness.tokens.value).toBe(false)
    expect(store.getState().user).toBeNull()
    // Asked again, it says the same at once and asks the API nothing.
    fireEvent.click(screen.getByTestId('wallet-refused-close'))
    const again = await rejection(methods().forkSession())
    expect(again).toMatchObject({ code: 'session_cookie_refused' })
    expect(api.calls('POST /sessions/fork')).toHaveLength(1)
    expect(
      await screen.findByRole('heading', { name: 'Your wallet can’t open in this browser' }),
    ).toBeTruthy()
    // The other calls that need a session say the same, not 'User is not authenticated.'.
    fireEvent.click(screen.getByTestId('wallet-refused-close'))
    const signing = await rejection(methods().signMessage('hello'))
    expect(signing).toMatchObject({ code: 'session_cookie_refused' })
    expect(await rejection(methods().unlink({ type: 'email', address: 'a@b.co' }))).toMatchObject({
      code: 'session_cookie_refused',
    })
  })

  test('error: a refresh without the cookie of a session this page did not sign in (a reload) is a plain sign-out', async () => {
    api.on('POST /sessions', apiError(401, 'invalid_refresh_token', NO_REFRESH_COOKIE_MESSAGE))
    const harness = renderModal(api)
    harness.tokens.mark()
    expect(await harness.session.restore()).toBeNull()
    expect(harness.session.cookieRefused()).toBe(false)
    const e = await rejection(methods().forkSession())
    expect(e).toMatchObject({ code: 'not_authenticated' })
  })

  test('error: signed out, forkSession rejects with not_authenticated and asks nothing', async () => {
    renderModal(api)
    const e = await rejection(methods().forkSession())
    expect(isLatchError(e) && e.code).toBe('not_authenticated')
    expect(e).toMatchObject({ message: 'User is not authenticated.' })
    expect(api.calls('POST /sessions/fork')).toHaveLength(0)
  })

  test('error: a refused fork shows its message and Close rejects with fork_exited', async () => {
    api.on(
      'POST /sessions/fork',
      apiError(429, 'too_many_requests', 'Too many requests, please try again later'),
    )
    signedIn()
    const result = rejection(methods().forkSession())
    expect((await screen.findByTestId('fork-error')).textContent).toBe(
      'Too many requests, please try again later',
    )
    expect((screen.getByTestId('fork-wallet-metamask') as HTMLButtonElement).disabled).toBe(true)
    fireEvent.click(screen.getByTestId('fork-close'))
    expect(await result).toMatchObject({
      code: 'fork_exited',
      message: 'User exited the modal before opening a wallet app',
    })
  })
  test('behavior: for a user with an automatic wallet the click answers the link and the screen stays for the pairing code, which only the wallet frame shows; nothing is approved by message', async () => {
    forkAnswers()
    const frame = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'latch') })
    provideWalletFrame(frame.frame)
    const harness = signedIn(walletUser())
    vi.spyOn(window, 'open').mockImplementation(() => null)
    const result = methods().forkSession()
    expect((await screen.findByTestId('fork-wallet-note')).textContent).toBe(
      'The app you choose opens signed in. Your wallet opens there once you pair it with a code shown here.',
    )
    const metamask = screen.getByTestId('fork-wallet-metamask') as HTMLButtonElement
    await waitFor(() => expect(metamask.disabled).toBe(false))
    expect(frame.calls).toEqual([])
    fireEvent.click(metamask)
    await result
    // The frame is asked to SHOW the pairing button; no confirm-fork is ever sent.
    await waitFor(() =>
      expect(frame.calls).toContainEqual({
        method: 'latch:wallet:approval',
        params: expect.objectContaining({
          kind: 'fork-show-code',
          accessToken: expect.any(String),
        }),
      }),
    )
    expect(frame.calls.map((c) => c.method)).not.toContain('latch:wallet:confirm-fork')
    expect(screen.getByTestId('wallet-approval-slot')).toBeTruthy()
    fireEvent.click(screen.getByTestId('fork-pair-done'))
    await waitFor(() => expect(screen.queryByTestId('wallet-approval-slot')).toBeNull())
    expect(harness.emitted('warning')).toEqual([])
  })

  test('error: the pairing approval refused by the wallet API for a refused credential shows what to do in place of the screen, not a retry text', async () => {
    forkAnswers()
    const frame = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'latch') })
    frame.failNext('latch:wallet:approval', LatchError.of('wallet_sign_in_required'))
    provideWalletFrame(frame.frame)
    signedIn(walletUser())
    vi.spyOn(window, 'open').mockImplementation(() => null)
    const result = methods().forkSession()
    const metamask = (await screen.findByTestId('fork-wallet-metamask')) as HTMLButtonElement
    await waitFor(() => expect(metamask.disabled).toBe(false))
    fireEvent.click(metamask)
    // The link was already answered; the pairing cannot happen in this browser.
    await result
    await screen.findByTestId('screen-wallet-refused')
    expect(screen.queryByTestId('wallet-approval-error')).toBeNull()
    expect(screen.queryByTestId('wallet-approval-slot')).toBeNull()
  })

  test('behavior: a user without an in-app wallet hands nothing over', async () => {
    forkAnswers()
    const frame = walletFrameDouble()
    provideWalletFrame(frame.frame)
    signedIn()
    vi.spyOn(window, 'open').mockImplementation(() => null)
    const result = methods().forkSession()
    const metamask = (await screen.findByTestId('fork-wallet-metamask')) as HTMLButtonElement
    await waitFor(() => expect(metamask.disabled).toBe(false))
    fireEvent.click(metamask)
    await result
    await new Promise((r) => setTimeout(r, 20))
    expect(frame.calls).toEqual([])
  })

  test('refusal: no link is made for a page that is not the verified host origin, nor without one', async () => {
    for (const verified of ['http://other.example:8080', null]) {
      api.requests.length = 0
      forkAnswers()
      setVerifiedHost(verified, verified ? [verified] : [])
      signedIn()
      const result = rejection(methods().forkSession())
      expect((await screen.findByTestId('fork-error')).textContent).toBe(
        'This origin is not allowed for this app',
      )
      // Checked before the fork: no token exists for it.
      expect(api.calls('POST /sessions/fork')).toHaveLength(0)
      fireEvent.click(screen.getByTestId('fork-close'))
      expect(await result).toMatchObject({ code: 'fork_exited' })
      cleanup()
    }
  })
})

describe('init with a fork token', () => {
  test('behavior: redeems it without a bearer token, signs in and tells the host', async () => {
    api.on('POST /sessions/fork/recover', {
      body: {
        token: jwt(Math.floor(Date.now() / 1000) + 900),
        refresh_token: 'child-rt',
        user: user(),
      },
    })
    const harness = renderModal(api)
    const result = await methods().init({}, null, null, 'fork-tok')
    expect(result.user).toEqual(user())
    const call = api.calls('POST /sessions/fork/recover')[0]
    expect(call?.body).toEqual({ refresh_token: 'fork-tok' })
    expect(call?.headers.authorization).toBeUndefined()
    expect(harness.tokens.value).toBe(true)
    expect(harness.emitted('login')).toEqual([{ user: user(), isNewUser: false }])
  })

  test('error: a refused token leaves the page signed out and warns with the server message', async () => {
    api.on(
      'POST /sessions/fork/recover',
      apiError(401, 'fork_token_used', 'This session link has already been used'),
    )
    const harness = renderModal(api)
    const result = await methods().init({}, null, null, 'fork-tok')
    expect(result.user).toBeNull()
    expect(harness.emitted('warning')).toEqual([
      'Session link refused: This session link has already been used',
    ])
    expect(harness.emitted('login')).toEqual([])
  })

  test('error: a browser already signed in keeps its session and never spends the token', async () => {
    const harness = renderModal(api)
    const someoneElse = user('eve@example.com', 'did:latch:eve')
    const result = await methods(someoneElse).init({}, null, null, 'fork-tok')
    expect(result.user).toEqual(someoneElse)
    expect(api.calls('POST /sessions/fork/recover')).toHaveLength(0)
    expect(harness.emitted('warning')).toEqual([FORK_SIGNED_IN_WARNING])
  })

  test('refusal: a token the host SDK found in the address query (and dropped) is only reported', async () => {
    const harness = renderModal(api)
    const result = await methods().init({}, null, null, null, null, true)
    expect(result.user).toBeNull()
    expect(api.calls('POST /sessions/fork/recover')).toHaveLength(0)
    expect(harness.emitted('warning')).toEqual([FORK_QUERY_WARNING])
    expect(FORK_QUERY_WARNING).toBe('Ignored a session link: its token was in the address query')
    // Without the flag, nothing is said.
    const quiet = renderModal(api)
    await methods().init({}, null, null, null, null, false)
    expect(quiet.emitted('warning')).toEqual([])
  })

  test('refusal: a modal talking to no verified host origin redeems nothing', async () => {
    setVerifiedHost(null)
    const harness = renderModal(api)
    const result = await methods().init({}, null, null, 'fork-tok')
    expect(result.user).toBeNull()
    expect(api.calls('POST /sessions/fork/recover')).toHaveLength(0)
    expect(harness.emitted('warning')).toEqual([FORK_UNVERIFIED_WARNING])
  })
})
