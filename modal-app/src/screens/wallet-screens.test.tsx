/**
 * The external wallets' screens without a connection: education, the install guides (the QR
 * code of Coinbase Wallet's), login failed; their texts, links and where their buttons go.
 */
import type { LoginResult } from '@latch/shared'
import { act, fireEvent, screen } from '@testing-library/react'
import QRCode from 'qrcode'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { COINBASE_WALLET, LEARN_MORE_URL, METAMASK, PHANTOM } from '../connectors/wallets.ts'
import { login, navigate } from '../flow/flow.ts'
import { store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { renderModal } from '../test/harness.tsx'
import { qrCodeImage } from './InstallWallet.tsx'
import type { ScreenId } from './ids.ts'
import { backTarget } from './registry.ts'

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const ANDROID =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  vi.restoreAllMocks()
})

function asBrowser(userAgent: string): void {
  vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue(userAgent)
}

/** Opens login and shows `id`. */
async function show(id: ScreenId): Promise<{ result: Promise<LoginResult> }> {
  renderModal(api)
  let result!: Promise<LoginResult>
  act(() => {
    result = login()
  })
  result.catch(() => {})
  act(() => navigate(id))
  await screen.findByTestId(`screen-${id}`)
  // Wrapped: an async function would otherwise wait on the sign-in itself.
  return { result }
}

const heading = () => screen.getByRole('heading', { level: 1 }).textContent

describe('WALLET_EDUCATION', () => {
  test('behavior: "Get started with a new wallet", MetaMask (browser wallet) and Coinbase Wallet (mobile app) to their guides', async () => {
    asBrowser(CHROME)
    await show('WALLET_EDUCATION')
    expect(heading()).toBe('Get started with a new wallet')
    expect(screen.getByRole('heading', { level: 2 }).textContent).toBe('Create a new wallet')
    const options = screen.getAllByTestId('education-option')
    expect(options.map((o) => o.textContent)).toEqual([
      'MetaMask Browser wallet',
      'Coinbase Wallet Mobile app',
    ])
    expect(screen.getByTestId('latch-modal').getAttribute('data-size')).toBe('full')
    fireEvent.click(options[0] as HTMLElement)
    await screen.findByTestId('screen-INSTALL_METAMASK_SCREEN')
    act(() => navigate('WALLET_EDUCATION'))
    fireEvent.click((await screen.findAllByTestId('education-option'))[1] as HTMLElement)
    await screen.findByTestId('screen-INSTALL_COINBASE_WALLET_SCREEN')
  })

  test.each([
    [IPHONE, METAMASK.appStore, COINBASE_WALLET.appStore],
    [ANDROID, METAMASK.playStore, COINBASE_WALLET.playStore],
  ])('param: on a phone (%s) the choices are app store links', async (ua, metamask, coinbase) => {
    asBrowser(ua)
    await show('WALLET_EDUCATION')
    const links = screen.getAllByTestId('education-option')
    expect(links.map((l) => l.getAttribute('href'))).toEqual([metamask, coinbase])
    expect(links.every((l) => l.getAttribute('rel') === 'noopener noreferrer')).toBe(true)
  })
})

