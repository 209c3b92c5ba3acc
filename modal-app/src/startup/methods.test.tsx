import { isLatchError } from '@latch/shared'
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { App } from '../App.tsx'
import { clientId } from '../session/analytics.ts'
import { store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { jwt, serverConfig, user } from '../test/fixtures.ts'
import { frameFocused, renderModal, setupRuntime } from '../test/harness.tsx'
import { createModalMethods } from './methods.ts'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
  api.on('POST /analytics_events', { body: { success: true } })
})
afterAll(() => api.close())
afterEach(() => {
  vi.restoreAllMocks()
  api.requests.length = 0
})

function methods(server = serverConfig(), restored = null as ReturnType<typeof user> | null) {
  return createModalMethods({
    serverConfig: async () => server,
    restoredUser: async () => restored,
  })
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

describe('init', () => {
  test('behavior: merges, answers the app and user, reports sdk_initialize', async () => {
    const harness = setupRuntime(api)
    const result = await methods(serverConfig(), user()).init(
      { appearance: { theme: 'dark' }, loginMethods: ['email', 'wallet', 'google'] },
      null,
    )
    expect(result.user).toEqual(user())
    expect(result.warnings).toEqual([])
    expect(result.app.emailAuth).toBe(true)
    expect(result.app.googleOAuth).toBe(false)
    expect(result.app.theme).toBe('dark')
    expect(store.getState().status).toBe('ready')
    await waitFor(() => expect(api.calls('POST /analytics_events')).toHaveLength(1))
    expect(api.calls('POST /analytics_events')[0]?.body).toMatchObject({
      event_name: 'sdk_initialize',
      client_id: clientId(),
    })
    expect(harness.emitted('sdk_initialize')).toHaveLength(1)
  })

  test('behavior: warnings reach the host through emit("warning")', async () => {
    const harness = setupRuntime(api)
    const result = await methods(serverConfig({ smsAuth: true })).init(
      { loginMethods: ['email', 'sms'], appearance: { theme: '#888888' } },
      null,
    )
    expect(result.warnings).toHaveLength(2)
    expect(harness.emitted('warning')).toEqual(result.warnings)
    expect(result.app.smsAuth).toBe(false)
  })

  test('error: invalid configurations reject with the spec messages', async () => {
    setupRuntime(api)
    const m = methods()
    expect(await rejection(m.init({ loginMethods: [] }, null))).toMatchObject({
      message: 'You must enable at least one login method',
    })
    expect(await rejection(m.init({ loginMethods: ['google'] }, null))).toMatchObject({
      message: 'To enable social logins you must also enable either SMS or Email login',
    })
    const bad = await rejection(
      m.init(
        { appearance: { accentColor: 'red' } } as unknown as Parameters<typeof m.init>[0],
        null,
      ),
    )
    expect(isLatchError(bad) && bad.code).toBe('invalid_data')
    expect(String((bad as Error).message)).toMatch(/appearance\.accentColor/)
  })
})

describe('login and close', () => {
  test('behavior: login opens the landing, tells the host, records modal_open', async () => {
    const harness = renderModal(api)
    let pending!: Promise<unknown>
    act(() => {
      pending = rejection(methods().login())
    })
    expect(store.getState()).toMatchObject({ open: true, screen: 'LANDING' })
    // The host's dialog and frame take the modal's own name, in the visitor's language.
    expect(harness.hostCalls.find((c) => c.method === 'setOpen')?.args).toEqual([
      true,
      'Log in to Acme',
    ])
    expect(harness.emitted('modal_open')).toHaveLength(1)
    // The host closed its dialog: the pending login rejects with login_exited.
    await act(() => methods().close())
    expect(await pending).toMatchObject({
      code: 'login_exited',
      message: 'User exited the modal before logging in',
    })
    expect(store.getState().open).toBe(false)
    expect(harness.emitted('modal_closed')).toHaveLength(1)
  })

  test('behavior: the close button rejects login and asks the host to close', async () => {
    const harness = renderModal(api)
    let pending!: Promise<unknown>
    act(() => {
      pending = rejection(methods().login())
    })
    await userEvent.click(screen.getByTestId('close-button'))
    expect(await pending).toMatchObject({ code: 'login_exited' })
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen').map((c) => c.args[0])).toEqual([
      true,
      false,
    ])
  })

  test('behavior: Escape inside the frame closes a dialog', async () => {
    renderModal(api)
    let pending!: Promise<unknown>
    act(() => {
      pending = rejection(methods().login())
    })
    fireEvent.keyDown(document, { key: 'Escape' })
    expect(await pending).toMatchObject({ code: 'login_exited' })
  })

  test('param: Escape does nothing when rendered inline', () => {
    renderModal(api, {}, { render: { inParentNodeId: 'slot' } })
    act(() => {
      methods()
        .login()
        .catch(() => {})
    })
    fireEvent.keyDown(document, { key: 'Escape' })
    expect(store.getState().open).toBe(true)
    expect(screen.getByTestId('latch-modal').getAttribute('aria-modal')).toBe('false')
  })

  test('behavior: a signed-in visitor gets their user at once', async () => {
    const harness = renderModal(api)
    harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 600) }, user())
    await expect(methods().login()).resolves.toEqual({ user: user(), isNewUser: false })
    expect(store.getState().open).toBe(false)
  })
})

