import { FORK_RETURN_PARAM, isLatchError } from '@latch/shared'
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { FORK_SIGNED_IN_WARNING } from './fork.ts'
import { createModalMethods } from './methods.ts'
import { store } from './store.ts'
import { type ApiDouble, apiError, startApiDouble } from './test/api-double.ts'
import { jwt, serverConfig, user } from './test/fixtures.ts'
import { type Harness, renderModal } from './test/harness.tsx'

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
function signedIn(): Harness {
  const harness = renderModal(api)
  act(() =>
    harness.session.start(
      { token: jwt(Math.floor(Date.now() / 1000) + 600), refresh_token: 'rt' },
      user(),
    ),
  )
  return harness
}

describe('forkSession', () => {
  test('behavior: forks, offers the four wallet apps, opens the chosen one on the host page with the token and resolves with its link', async () => {
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
        "Open this page in your wallet's browser, still signed in. The link works once, within 5 minutes.",
      ),
    ).toBeTruthy()
    const names = screen.getAllByRole('button').map((b) => b.textContent)
    expect(names).toEqual(
      expect.arrayContaining(['MetaMask', 'Coinbase Wallet', 'Trust Wallet', 'Phantom']),
    )
    const metamask = screen.getByTestId('fork-wallet-metamask') as HTMLButtonElement
    await waitFor(() => expect(metamask.disabled).toBe(false))
    // The fork carried the session's refresh token and its bearer; the session took the new pair.
    const call = api.calls('POST /sessions/fork')[0]
    expect(call?.body).toEqual({ refresh_token: 'rt' })
    expect(call?.headers.authorization).toMatch(/^Bearer /)
    expect(harness.tokens.value).toBe('rt2')

    fireEvent.click(metamask)
    const link = `https://metamask.app.link/dapp/localhost:5173/?${FORK_RETURN_PARAM}=fork-tok`
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
    act(() =>
      harness.session.start(
        { token: jwt(Math.floor(Date.now() / 1000) - 10), refresh_token: 'rt' },
        user(),
      ),
    )
    expect(await harness.session.fork()).toBe('fork-tok')
    expect(api.calls('POST /sessions').map((c) => c.body)).toEqual([{ refresh_token: 'rt' }])
    const fork = api.calls('POST /sessions/fork')
    expect(fork.map((c) => c.body)).toEqual([{ refresh_token: 'rt2' }])
    expect(fork[0]?.headers.authorization).toBe(`Bearer ${fresh}`)
    expect(harness.tokens.value).toBe('rt3')
  })

  test('error: a fork refused as an invalid refresh token ends the session here', async () => {
    api.on(
      'POST /sessions/fork',
      apiError(401, 'invalid_refresh_token', 'Invalid or expired refresh token'),
    )
    const harness = signedIn()
    const e = await rejection(harness.session.fork())
    expect(e).toMatchObject({ code: 'not_authenticated' })
    expect(harness.tokens.value).toBeNull()
    expect(store.getState().user).toBeNull()
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
    expect((screen.getByTestId('fork-wallet-trust') as HTMLButtonElement).disabled).toBe(true)
    fireEvent.click(screen.getByTestId('fork-close'))
    expect(await result).toMatchObject({
      code: 'fork_exited',
      message: 'User exited the modal before opening a wallet app',
    })
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
    expect(harness.tokens.value).toBe('child-rt')
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
})
