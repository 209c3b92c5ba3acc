import { ERRORS, type LoginResult, type User } from '@latch/shared'
import { act, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { link } from '../flow/entries.ts'
import { currentFlow, exitFlow, login } from '../flow/flow.ts'
import { store } from '../store.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { jwt, user } from '../test/fixtures.ts'
import { frameFocused, type Harness, renderModal } from '../test/harness.tsx'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  vi.restoreAllMocks()
  api.requests.length = 0
})

const box = (i: number) => screen.getByTestId(`code-input-${i}`) as HTMLInputElement
const boxes = () => [0, 1, 2, 3, 4, 5].map((i) => box(i).value).join('')

function typeCode(code: string): void {
  ;[...code].forEach((c, i) => {
    fireEvent.input(box(i), { target: { value: c } })
  })
}

/** Opens login and gets to the code screen for ada@example.com. */
async function toCodeScreen(): Promise<{ harness: Harness; result: Promise<LoginResult> }> {
  api.on('POST /passwordless/init', { body: { success: true } })
  const harness = renderModal(api, { walletAuth: false })
  let result!: Promise<LoginResult>
  act(() => {
    result = login()
  })
  fireEvent.input(screen.getByTestId('email-input'), { target: { value: 'ada@example.com' } })
  fireEvent.click(screen.getByTestId('email-submit'))
  await screen.findByTestId('screen-AWAITING_PASSWORDLESS_CODE')
  return { harness, result }
}

describe('typing', () => {
  test('behavior: the six boxes are one group named Confirmation code, each box Digit n of 6', async () => {
    await toCodeScreen()
    const group = screen.getByRole('group', { name: 'Confirmation code' })
    const names = [...group.querySelectorAll('input')].map((b) => b.getAttribute('aria-label'))
    expect(names).toEqual([1, 2, 3, 4, 5, 6].map((n) => `Digit ${n} of 6`))
    // Errors and Success! are spoken from a live region that is there before they appear.
    expect(screen.getByTestId('code-status').getAttribute('aria-live')).toBe('polite')
  })

  test('behavior: each digit moves focus on; six digits submit, then Success! and close after 1400 ms', async () => {
    const signedIn = user()
    api.on('POST /passwordless/authenticate', {
      body: {
        user: signedIn,
        token: jwt(Math.floor(Date.now() / 1000) + 3600),
        refresh_token: 'rt-1',
        is_new_user: true,
      },
    })
    frameFocused()
    const { harness, result } = await toCodeScreen()
    expect(document.activeElement).toBe(box(0))
    fireEvent.input(box(0), { target: { value: '1' } })
    expect(document.activeElement).toBe(box(1))
    vi.useFakeTimers({ shouldAdvanceTime: true })
    typeCode('123456')
    expect(await screen.findByTestId('code-success')).toBeTruthy()
    expect(screen.getByTestId('code-success').textContent).toBe('Success!')
    expect(api.calls('POST /passwordless/authenticate')[0]?.body).toEqual({
      email: 'ada@example.com',
      code: '123456',
    })
    act(() => {
      vi.advanceTimersByTime(1300)
    })
    expect(store.getState().open).toBe(true)
    act(() => {
      vi.advanceTimersByTime(150)
    })
    expect(store.getState().open).toBe(false)
    await expect(result).resolves.toEqual({ user: signedIn, isNewUser: true })
    expect(harness.emitted('login')).toEqual([{ user: signedIn, isNewUser: true }])
    expect(harness.hostCalls.filter((c) => c.method === 'setOpen').map((c) => c.args[0])).toEqual([
      true,
      false,
    ])
    expect(harness.tokens.value).toBe(true)
  })

  test('behavior: a pasted code fills every box, trimmed, and is submitted', async () => {
    api.on('POST /passwordless/authenticate', apiError(422, 'invalid_verification_code', 'x'))
    await toCodeScreen()
    fireEvent.paste(box(2), { clipboardData: { getData: () => '  654321 \n' } })
    expect(boxes()).toBe('654321')
    await waitFor(() => expect(api.calls('POST /passwordless/authenticate')).toHaveLength(1))
    expect(api.calls('POST /passwordless/authenticate')[0]?.body).toMatchObject({ code: '654321' })
  })

  test('behavior: Backspace clears and moves back', async () => {
    await toCodeScreen()
    typeCode('123')
    expect(document.activeElement).toBe(box(3))
    fireEvent.keyDown(box(3), { key: 'Backspace' })
    expect(boxes()).toBe('12')
    expect(document.activeElement).toBe(box(2))
    fireEvent.keyDown(box(1), { key: 'Backspace' })
    expect(boxes()).toBe('1')
    expect(document.activeElement).toBe(box(0))
  })
})