describe('link, unlink, logout, wallet methods', () => {
  test('error: link needs a user; unsupported kinds reject method_not_available', async () => {
    renderModal(api)
    expect(await rejection(methods().link('email'))).toMatchObject({ code: 'not_authenticated' })
    act(() => store.setState({ user: user() }))
    expect(await rejection(methods().link('google'))).toMatchObject({
      code: 'method_not_available',
    })
  })

  test('behavior: closing a link rejects link_exited', async () => {
    renderModal(api)
    act(() => store.setState({ user: user() }))
    let pending!: Promise<unknown>
    act(() => {
      pending = rejection(methods().link('email'))
    })
    expect(await screen.findByTestId('screen-LINK_EMAIL_SCREEN')).toBeTruthy()
    await act(() => methods().close())
    expect(await pending).toMatchObject({ code: 'link_exited' })
  })

  test('behavior: unlink posts the account and answers the updated user', async () => {
    const updated = { ...user(), linkedAccounts: [], email: undefined }
    api.on('POST /passwordless/unlink', { body: updated })
    api.on('POST /passwordless_sms/unlink', { body: updated })
    const harness = renderModal(api)
    act(() => store.setState({ user: user() }))
    const result = await methods().unlink({ type: 'email', address: 'ada@example.com' })
    expect(result).toEqual(JSON.parse(JSON.stringify(updated)))
    expect(api.calls('POST /passwordless/unlink')[0]?.body).toEqual({ address: 'ada@example.com' })
    await methods().unlink({ type: 'phone', number: '+14155550132' })
    expect(api.calls('POST /passwordless_sms/unlink')[0]?.body).toEqual({
      phoneNumber: '+14155550132',
    })
    expect(harness.emitted('user').length).toBeGreaterThan(0)
    expect(
      await rejection(
        methods().unlink({ type: 'bogus' } as unknown as Parameters<
          ReturnType<typeof methods>['unlink']
        >[0]),
      ),
    ).toMatchObject({ code: 'invalid_data' })
  })

  test("behavior: link('wallet') opens the wallet link screen; unlinking an external wallet posts /siwe/unlink", async () => {
    const address = '0x0000000000000000000000000000000000000001'
    const updated = { ...user(), linkedAccounts: [] }
    api.on('POST /siwe/unlink', { body: updated })
    renderModal(api)
    act(() => store.setState({ user: user() }))
    act(() => {
      methods()
        .link('wallet')
        .catch(() => {})
    })
    // Its code loads at the first link() (flow/entries.ts).
    await vi.waitFor(() => expect(store.getState().screen).toBe('LINK_WALLET_SCREEN'))
    expect(await methods().unlink({ type: 'wallet', address })).toEqual(updated)
    expect(api.calls('POST /siwe/unlink')[0]?.body).toEqual({ address })
  })

  test('behavior: logout destroys the session and tells the host', async () => {
    api.on('POST /sessions/logout', { body: { success: true } })
    const harness = renderModal(api)
    harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 600) }, user())
    await methods().logout()
    expect(api.calls('POST /sessions/logout')[0]?.body).toEqual({})
    expect(await methods().getUser()).toBeNull()
    expect(await methods().getAccessToken()).toBeNull()
    expect(harness.emitted('logout')).toHaveLength(1)
  })
})

describe('shell', () => {
  test('behavior: loading view before init, then the dialog is labelled', () => {
    setupRuntime(api)
    render(<App />)
    expect(screen.getByTestId('screen-loading')).toBeTruthy()
    const dialog = screen.getByRole('dialog')
    expect(dialog.getAttribute('aria-modal')).toBe('true')
    expect(dialog.getAttribute('aria-label')).toBe('Log in')
  })

  test('behavior: the general error view has its texts and a Close button', async () => {
    setupRuntime(api)
    render(<App />)
    act(() => store.setState({ status: 'error' }))
    expect(screen.getByText('Something went wrong')).toBeTruthy()
    expect(screen.getByText('We’re on it. Please try again later.')).toBeTruthy()
    expect(screen.getByTestId('error-close').textContent).toBe('Close')
  })

  test('behavior: Tab stays inside the modal', async () => {
    renderModal(api, { walletAuth: false })
    frameFocused()
    act(() => {
      methods()
        .login()
        .catch(() => {})
    })
    const input = screen.getByTestId('email-input')
    expect(document.activeElement).toBe(input)
    await userEvent.type(input, 'ada@example.com')
    screen.getByTestId('email-submit').focus()
    await userEvent.tab()
    expect(document.activeElement).toBe(screen.getByTestId('close-button'))
    await userEvent.tab({ shift: true })
    expect(document.activeElement).toBe(screen.getByTestId('email-submit'))
  })
})
