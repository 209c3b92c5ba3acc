/**
 * The in-app wallet's screens: texts (docs/behaviour.md, "EMBEDDED_WALLET_SCREEN" and
 * "EMBEDDED_WALLET_RECOVERY_SCREEN"), the passcode boxes (typing, paste, Backspace, validation),
 * the generate and copy labels' timers, the recovery screen. The wallet frame is
 * test/wallet-frame-double.ts; everything of the modal is real.
 */
import { LatchError, type WalletAccount } from '@latch/shared'
import { act, cleanup, fireEvent, screen } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { jwt, user } from '../test/fixtures.ts'
import { renderModal } from '../test/harness.tsx'
import { FAKE_TIMERS, until } from '../test/until.ts'
import { walletAccount, walletFrameDouble } from '../test/wallet-frame-double.ts'
import { provideWalletFrame } from '../wallet/frame.ts'
import { createWallet, recoverWallet } from '../wallet/index.ts'
import { preloadScreens } from './lazy.tsx'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  cleanup()
  vi.useRealTimers()
  vi.unstubAllGlobals()
  provideWalletFrame(null)
  api.requests.length = 0
})

const box = (i: number) => screen.getByTestId(`passcode-input-${i}`) as HTMLInputElement
const boxes = () => [0, 1, 2, 3, 4, 5].map((i) => box(i).value).join('')
const setButton = () => screen.getByRole('button', { name: 'Set passcode' }) as HTMLButtonElement
const status = () => screen.getByTestId('passcode-input-status').textContent

/** A signed-in user on EMBEDDED_WALLET_SCREEN with a passcode required. */
async function toCreateScreen(): Promise<{
  created: Promise<WalletAccount>
  double: ReturnType<typeof walletFrameDouble>
}> {
  const double = walletFrameDouble()
  provideWalletFrame(double.frame)
  const harness = renderModal(api, {
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: true },
  })
  act(() => {
    harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, user())
  })
  let created!: Promise<WalletAccount>
  act(() => {
    created = createWallet()
  })
  created.catch(() => {})
  // Every screen's chunk loaded now, so the timers below count from the screen's mount.
  await act(() => preloadScreens())
  await screen.findByRole('heading', { name: 'Set your passcode' })
  // Wrapped: an async function answering a promise would wait for it.
  return { created, double }
}

