/**
 * The in-app wallet's flows in the modal: create (with and without a passcode, at login), the
 * connecting gate, recovery. The wallet frame (the API origin's page) is stood in for by
 * test/wallet-frame-double.ts; the API is the HTTP double; everything of the modal is real.
 */
import {
  embeddedWallet,
  type Hex,
  LatchError,
  type LoginResult,
  type User,
  type WalletAccount,
} from '@latch/shared'
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { exitFlow, login } from '../flow/flow.ts'
import { withTimeout } from '../flow/timeout.ts'
import { submitCode, submitDestination } from '../passwordless/passwordless.ts'
import { preloadScreens } from '../screens/lazy.tsx'
import { type AppView, mergeConfig } from '../startup/config.ts'
import { createModalMethods } from '../startup/methods.ts'
import { store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { authAnswer, jwt, serverConfig, user } from '../test/fixtures.ts'
import { type Harness, renderModal } from '../test/harness.tsx'
import { FAKE_TIMERS, until } from '../test/until.ts'
import {
  type WalletFrameDouble,
  walletAccount,
  walletFrameDouble,
} from '../test/wallet-frame-double.ts'
import { createErrorText, ensureWalletReady } from './flows.ts'
import { mountWalletFrame, provideWalletFrame, walletFrameUrl } from './frame.ts'
import { createOnLogin, needsWalletAtLogin } from './index.ts'

let api: ApiDouble
let double: WalletFrameDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  cleanup()
  vi.useRealTimers()
  vi.restoreAllMocks()
  provideWalletFrame(null)
  api.requests.length = 0
})

const methods = () =>
  createModalMethods({
    serverConfig: () => Promise.resolve(serverConfig()),
    restoredUser: () => Promise.resolve(null),
  })

const ADDRESS = `0x${'12'.repeat(20)}` as Hex
const externalWallet: WalletAccount = {
  ...walletAccount(ADDRESS, 'latch'),
  walletClient: 'unknown',
  walletClientType: 'metamask',
  connectorType: 'injected',
  recoveryMethod: null,
}

/** The user as the server has them: with the double's wallet once there is one. */
function serverUser(base: User): User {
  const wallet = double.wallet
  if (!wallet) return base
  return { ...base, linkedAccounts: [...base.linkedAccounts, wallet], wallet }
}

/** The user read answers the server's user (what the modal asks after a create). */
function answerRefresh(base: User): void {
  api.on('POST /sessions/user', () => ({ body: { user: serverUser(base) } }))
}

/** The modal rendered with a signed-in user and the frame double. */
function signedIn(
  base: User,
  config: Parameters<typeof renderModal>[1] = {},
  host: Parameters<typeof renderModal>[2] = {},
): Harness {
  provideWalletFrame(double.frame)
  answerRefresh(base)
  const harness = renderModal(api, config, host)
  act(() => {
    harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, serverUser(base))
  })
  return harness
}

/**
 * The frame calls that create or change something: the passcode screen's credential check
 * (passkey options, a read) left out.
 */
const creating = (double: { calls: { method: string }[] }) =>
  double.calls.filter((c) => c.method !== 'latch:wallet:passkey-options')

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

const advance = (ms: number) =>
  act(() => {
    vi.advanceTimersByTime(ms)
  })

function type(testId: string, text: string): void {
  fireEvent.paste(screen.getByTestId(`${testId}-0`), { clipboardData: { getData: () => text } })
}