describe('errors', () => {
  test('error: non-numeric input reads "Code should be numeric" and the boxes clear after 1400 ms', async () => {
    await toCodeScreen()
    vi.useFakeTimers({ shouldAdvanceTime: true })
    typeCode('12a')
    expect(screen.getByTestId('code-error').textContent).toBe('Code should be numeric')
    act(() => {
      vi.advanceTimersByTime(1300)
    })
    expect(boxes()).toBe('12a')
    act(() => {
      vi.advanceTimersByTime(150)
    })
    expect(boxes()).toBe('')
    expect(screen.queryByTestId('code-error')).toBeNull()
    expect(api.calls('POST /passwordless/authenticate')).toHaveLength(0)
  })

  test('error: a 422 reads "Invalid or expired verification code" until the visitor types again', async () => {
    api.on('POST /passwordless/authenticate', apiError(422, 'invalid_verification_code', 'Nope'))
    frameFocused()
    await toCodeScreen()
    typeCode('000000')
    expect((await screen.findByTestId('code-error')).textContent).toBe(
      ERRORS.invalid_verification_code.message,
    )
    expect(ERRORS.invalid_verification_code.message).toBe('Invalid or expired verification code')
    // The refused code is gone and the first box is ready; the error is still there to be read.
    await waitFor(() => expect(boxes()).toBe(''))
    expect(document.activeElement).toBe(box(0))
    expect(screen.getByTestId('code-error')).toBeTruthy()
    fireEvent.input(box(0), { target: { value: '4' } })
    expect(screen.queryByTestId('code-error')).toBeNull()
    expect(boxes()).toBe('4')
  })

  test('error: after a wrong code, retyping the whole code sends it once, and a second wrong code empties the boxes again', async () => {
    let answers = 0
    api.on('POST /passwordless/authenticate', () => {
      answers++
      return apiError(422, 'invalid_verification_code', 'Nope')
    })
    frameFocused()
    await toCodeScreen()
    typeCode('123457')
    await screen.findByTestId('code-error')
    await waitFor(() => expect(boxes()).toBe(''))
    // Each digit lands in a fresh entry: five digits complete nothing, the sixth sends one code.
    typeCode('12345')
    expect(boxes()).toBe('12345')
    expect(api.calls('POST /passwordless/authenticate')).toHaveLength(1)
    fireEvent.input(box(5), { target: { value: '6' } })
    await waitFor(() => expect(answers).toBe(2))
    expect(api.calls('POST /passwordless/authenticate')[1]?.body).toMatchObject({ code: '123456' })
    await waitFor(() => expect(boxes()).toBe(''))
    expect(document.activeElement).toBe(box(0))
    expect(api.calls('POST /passwordless/authenticate')).toHaveLength(2)
  })

  test('error: digits typed while a code is checked neither edit it nor send another', async () => {
    api.on('POST /passwordless/authenticate', {
      ...apiError(422, 'invalid_verification_code', 'Nope'),
      delay: 100,
    })
    await toCodeScreen()
    typeCode('400000')
    // The boxes are read-only while the code is checked.
    expect(box(0).readOnly).toBe(true)
    await screen.findByTestId('code-error')
    await waitFor(() => expect(boxes()).toBe(''))
    expect(api.calls('POST /passwordless/authenticate')).toHaveLength(1)
  })

  test('error: any other failure reads "Issue verifying code"', async () => {
    api.on('POST /passwordless/authenticate', apiError(500, 'internal_error', 'boom'))
    await toCodeScreen()
    typeCode('111111')
    expect((await screen.findByTestId('code-error')).textContent).toBe('Issue verifying code')
    expect(store.getState().open).toBe(true)
  })

  test('error: allowlist_rejected at authenticate shows the configured rejection', async () => {
    api.on('POST /passwordless/authenticate', apiError(403, 'allowlist_rejected', 'no'))
    api.on('POST /passwordless/init', { body: { success: true } })
    renderModal(api, {
      walletAuth: false,
      allowlistConfig: {
        errorTitle: 'Members only',
        errorDetail: 'Ask for an invite.',
        errorCtaText: 'Join the waitlist',
        errorCtaLink: 'https://acme.test/waitlist',
      },
    })
    act(() => {
      login().catch(() => {})
    })
    fireEvent.input(screen.getByTestId('email-input'), { target: { value: 'ada@example.com' } })
    fireEvent.click(screen.getByTestId('email-submit'))
    await screen.findByTestId('screen-AWAITING_PASSWORDLESS_CODE')
    typeCode('123456')
    await screen.findByTestId('screen-ALLOWLIST_REJECTION_SCREEN')
    expect(screen.getByTestId('allowlist-title').textContent).toBe('Members only')
    expect(screen.getByTestId('allowlist-detail').textContent).toBe('Ask for an invite.')
    const cta = screen.getByTestId('allowlist-cta')
    expect(cta.textContent).toBe('Join the waitlist')
    expect(cta.getAttribute('href')).toBe('https://acme.test/waitlist')
  })
})