describe('install guides', () => {
  test.each([
    ['INSTALL_METAMASK_SCREEN', 'Install MetaMask', CHROME, METAMASK.chrome],
    ['INSTALL_METAMASK_SCREEN', 'Install MetaMask', FIREFOX, METAMASK.firefox],
    ['INSTALL_PHANTOM_SCREEN', 'Install Phantom', CHROME, PHANTOM.chrome],
    ['INSTALL_PHANTOM_SCREEN', 'Install Phantom', FIREFOX, PHANTOM.firefox],
  ] as const)('param: %s "%s" links the extension for the browser', async (id, title, ua, url) => {
    asBrowser(ua)
    await show(id)
    expect(heading()).toBe(title)
    expect(screen.getByTestId('install-link').getAttribute('href')).toBe(url)
    // Phantom's guide is reached from the wallet list (the landing's here), MetaMask's from
    // WALLET_EDUCATION.
    expect(backTarget(id)).toBe(id === 'INSTALL_PHANTOM_SCREEN' ? 'LANDING' : 'WALLET_EDUCATION')
  })

  test.each([
    'INSTALL_METAMASK_SCREEN',
    'INSTALL_PHANTOM_SCREEN',
    'INSTALL_COINBASE_WALLET_SCREEN',
  ] as const)(
    'behavior: %s ends with "Done! I have my wallet" (to LANDING) and "Still not sure? Learn more"',
    async (id) => {
      await show(id)
      const learn = screen.getByTestId('learn-more')
      expect(learn.textContent).toBe('Still not sure? Learn more')
      expect(learn.getAttribute('href')).toBe(LEARN_MORE_URL)
      const done = screen.getByTestId('install-done')
      expect(done.textContent).toBe('Done! I have my wallet')
      fireEvent.click(done)
      expect(store.getState().screen).toBe('LANDING')
    },
  )

  test('behavior: Coinbase Wallet shows a QR code of its download page: high error correction, 160 px', async () => {
    await show('INSTALL_COINBASE_WALLET_SCREEN')
    expect(heading()).toBe('Install Coinbase Wallet')
    const img = await screen.findByTestId('install-qr')
    expect(img.getAttribute('alt')).toBe('QR code to download Coinbase Wallet')
    // SPEC's QR code: default size 160.
    expect(img.getAttribute('width')).toBe('160')
    const src = img.getAttribute('src') ?? ''
    expect(src).toBe(await qrCodeImage(COINBASE_WALLET.download))
    const svg = decodeURIComponent(src.replace(/^data:image\/svg\+xml;charset=utf-8,/, ''))
    expect(svg).toContain('width="160"')
    // The modules drawn are those of level H (a lower level draws another pattern).
    const high = QRCode.create(COINBASE_WALLET.download, { errorCorrectionLevel: 'H' })
    const low = QRCode.create(COINBASE_WALLET.download, { errorCorrectionLevel: 'L' })
    const size = (svg.match(/viewBox="0 0 (\d+) /)?.[1] ?? '0') as string
    expect(Number(size)).toBe(high.modules.size + 2)
    expect(high.modules.size).not.toBe(low.modules.size)
  })
})

describe('LOGIN_FAILED_SCREEN', () => {
  test('behavior: the texts; "Try again" goes to LANDING', async () => {
    await show('LOGIN_FAILED_SCREEN')
    expect(heading()).toBe('Could not connect with wallet')
    expect(
      screen.getByText('Please check that Phantom multichain is enabled and try again.'),
    ).toBeTruthy()
    fireEvent.click(screen.getByTestId('login-failed-retry'))
    expect(store.getState().screen).toBe('LANDING')
    expect(store.getState().open).toBe(true)
  })

  test('behavior: "Cancel" closes the modal and the sign-in ends with login_exited', async () => {
    const { result } = await show('LOGIN_FAILED_SCREEN')
    expect(screen.getByTestId('login-failed-cancel').textContent).toBe('Cancel')
    fireEvent.click(screen.getByTestId('login-failed-cancel'))
    expect(store.getState().open).toBe(false)
    await expect(result).rejects.toMatchObject({ code: 'login_exited' })
  })
})

test('behavior: back from the wallet screens goes to the wallets of the flow', () => {
  expect(backTarget('AWAITING_CONNECTION')).toBe('LANDING')
  expect(backTarget('WALLET_EDUCATION')).toBe('LANDING')
  act(() => store.setState({ flow: { kind: 'link', account: 'wallet' } }))
  expect(backTarget('AWAITING_CONNECTION')).toBe('LINK_WALLET_SCREEN')
  expect(backTarget('LOGIN_FAILED_SCREEN')).toBeNull()
})