describe('create on login', () => {
  const app = (createOnLogin: 'off' | 'all-users' | 'users-without-wallets'): AppView =>
    mergeConfig(
      serverConfig({
        embeddedWalletConfig: { createOnLogin, requireUserPasswordOnCreate: false },
      }),
      {},
    )
  const inApp = walletAccount(ADDRESS, 'latch')
  const plain = user()
  const withExternal: User = { ...plain, linkedAccounts: [...plain.linkedAccounts, externalWallet] }
  const withInApp: User = { ...plain, linkedAccounts: [...plain.linkedAccounts, inApp] }

  test.each([
    ['off', 'no wallet', plain, false],
    ['off', 'an external wallet', withExternal, false],
    ['all-users', 'no wallet', plain, true],
    ['all-users', 'an external wallet', withExternal, true],
    ['all-users', 'an in-app wallet', withInApp, false],
    ['users-without-wallets', 'no wallet', plain, true],
    ['users-without-wallets', 'an external wallet', withExternal, false],
    ['users-without-wallets', 'an in-app wallet', withInApp, false],
  ] as const)('param: %s, a user with %s: creates a wallet %s', (setting, _, who, expected) => {
    expect(needsWalletAtLogin(app(setting), who)).toBe(expected)
    const step = createOnLogin({
      flow: { kind: 'login' },
      result: { user: who, isNewUser: false },
      app: app(setting),
    })
    expect(step === null).toBe(!expected)
    if (step) expect(step.pauseMs).toBe(500)
  })

  test('param: a link never creates a wallet; the page may turn creation on over the server', () => {
    expect(
      createOnLogin({
        flow: { kind: 'link', account: 'email' },
        result: { user: plain, isNewUser: false },
        app: app('all-users'),
      }),
    ).toBeNull()
    const hostOn = mergeConfig(serverConfig(), {
      embeddedWallets: { createOnLogin: 'users-without-wallets' },
    })
    expect(needsWalletAtLogin(hostOn, plain)).toBe(true)
  })

  test('behavior: a new user signs in, sees success 500 ms, the wallet is created, the created screen shows 4500 ms, login resolves with the wallet', async () => {
    double = walletFrameDouble()
    provideWalletFrame(double.frame)
    const newcomer = user('new@example.com', 'did:latch:new')
    answerRefresh(newcomer)
    api.on('POST /passwordless/init', { body: { success: true } })
    api.on('POST /passwordless/authenticate', authAnswer(newcomer, true))
    const harness = renderModal(api, {
      walletAuth: false,
      embeddedWalletConfig: {
        createOnLogin: 'users-without-wallets',
        requireUserPasswordOnCreate: false,
      },
    })
    let result!: Promise<LoginResult>
    act(() => {
      result = login()
    })
    await act(() => submitDestination('email', 'new@example.com'))
    await act(() => preloadScreens())
    vi.useFakeTimers(FAKE_TIMERS)
    await act(() => submitCode('123456'))
    advance(450)
    expect(store.getState().screen).toBe('AWAITING_PASSWORDLESS_CODE')
    advance(60)
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_SCREEN')
    await until(() => store.getState().screen === 'EMBEDDED_WALLET_CREATED_SCREEN')
    expect(double.calls.map((c) => c.method)).toEqual(['latch:wallet:create'])
    expect(double.calls[0]?.params).not.toHaveProperty('recoveryPin')
    expect(screen.getByTestId('created-address')).toBeTruthy()
    let settled = false
    void result.then(() => {
      settled = true
    })
    advance(4400)
    await act(async () => {})
    expect(settled).toBe(false)
    advance(100)
    const wallet = double.wallet as WalletAccount
    await expect(result).resolves.toEqual({
      user: serverUser(newcomer),
      isNewUser: true,
    })
    expect(store.getState().open).toBe(false)
    // The host heard of the user with the new wallet, and of both analytics events.
    expect(harness.emitted('user').at(-1)).toMatchObject({ wallet: { address: wallet.address } })
    expect(harness.emitted('embedded_wallet_creation_started')).toHaveLength(1)
    expect(harness.emitted('embedded_wallet_creation_completed')).toHaveLength(1)
    expect(harness.emitted('login')).toEqual([{ user: serverUser(newcomer), isNewUser: true }])
  })

  test('behavior: closing the create screen at login still resolves login with the sign-in', async () => {
    double = walletFrameDouble()
    provideWalletFrame(double.frame)
    const returning = user()
    answerRefresh(returning)
    api.on('POST /passwordless/init', { body: { success: true } })
    api.on('POST /passwordless/authenticate', authAnswer(returning, false))
    renderModal(api, {
      walletAuth: false,
      embeddedWalletConfig: { createOnLogin: 'all-users', requireUserPasswordOnCreate: true },
    })
    let result!: Promise<LoginResult>
    act(() => {
      result = login()
    })
    await act(() => submitDestination('email', 'ada@example.com'))
    vi.useFakeTimers({ shouldAdvanceTime: true })
    await act(() => submitCode('123456'))
    advance(510)
    expect(await screen.findByRole('heading', { name: 'Set your passcode' })).toBeTruthy()
    act(() => exitFlow(true))
    await expect(result).resolves.toEqual({ user: returning, isNewUser: false })
    expect(creating(double)).toEqual([])
  })
})