describe('closing while a code is checked', () => {
  test('behavior: a late answer signs in, and no stale timer closes or reports later', async () => {
    const signedIn = user()
    api.on('POST /passwordless/authenticate', {
      body: {
        user: signedIn,
        token: jwt(Math.floor(Date.now() / 1000) + 3600),
        refresh_token: 'rt-late',
        is_new_user: false,
      },
      delay: 150,
    })
    const { harness, result } = await toCodeScreen()
    const outcome = result.then(
      () => 'resolved',
      (e: { code?: string }) => e.code,
    )
    typeCode('123456')
    act(() => exitFlow(true))
    expect(await outcome).toBe('login_exited')
    await waitFor(() => expect(harness.tokens.value).toBe(true))
    // Signed in: the next login() answers at once, and no stale timer closes or reopens.
    await expect(login()).resolves.toEqual({ user: signedIn, isNewUser: false })
    vi.useFakeTimers({ shouldAdvanceTime: true })
    act(() => {
      vi.advanceTimersByTime(2000)
    })
    expect(store.getState()).toMatchObject({ open: false })
    expect(currentFlow()).toMatchObject({ result: null })
    // Opened for the flow, closed on exit, and closed again by the signed-in login(): it hides a
    // frame the host may have shown over a server-rendered landing (flow.ts). No timer adds one.
    const opens = harness.hostCalls.filter((c) => c.method === 'setOpen').map((c) => c.args[0])
    expect(opens).toEqual([true, false, false])
    expect(harness.emitted('login')).toEqual([])
  })
})