describe('EMBEDDED_WALLET_SCREEN: set your passcode', () => {
  test('error: a browser that refused the wallet credential: createWallet() rejects with wallet_sign_in_required before any passcode is asked, and the modal says what to do', async () => {
    const double = walletFrameDouble()
    double.failNext('latch:wallet:passkey-options', LatchError.of('wallet_sign_in_required'))
    provideWalletFrame(double.frame)
    const harness = renderModal(api, {
      embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: true },
    })
    act(() => {
      harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, user())
    })
    let created!: Promise<WalletAccount>
    act(() => {
      created = createWallet()
    })
    await expect(created).rejects.toMatchObject({ code: 'wallet_sign_in_required' })
    await screen.findByTestId('screen-wallet-refused')
    expect(double.calls.map((c) => c.method)).toEqual(['latch:wallet:passkey-options'])
  })

  test('behavior: the screen texts, the hint in a live line, six named boxes', async () => {
    await toCreateScreen()
    expect(screen.getByRole('button', { name: 'Generate passcode' })).toBeTruthy()
    expect(setButton().disabled).toBe(true)
    expect(screen.getByRole('button', { name: 'Why am I doing this?' })).toBeTruthy()
    expect(status()).toBe('Passcode can be letters and numbers')
    expect(screen.getByTestId('passcode-input-status').getAttribute('aria-live')).toBe('polite')
    const group = screen.getByRole('group', { name: 'Passcode' })
    const names = [...group.querySelectorAll('input')].map((b) => b.getAttribute('aria-label'))
    expect(names).toEqual([1, 2, 3, 4, 5, 6].map((n) => `Character ${n} of 6`))
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_SCREEN')
  })

  test('behavior: letters and digits move focus on; the button is enabled only with all six', async () => {
    await toCreateScreen()
    ;[...'aB3dE'].forEach((c, i) => {
      fireEvent.input(box(i), { target: { value: c } })
    })
    expect(document.activeElement).toBe(box(5))
    expect(setButton().disabled).toBe(true)
    fireEvent.input(box(5), { target: { value: '9' } })
    expect(boxes()).toBe('aB3dE9')
    expect(setButton().disabled).toBe(false)
  })

  test('error: a character that is not a letter or digit says so at once and keeps the button off', async () => {
    await toCreateScreen()
    fireEvent.paste(box(0), { clipboardData: { getData: () => 'ab-de9' } })
    expect(screen.getByRole('alert').textContent).toBe('Passcode can only be letters and numbers')
    expect(setButton().disabled).toBe(true)
  })

  test('error: a common weak passcode says so as it is completed and keeps the button off; one more change clears it', async () => {
    const { double } = await toCreateScreen()
    for (const weak of ['123456', 'Qwerty', 'aaaaaa']) {
      fireEvent.paste(box(0), { clipboardData: { getData: () => weak } })
      expect(screen.getByRole('alert').textContent, weak).toBe(
        'This passcode is too easy to guess, please choose another',
      )
      expect(setButton().disabled).toBe(true)
    }
    // Enter on the form does not submit it either.
    fireEvent.submit(setButton().closest('form') as HTMLFormElement)
    expect(double.calls.filter((c) => c.method === 'latch:wallet:create')).toEqual([])
    fireEvent.input(box(5), { target: { value: 'q' } })
    expect(boxes()).toBe('aaaaaq')
    expect(screen.queryByRole('alert')).toBeNull()
    expect(setButton().disabled).toBe(false)
  })

  test('error: leaving an incomplete passcode says it must be exactly 6', async () => {
    await toCreateScreen()
    fireEvent.input(box(0), { target: { value: 'a' } })
    expect(status()).toBe('Passcode can be letters and numbers')
    fireEvent.blur(box(1), {
      relatedTarget: screen.getByRole('button', { name: 'Generate passcode' }),
    })
    expect(screen.getByRole('alert').textContent).toBe(
      'Passcode must be exactly 6 letters and numbers',
    )
    // Moving between the boxes is not leaving them.
    cleanup()
    await toCreateScreen()
    fireEvent.input(box(0), { target: { value: 'a' } })
    fireEvent.blur(box(1), { relatedTarget: box(2) })
    expect(screen.queryByRole('alert')).toBeNull()
  })

  test('behavior: a pasted passcode fills every box from the first; Backspace clears a box and moves back', async () => {
    await toCreateScreen()
    fireEvent.paste(box(3), { clipboardData: { getData: () => ' Qw3rT7 \n' } })
    expect(boxes()).toBe('Qw3rT7')
    expect(setButton().disabled).toBe(false)
    box(5).focus()
    fireEvent.keyDown(box(5), { key: 'Backspace' })
    expect(boxes()).toBe('Qw3rT')
    expect(document.activeElement).toBe(box(4))
    expect(setButton().disabled).toBe(true)
    // On an empty box, Backspace clears the one before.
    fireEvent.keyDown(box(5), { key: 'Backspace' })
    expect(boxes()).toBe('Qw3r')
  })

  test('behavior: "Why am I doing this?" opens its explanation', async () => {
    await toCreateScreen()
    const why = screen.getByRole('button', { name: 'Why am I doing this?' })
    expect(why.getAttribute('aria-expanded')).toBe('false')
    fireEvent.click(why)
    expect(why.getAttribute('aria-expanded')).toBe('true')
    expect(screen.getByTestId('passcode-why-text').textContent).toMatch(/new device/)
  })

  test('behavior: Generate shows a 6-character passcode read-only as "Secure your passcode", "Generated" for 1 s, "Copied" for 1.5 s', async () => {
    await toCreateScreen()
    const written: string[] = []
    vi.stubGlobal('navigator', {
      ...navigator,
      clipboard: { writeText: async (text: string) => void written.push(text) },
    })
    vi.useFakeTimers(FAKE_TIMERS)
    fireEvent.click(screen.getByRole('button', { name: 'Generate passcode' }))
    expect(screen.getByRole('heading', { name: 'Secure your passcode' })).toBeTruthy()
    // The new view is announced and the keyboard lands on Copy.
    expect(document.querySelector('[data-latch-announcer]')?.textContent).toBe(
      'Secure your passcode',
    )
    expect(document.activeElement).toBe(screen.getByTestId('copy-passcode'))
    const generated = screen.getByTestId('generated-passcode').getAttribute('data-value') ?? ''
    expect(generated).toMatch(/^[A-Za-z0-9]{6}$/)
    const shown = [0, 1, 2, 3, 4, 5].map(
      (i) => screen.getByTestId(`generated-passcode-${i}`) as HTMLInputElement,
    )
    expect(shown.map((b) => b.value).join('')).toBe(generated)
    expect(shown.every((b) => b.readOnly)).toBe(true)
    expect(screen.getByTestId('generate-passcode').textContent).toBe('Generated')
    act(() => vi.advanceTimersByTime(990))
    expect(screen.getByTestId('generate-passcode').textContent).toBe('Generated')
    act(() => vi.advanceTimersByTime(20))
    expect(screen.getByTestId('generate-passcode').textContent).toBe('Generate passcode')

    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Copy' }))
    })
    expect(written).toEqual([generated])
    expect(screen.getByTestId('copy-passcode').textContent).toBe('Copied')
    act(() => vi.advanceTimersByTime(1490))
    expect(screen.getByTestId('copy-passcode').textContent).toBe('Copied')
    act(() => vi.advanceTimersByTime(20))
    expect(screen.getByTestId('copy-passcode').textContent).toBe('Copy')
  })

  test('behavior: "I have saved my passcode" creates the wallet with the generated passcode; the created screen follows after 350 ms and completes after 4500 ms', async () => {
    const double = walletFrameDouble()
    const { created } = await toCreateScreen()
    provideWalletFrame(double.frame)
    // The user read after creation answers the user with the new wallet.
    api.on('POST /sessions/user', () => ({
      body: { user: { ...user(), linkedAccounts: [...user().linkedAccounts, double.wallet] } },
    }))
    fireEvent.click(screen.getByRole('button', { name: 'Generate passcode' }))
    const generated = screen.getByTestId('generated-passcode').getAttribute('data-value')
    vi.useFakeTimers(FAKE_TIMERS)
    fireEvent.click(screen.getByRole('button', { name: 'I have saved my passcode' }))
    await until(() => store.getState().wallet?.status === 'success')
    expect(double.calls[0]?.params.recoveryPin).toBe(generated)
    act(() => vi.advanceTimersByTime(340))
    expect(store.getState().screen).toBe('EMBEDDED_WALLET_SCREEN')
    act(() => vi.advanceTimersByTime(20))
    expect(
      screen.getByTestId('screen-EMBEDDED_WALLET_CREATED_SCREEN').querySelector('h1')?.textContent,
    ).toBe('Your wallet is ready')
    act(() => vi.advanceTimersByTime(4490))
    expect(store.getState().open).toBe(true)
    act(() => vi.advanceTimersByTime(20))
    await expect(created).resolves.toMatchObject({ address: double.wallet?.address })
  })
})