describe('createWallet()', () => {
  test('error: signed out, or a user who has an in-app wallet, is refused and the modal stays closed', async () => {
    double = walletFrameDouble()
    provideWalletFrame(double.frame)
    renderModal(api)
    expect(await rejection(methods().createWallet())).toMatchObject({
      code: 'create_not_authenticated',
      message: 'User must be authenticated before creating a wallet',
    })
    cleanup()
    double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'latch') })
    signedIn(user())
    expect(await rejection(methods().createWallet())).toMatchObject({
      message: 'Only one wallet per user is currently allowed',
    })
    expect(store.getState().open).toBe(false)
    expect(double.calls).toEqual([])
  })

  test('behavior: with a passcode, the created screen follows 350 ms after creation, then the wallet account resolves', async () => {
    double = walletFrameDouble()
    const harness = signedIn(user(), {
      embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: true },
    })
    let created!: Promise<WalletAccount>
    act(() => {
      created = methods().createWallet()
    })
    await screen.findByRole('heading', { name: 'Set your passcode' })
    type('passcode-input', 'Ab3dE9')
    await act(() => preloadScreens())
    vi.useFakeTimers(FAKE_TIMERS)
    fireEvent.click(screen.getByTestId('set-passcode'))
    await until(() => store.getState().wallet?.status === 'success')
    expect(creating(double)[0]).toMatchObject({
      method: 'latch:wallet:create',
      params: { recoveryPin: 'Ab3dE9', accessToken: expect.any(String) },
    })
    advance(300)
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_SCREEN')
    advance(60)
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_CREATED_SCREEN')
    advance(4500)
    const account = await created
    expect(account).toEqual(double.wallet)
    expect(account.recoveryMethod).toBe('user-passcode')
    expect(harness.emitted('user').at(-1)).toMatchObject({ wallet: account })
    // The user is read by the access token: nothing rotated the refresh cookie.
    const read = api.calls('POST /sessions/user')
    expect(read).toHaveLength(1)
    expect(read[0]?.headers.authorization).toMatch(/^Bearer /)
    expect(api.calls('POST /sessions')).toHaveLength(0)
  })

  test('behavior: without a passcode, a user not new this session gets the wallet and the modal closes at once', async () => {
    double = walletFrameDouble()
    signedIn(user())
    const created = methods().createWallet()
    const account = await created
    expect(account.recoveryMethod).toBe('latch')
    expect(store.getState()).toMatchObject({ open: false, screen: 'LANDING' })
    expect(embeddedWallet(store.getState().user?.linkedAccounts ?? [])).toEqual(account)
  })

  test('error: exiting rejects with "User exited before creating a wallet"; a failed creation shows "Something went wrong" with Close, and closing then rejects with the failure', async () => {
    double = walletFrameDouble()
    signedIn(user(), {
      embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: true },
    })
    let created!: Promise<WalletAccount>
    act(() => {
      created = methods().createWallet()
    })
    await screen.findByRole('heading', { name: 'Set your passcode' })
    act(() => exitFlow(true))
    expect(await rejection(created)).toMatchObject({
      code: 'create_exited',
      message: 'User exited before creating a wallet',
    })

    cleanup()
    double = walletFrameDouble()
    double.failNext('latch:wallet:create', new Error('boom') as never)
    vi.spyOn(console, 'error').mockImplementation(() => {})
    signedIn(user())
    act(() => {
      created = methods().createWallet()
    })
    expect(await screen.findByRole('heading', { name: 'Something went wrong' })).toBeTruthy()
    fireEvent.click(screen.getByTestId('error-close'))
    expect(await rejection(created)).toMatchObject({ code: 'internal_error' })
  })

  test('error: signed out under the create screen, the caller hears why and the visitor sees the landing', async () => {
    double = walletFrameDouble()
    const harness = signedIn(user(), {
      embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: true },
    })
    let created!: Promise<WalletAccount>
    act(() => {
      created = methods().createWallet()
    })
    await screen.findByRole('heading', { name: 'Set your passcode' })
    act(() => harness.session.clear())
    type('passcode-input', 'Ab3dE9')
    fireEvent.click(screen.getByTestId('set-passcode'))
    expect(await rejection(created)).toMatchObject({
      code: 'create_not_authenticated',
      message: 'User must be authenticated before creating a wallet',
    })
    expect(store.getState()).toMatchObject({ open: true, screen: 'LANDING' })
    expect(creating(double)).toEqual([])
  })

  test('error: the server refusing a second wallet shows its text on the passcode screen', async () => {
    double = walletFrameDouble()
    vi.spyOn(console, 'error').mockImplementation(() => {})
    signedIn(user(), {
      embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: true },
    })
    act(() => {
      void methods()
        .createWallet()
        .catch(() => {})
    })
    await screen.findByRole('heading', { name: 'Set your passcode' })
    // Another tab created one meanwhile: the modal's user is stale, the server is not.
    double.wallet = walletAccount(ADDRESS, 'latch')
    type('passcode-input', 'Ab3dE9')
    fireEvent.click(screen.getByTestId('set-passcode'))
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Only one wallet per user is currently allowed',
    )
  })
})