describe('link', () => {
  test('behavior: linking an e-mail uses /passwordless/link and resolves the updated user', async () => {
    const before = user('ada@example.com')
    const after: User = {
      ...before,
      linkedAccounts: [
        ...before.linkedAccounts,
        { type: 'phone', number: '+14155550132', verifiedAt: '2026-01-02T00:00:00.000Z' },
      ],
    }
    api.on('POST /passwordless_sms/init', { body: { success: true } })
    api.on('POST /passwordless_sms/link', { body: after })
    const harness = renderModal(api, { walletAuth: false })
    act(() => store.setState({ user: before }))
    let linked!: Promise<User>
    act(() => {
      linked = link('phone')
    })
    expect(screen.getByTestId('screen-LINK_PHONE_SCREEN')).toBeTruthy()
    expect(screen.getByRole('heading', { name: 'Connect your phone' })).toBeTruthy()
    expect(screen.getByTestId('link-description').textContent).toBe(
      'Add your number to your Acme account',
    )
    expect(screen.getByTestId('phone-helper').textContent).toBe('Easily connect a phone number')
    expect(screen.getByTestId('latch-modal').getAttribute('data-size')).toBe('medium')
    fireEvent.input(screen.getByTestId('phone-input'), { target: { value: '415 555 0132' } })
    const submit = screen.getByTestId('phone-submit') as HTMLButtonElement
    // The phone check loads with the first phone form.
    await waitFor(() => expect(submit.disabled).toBe(false))
    fireEvent.click(submit)
    await screen.findByTestId('screen-AWAITING_PASSWORDLESS_CODE')
    vi.useFakeTimers({ shouldAdvanceTime: true })
    typeCode('222333')
    await screen.findByTestId('code-success')
    expect(api.calls('POST /passwordless_sms/link')[0]?.body).toEqual({
      phoneNumber: '+14155550132',
      code: '222333',
    })
    act(() => {
      vi.advanceTimersByTime(1400)
    })
    await expect(linked).resolves.toEqual(after)
    expect(harness.emitted('login')).toEqual([])
    expect(harness.emitted('user').at(-1)).toEqual(after)
  })

  test('param: the e-mail link screen texts', () => {
    renderModal(api, {}, { name: 'Ignored' })
    act(() => store.setState({ user: user() }))
    act(() => {
      link('email').catch(() => {})
    })
    expect(screen.getByRole('heading', { name: 'Connect your email' })).toBeTruthy()
    expect(screen.getByTestId('link-description').textContent).toBe(
      'Add your email to your Acme account',
    )
    expect(screen.getByTestId('email-helper').textContent).toBe('Easily connect an email')
  })
})

describe('resend', () => {
  test('behavior: Resend code asks for a new code; other failures say the code could not be checked', async () => {
    await toCodeScreen()
    api.on('POST /passwordless/init', apiError(500, 'internal_error', 'Down'))
    fireEvent.click(screen.getByTestId('resend-code'))
    expect((await screen.findByTestId('code-error')).textContent).toBe(
      ERRORS.code_verification_failed.message,
    )
    api.on('POST /passwordless/init', { body: { success: true } })
    fireEvent.click(screen.getByTestId('resend-code'))
    await waitFor(() => expect(screen.queryByTestId('code-error')).toBeNull())
    expect(api.calls('POST /passwordless/init')[2]?.body).toEqual({
      email: 'ada@example.com',
      locale: 'en',
    })
  })

  test('behavior: inside the server’s wait, Resend code counts down the seconds left instead of "Too many requests"', async () => {
    await toCodeScreen()
    api.on('POST /passwordless/init', {
      ...apiError(429, 'too_many_requests', 'Too many requests, please try again later'),
      headers: { 'retry-after': '42' },
    })
    vi.useFakeTimers({ shouldAdvanceTime: true })
    const resend = screen.getByTestId('resend-code')
    fireEvent.click(resend)
    await waitFor(() => expect(resend.textContent).toBe('Resend code in 42 s'))
    expect(screen.queryByText(/Too many/)).toBeNull()
    expect(screen.queryByTestId('code-error')).toBeNull()
    expect(resend.getAttribute('aria-disabled')).toBe('true')
    // Said once to a screen reader, with the seconds the server named.
    expect(screen.getByTestId('resend-wait').textContent).toBe('Resend code in 42 s')
    act(() => {
      vi.advanceTimersByTime(2000)
    })
    expect(resend.textContent).toBe('Resend code in 40 s')
    // A click inside the wait asks nothing.
    fireEvent.click(resend)
    expect(api.calls('POST /passwordless/init')).toHaveLength(2)
    api.on('POST /passwordless/init', { body: { success: true } })
    act(() => {
      vi.advanceTimersByTime(40_000)
    })
    expect(resend.textContent).toBe('Resend code')
    expect(resend.getAttribute('aria-disabled')).toBeNull()
    expect(screen.getByTestId('resend-wait').textContent).toBe('')
    fireEvent.click(resend)
    await waitFor(() => expect(api.calls('POST /passwordless/init')).toHaveLength(3))
  })

  test('behavior: a 429 without a wait still says to try later', async () => {
    await toCodeScreen()
    api.on('POST /passwordless/init', apiError(429, 'too_many_requests', 'Too many'))
    fireEvent.click(screen.getByTestId('resend-code'))
    expect((await screen.findByTestId('code-error')).textContent).toBe(
      ERRORS.too_many_requests.message,
    )
  })
})