describe('EMBEDDED_WALLET_RECOVERY_SCREEN', () => {
  test('behavior: its texts; the button stays off until six valid characters', async () => {
    const address = `0x${'34'.repeat(20)}` as const
    const double = walletFrameDouble({
      wallet: walletAccount(address, 'user-passcode'),
      passcode: 'Ab3dE9',
    })
    provideWalletFrame(double.frame)
    const harness = renderModal(api)
    const wallet = double.wallet as WalletAccount
    act(() => {
      harness.session.start(
        { token: jwt(Math.floor(Date.now() / 1000) + 3600) },
        { ...user(), linkedAccounts: [...user().linkedAccounts, wallet], wallet },
      )
    })
    void recoverWallet().catch(() => {})
    expect(await screen.findByRole('heading', { name: 'Load your account' })).toBeTruthy()
    expect(
      screen.getByText("We haven't seen this device yet. To continue, please enter your passcode."),
    ).toBeTruthy()
    const button = screen.getByRole('button', { name: 'Recover your account' }) as HTMLButtonElement
    expect(button.disabled).toBe(true)
    fireEvent.paste(box(0), { clipboardData: { getData: () => 'Ab3dE' } })
    expect(button.disabled).toBe(true)
    fireEvent.input(box(5), { target: { value: '9' } })
    expect(button.disabled).toBe(false)
  })
})