test('param: the create screen says the catalogue text for each failure', () => {
  expect(createErrorText(LatchError.of('wallet_already_exists'))).toBe(
    'Only one wallet per user is currently allowed',
  )
  expect(createErrorText(LatchError.of('unable_to_create_wallet'))).toBe('Unable to create wallet')
  expect(createErrorText(LatchError.of('passcode_invalid_length'))).toBe(
    'Passcode must be exactly 6 letters and numbers',
  )
  expect(createErrorText(LatchError.of('embedded_wallet_error', { message: 'internal' }))).toBe(
    'An error has occurred, please try again.',
  )
  expect(createErrorText(new Error('network'))).toBe('An error has occurred, please try again.')
})

describe('recoverWallet() and the connecting gate', () => {
  test('error: no user, or a user without an in-app wallet, cannot recover', async () => {
    double = walletFrameDouble()
    provideWalletFrame(double.frame)
    renderModal(api)
    const text = 'User must be authenticated and have a wallet before it can be recovered'
    expect(await rejection(methods().recoverWallet())).toMatchObject({ message: text })
    cleanup()
    signedIn({ ...user(), linkedAccounts: [...user().linkedAccounts, externalWallet] })
    expect(await rejection(methods().recoverWallet())).toMatchObject({ message: text })
    expect(double.calls).toEqual([])
  })

  test('behavior: a wallet on this device resolves at once, the modal never opens', async () => {
    double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'user-passcode') })
    double.device.add(ADDRESS)
    const harness = signedIn(user())
    await expect(methods().recoverWallet()).resolves.toEqual(double.wallet)
    expect(double.calls.map((c) => c.method)).toEqual(['latch:wallet:connect'])
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen')).toEqual([])
  })

  test('behavior: automatic recovery on a new device needs no prompt', async () => {
    double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'latch') })
    const harness = signedIn(user())
    await expect(methods().recoverWallet()).resolves.toEqual(double.wallet)
    expect(double.calls.map((c) => c.method)).toEqual([
      'latch:wallet:connect',
      'latch:wallet:recover',
    ])
    expect(double.calls[1]?.params).not.toHaveProperty('recoveryPin')
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen')).toEqual([])
    expect(harness.emitted('recovery_started')).toHaveLength(1)
    expect(harness.emitted('recovery_completed')).toHaveLength(1)
  })

  test('behavior: a passcode wallet on a new device opens the recovery screen; a wrong passcode shows the catalogue text; the right one resolves', async () => {
    double = walletFrameDouble({
      wallet: walletAccount(ADDRESS, 'user-passcode'),
      passcode: 'Ab3dE9',
    })
    const harness = signedIn(user())
    const recovered = methods().recoverWallet()
    expect(await screen.findByRole('heading', { name: 'Load your account' })).toBeTruthy()
    expect(
      screen.getByText("We haven't seen this device yet. To continue, please enter your passcode."),
    ).toBeTruthy()
    type('passcode-input', 'wrong1')
    fireEvent.click(screen.getByRole('button', { name: 'Recover your account' }))
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Invalid recovery passcode, please try again.',
    )
    type('passcode-input', 'Ab3dE9')
    fireEvent.click(screen.getByRole('button', { name: 'Recover your account' }))
    await expect(recovered).resolves.toEqual(double.wallet)
    expect(store.getState().open).toBe(false)
    expect(double.device.has(ADDRESS)).toBe(true)
    expect(harness.emitted('recovery_completed')).toHaveLength(1)
  })

  test('behavior: a passkey wallet on a new device: the recovery screen asks for the passkey only; a failed ceremony says so; the frame runs the passkey and the modal hears only the address', async () => {
    double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'passkey') })
    signedIn(user())
    const recovered = methods().recoverWallet()
    expect(await screen.findByRole('heading', { name: 'Load your account' })).toBeTruthy()
    expect(
      screen.getByText("We haven't seen this device yet. To continue, please use your passkey."),
    ).toBeTruthy()
    expect(document.querySelectorAll('input[data-testid^="passcode-input-"]')).toHaveLength(0)
    double.failNext('latch:wallet:recover', LatchError.of('passkey_failed'))
    fireEvent.click(screen.getByRole('button', { name: 'Use your passkey' }))
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Your passkey was not used, please try again.',
    )
    fireEvent.click(screen.getByRole('button', { name: 'Use your passkey' }))
    await expect(recovered).resolves.toEqual(double.wallet)
    const calls = double.calls.filter((c) => c.method === 'latch:wallet:recover')
    expect(calls.at(-1)?.params).toEqual({
      address: ADDRESS,
      accessToken: expect.any(String),
      recoveryMethod: 'passkey',
    })
  })

  test('error: five wrong passcodes lock recovery; the screen says how long and keeps the button off until then', async () => {
    double = walletFrameDouble({
      wallet: walletAccount(ADDRESS, 'user-passcode'),
      passcode: 'Ab3dE9',
    })
    double.failures = 5
    signedIn(user())
    void methods()
      .recoverWallet()
      .catch(() => {})
    await screen.findByRole('heading', { name: 'Load your account' })
    vi.useFakeTimers({ shouldAdvanceTime: true })
    type('passcode-input', 'Ab3dE9')
    const button = screen.getByRole('button', { name: 'Recover your account' })
    fireEvent.click(button)
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Too many incorrect passcodes. Recovery is locked, please try again later. Try again in 1 minute.',
    )
    expect((button as HTMLButtonElement).disabled).toBe(true)
    advance(61_000)
    expect((button as HTMLButtonElement).disabled).toBe(false)
  })

  test('behavior: each refused passcode is told to the host (wallet_recovery_failed), the lock with its wait; a failure of another kind is not', async () => {
    double = walletFrameDouble({
      wallet: walletAccount(ADDRESS, 'user-passcode'),
      passcode: 'Ab3dE9',
    })
    const harness = signedIn(user())
    void methods()
      .recoverWallet()
      .catch(() => {})
    await screen.findByRole('heading', { name: 'Load your account' })
    const button = () => screen.getByRole('button', { name: 'Recover your account' })
    for (const n of [1, 2]) {
      type('passcode-input', `wrong${n}`)
      fireEvent.click(button())
      await waitFor(() => expect(harness.emitted('wallet_recovery_failed')).toHaveLength(n))
    }
    expect(harness.emitted('wallet_recovery_failed')).toEqual([
      { address: ADDRESS, reason: 'invalid_passcode' },
      { address: ADDRESS, reason: 'invalid_passcode' },
    ])
    // Not a passcode failure: nothing for the host.
    double.failNext('latch:wallet:recover', new Error('network down') as never)
    type('passcode-input', 'Ab3dE9')
    fireEvent.click(button())
    expect((await screen.findByRole('alert')).textContent).toBe(
      'An error has occurred, please try again.',
    )
    expect(harness.emitted('wallet_recovery_failed')).toHaveLength(2)
    double.failures = 5
    type('passcode-input', 'wrong3')
    fireEvent.click(button())
    await waitFor(() => expect(harness.emitted('wallet_recovery_failed')).toHaveLength(3))
    expect(harness.emitted('wallet_recovery_failed')[2]).toEqual({
      address: ADDRESS,
      reason: 'locked',
      retryAfter: 60,
    })
  })

  test('behavior: a weak passcode an existing wallet already has still recovers it (the weak list applies only when choosing one)', async () => {
    double = walletFrameDouble({
      wallet: walletAccount(ADDRESS, 'user-passcode'),
      passcode: '123456',
    })
    signedIn(user())
    const recovered = methods().recoverWallet()
    await screen.findByRole('heading', { name: 'Load your account' })
    type('passcode-input', '123456')
    expect(screen.queryByRole('alert')).toBeNull()
    fireEvent.click(screen.getByRole('button', { name: 'Recover your account' }))
    await expect(recovered).resolves.toEqual(double.wallet)
  })

  test('error: another failure of the frame gives "An error has occurred, please try again."', async () => {
    double = walletFrameDouble({
      wallet: walletAccount(ADDRESS, 'user-passcode'),
      passcode: 'Ab3dE9',
    })
    signedIn(user())
    void methods()
      .recoverWallet()
      .catch(() => {})
    await screen.findByRole('heading', { name: 'Load your account' })
    double.failNext('latch:wallet:recover', new Error('network down') as never)
    type('passcode-input', 'Ab3dE9')
    fireEvent.click(screen.getByRole('button', { name: 'Recover your account' }))
    expect((await screen.findByRole('alert')).textContent).toBe(
      'An error has occurred, please try again.',
    )
  })

  test('error: exiting the recovery screen rejects with "User exited before their wallet could be recovered"', async () => {
    double = walletFrameDouble({
      wallet: walletAccount(ADDRESS, 'user-passcode'),
      passcode: 'Ab3dE9',
    })
    signedIn(user())
    const recovered = methods().recoverWallet()
    await screen.findByRole('heading', { name: 'Load your account' })
    act(() => exitFlow(true))
    expect(await rejection(recovered)).toMatchObject({
      code: 'recovery_exited',
      message: 'User exited before their wallet could be recovered',
    })
  })

  test('behavior: the gate inside a flow shows the connecting screen, then goes to its target', async () => {
    double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'latch') })
    signedIn(user())
    act(() => {
      store.setState({ open: true, flow: { kind: 'recover-wallet' } })
    })
    let gate!: Promise<void>
    act(() => {
      gate = ensureWalletReady('EMBEDDED_WALLET_SIGN_REQUEST_SCREEN')
    })
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_CONNECTING_SCREEN')
    await act(() => gate)
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_SIGN_REQUEST_SCREEN')
    expect(double.calls.map((c) => c.method)).toEqual([
      'latch:wallet:connect',
      'latch:wallet:recover',
    ])
  })

  test('error: the gate shows a failure of the frame on the connecting screen, with Close', async () => {
    double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'latch') })
    double.failNext('latch:wallet:connect', LatchError.of('embedded_wallet_error'))
    vi.spyOn(console, 'error').mockImplementation(() => {})
    signedIn(user())
    act(() => {
      store.setState({ open: true, flow: { kind: 'recover-wallet' } })
    })
    await act(() => ensureWalletReady('EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'))
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_CONNECTING_SCREEN')
    expect((await screen.findByRole('alert')).textContent).toBe(
      'An error has occurred, please try again.',
    )
    fireEvent.click(screen.getByTestId('connecting-close'))
    expect(store.getState().open).toBe(false)
  })

  test('behavior: the gate goes to the recovery screen when the passcode is needed', async () => {
    double = walletFrameDouble({
      wallet: walletAccount(ADDRESS, 'user-passcode'),
      passcode: 'Ab3dE9',
    })
    signedIn(user())
    act(() => {
      store.setState({ open: true, flow: { kind: 'recover-wallet' } })
    })
    await act(() => ensureWalletReady('EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'))
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_RECOVERY_SCREEN')
    type('passcode-input', 'Ab3dE9')
    fireEvent.click(await screen.findByRole('button', { name: 'Recover your account' }))
    await waitFor(() => expect(store.getState().screen).toBe('EMBEDDED_WALLET_SIGN_REQUEST_SCREEN'))
  })
})

describe('the frame', () => {
  test('behavior: the frame is the API origin page of the app', () => {
    expect(walletFrameUrl('https://api.example.com/', 'app 1')).toBe(
      'https://api.example.com/apps/app%201/embedded-wallets',
    )
  })

  test('error: a frame that never answers is removed, logged, and rejects with a LatchError', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const mounting = mountWalletFrame({
      apiUrl: api.url,
      appId: 'clx0000000000000000000001',
      connectTimeoutMs: 200,
    })
    expect(document.querySelector('[data-testid="latch-wallet-frame"]')).toBeTruthy()
    const error = await rejection(mounting)
    expect(error).toMatchObject({ name: 'LatchError', type: 'embedded_wallet_error' })
    expect(document.querySelector('[data-testid="latch-wallet-frame"]')).toBeNull()
    expect(logged).toHaveBeenCalled()
  })

  test('error: a call the frame never answers times out', async () => {
    vi.useFakeTimers()
    const hanging = withTimeout(new Promise(() => {}), 1000, () => new Error('late') as never)
    const settled = rejection(hanging)
    vi.advanceTimersByTime(999)
    await Promise.resolve()
    vi.advanceTimersByTime(1)
    expect(await settled).toMatchObject({ message: 'late' })
  })
})
