import { loginMethodFlags } from '@latch/shared'
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { login, navigate } from '../flow/flow.ts'
import { runtime } from '../runtime.ts'
import { setVerifiedHost } from '../startup/origin.ts'
import { store } from '../store.ts'
import { type ApiDouble, apiError, startApiDouble } from '../test/api-double.ts'
import { renderModal } from '../test/harness.tsx'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  api.requests.length = 0
})

function openLogin(): void {
  act(() => {
    login().catch(() => {})
  })
}

describe('sections', () => {
  test('behavior: wallet first by default, the first section open, one open at a time', async () => {
    renderModal(api)
    openLogin()
    const toggles = screen.getAllByRole('button', { expanded: true })
    expect(toggles.map((t) => t.textContent)).toEqual(['Connect Wallet'])
    const headings = screen.getAllByRole('heading', { level: 2 }).map((h) => h.textContent)
    expect(headings).toEqual(['Connect Wallet', 'Email'])
    expect(screen.queryByTestId('email-input')).toBeNull()
    await userEvent.click(screen.getByTestId('section-email-toggle'))
    expect(screen.getByTestId('email-input')).toBeTruthy()
    expect(screen.getByTestId('section-wallet-toggle').getAttribute('aria-expanded')).toBe('false')
    expect(screen.queryByTestId('wallet-section-body')).toBeNull()
  })

  test('behavior: every button of the landing, in every section, has a test id: a click on the server-rendered landing is held by it until the JavaScript runs (ssr/before-hydration.ts)', async () => {
    // Every method; SMS is off where e-mail is on (one code section).
    renderModal(
      api,
      loginMethodFlags(() => true),
    )
    openLogin()
    const landing = screen.getByTestId('screen-LANDING')
    const unheld = new Set<string>()
    const collect = () => {
      for (const button of landing.querySelectorAll('button')) {
        if (!button.dataset.testid) unheld.add(button.textContent ?? '')
      }
    }
    collect()
    const toggles = [...landing.querySelectorAll<HTMLElement>('[data-testid$="-toggle"]')]
    expect(toggles.length).toBeGreaterThan(1)
    for (const toggle of toggles) {
      await userEvent.click(toggle)
      collect()
    }
    expect(screen.getByText('Use a passkey')).toBeTruthy()
    expect([...unheld]).toEqual([])
  })

  test('param: showWalletLoginFirst off puts the e-mail section first and open', () => {
    renderModal(api, { showWalletLoginFirst: false })
    openLogin()
    const headings = screen.getAllByRole('heading', { level: 2 }).map((h) => h.textContent)
    expect(headings).toEqual(['Email', 'Connect Wallet'])
    expect(screen.getByTestId('email-input')).toBeTruthy()
  })

  test('behavior: back on the landing from a wallet screen, the section the visitor opened is still open', async () => {
    renderModal(api, { showWalletLoginFirst: false })
    openLogin()
    await userEvent.click(screen.getByTestId('section-wallet-toggle'))
    // A wallet's screen, then back: the landing is mounted afresh.
    act(() => navigate('WALLET_EDUCATION'))
    await screen.findByTestId('screen-WALLET_EDUCATION')
    act(() => navigate('LANDING'))
    const open = screen.getAllByRole('button', { expanded: true }).map((b) => b.textContent)
    expect(open).toEqual(['Connect Wallet'])
    expect(screen.getByTestId('wallet-section-body')).toBeTruthy()
    expect(screen.queryByTestId('email-input')).toBeNull()
  })

  test('param: the host can turn showWalletLoginFirst off too', () => {
    renderModal(api, {}, { appearance: { showWalletLoginFirst: false } })
    openLogin()
    expect(screen.getByTestId('email-input')).toBeTruthy()
  })

  test('param: social providers rename the section "Email & Social" / "Phone & Social"', () => {
    renderModal(api, { googleOAuth: true, showWalletLoginFirst: false })
    openLogin()
    expect(screen.getByTestId('section-email-toggle').textContent).toBe('Email & Social')
    expect(screen.getByText('Or')).toBeTruthy()
    cleanup()
    renderModal(api, { emailAuth: false, smsAuth: true, googleOAuth: true, walletAuth: false })
    openLogin()
    expect(screen.getByRole('heading', { level: 2 }).textContent).toBe('Phone & Social')
  })

  test('behavior: a single section is always open, with no toggle, and the landing is compact', () => {
    renderModal(api, { walletAuth: false })
    openLogin()
    expect(screen.queryByTestId('section-email-toggle')).toBeNull()
    expect(screen.getByRole('heading', { level: 2 }).textContent).toBe('Email')
    expect(screen.getByTestId('email-input')).toBeTruthy()
    expect(screen.getByTestId('latch-modal').getAttribute('data-size')).toBe('compact')
  })

  test('behavior: two sections make a full-height landing', () => {
    renderModal(api)
    openLogin()
    expect(screen.getByTestId('latch-modal').getAttribute('data-size')).toBe('full')
  })
})

describe('inputs', () => {
  test('param: placeholders and helper texts', () => {
    renderModal(api, { showWalletLoginFirst: false })
    openLogin()
    const email = screen.getByTestId('email-input') as HTMLInputElement
    expect(email.placeholder).toMatch(/@/)
    expect(screen.getByTestId('email-helper').textContent).toBe('Get started without a wallet.')
    cleanup()
    renderModal(api, { walletAuth: false })
    openLogin()
    expect(screen.getByTestId('email-helper').textContent).toBe('Get started quickly with email')
    cleanup()
    renderModal(api, { walletAuth: false, emailAuth: false, smsAuth: true })
    openLogin()
    expect((screen.getByTestId('phone-input') as HTMLInputElement).placeholder).toBe('555 555 5555')
    expect(screen.getByTestId('phone-helper').textContent).toBe(
      'Get started quickly with your phone',
    )
    expect(screen.getByLabelText('Phone number')).toBe(screen.getByTestId('phone-input'))
  })

  test('behavior: Submit is disabled until the address is valid', async () => {
    renderModal(api, { walletAuth: false })
    openLogin()
    const submit = screen.getByTestId('email-submit') as HTMLButtonElement
    expect(submit.disabled).toBe(true)
    await userEvent.type(screen.getByTestId('email-input'), 'ada@example')
    expect(submit.disabled).toBe(true)
    await userEvent.type(screen.getByTestId('email-input'), '.com')
    expect(submit.disabled).toBe(false)
    expect(screen.getByLabelText('Email address')).toBe(screen.getByTestId('email-input'))
  })

  test('behavior: Enter submits; the code goes out and the code screen shows', async () => {
    // Held until the test saw the button disabled: a fixed delay raced a loaded machine.
    let answer = () => {}
    const answered = new Promise<void>((resolve) => {
      answer = resolve
    })
    api.on('POST /passwordless/init', async () => {
      await answered
      return { body: { success: true } }
    })
    renderModal(api, { walletAuth: false })
    openLogin()
    await userEvent.type(screen.getByTestId('email-input'), ' Ada@Example.com {Enter}')
    await waitFor(() =>
      expect((screen.getByTestId('email-submit') as HTMLButtonElement).disabled).toBe(true),
    )
    answer()
    await screen.findByTestId('screen-AWAITING_PASSWORDLESS_CODE')
    expect(api.calls('POST /passwordless/init').map((r) => r.body)).toEqual([
      // With the visitor's language, for the code e-mail's.
      { email: 'ada@example.com', locale: 'en' },
    ])
    expect(screen.getByTestId('code-destination').textContent).toBe('ada@example.com')
  })

  test('behavior: a US phone number is sent in E.164', async () => {
    api.on('POST /passwordless_sms/init', { body: { success: true } })
    renderModal(api, { walletAuth: false, emailAuth: false, smsAuth: true })
    openLogin()
    await userEvent.type(screen.getByTestId('phone-input'), '(415) 555-0132')
    await userEvent.click(screen.getByTestId('phone-submit'))
    await screen.findByTestId('screen-AWAITING_PASSWORDLESS_CODE')
    expect(api.calls('POST /passwordless_sms/init')[0]?.body).toEqual({
      phoneNumber: '+14155550132',
      locale: 'en',
    })
  })
})

describe('the phone number’s country', () => {
  test('behavior: with one SMS country, its dialling code and no choice', async () => {
    renderModal(api, { walletAuth: false, emailAuth: false, smsAuth: true, smsCountries: ['US'] })
    openLogin()
    await waitFor(() => expect(screen.getByText('+1')).toBeTruthy())
    expect(screen.queryByTestId('phone-country')).toBeNull()
  })

  test('behavior: the app’s SMS countries in a labelled select, the first chosen; a British number is read as one and sent in E.164', async () => {
    api.on('POST /passwordless_sms/init', { body: { success: true } })
    renderModal(api, {
      walletAuth: false,
      emailAuth: false,
      smsAuth: true,
      smsCountries: ['US', 'GB', 'DE'],
    })
    openLogin()
    const select = (await screen.findByRole('combobox', { name: 'Country' })) as HTMLSelectElement
    await waitFor(() =>
      expect([...select.options].map((o) => [o.value, o.textContent])).toEqual([
        ['US', 'United States (+1)'],
        ['GB', 'United Kingdom (+44)'],
        ['DE', 'Germany (+49)'],
      ]),
    )
    expect(select.value).toBe('US')
    const input = screen.getByTestId('phone-input') as HTMLInputElement
    const submit = screen.getByTestId('phone-submit') as HTMLButtonElement
    // A British mobile number written nationally is no US number.
    await userEvent.type(input, '07400 123456')
    expect(submit.disabled).toBe(true)
    await userEvent.selectOptions(select, 'GB')
    expect(input.placeholder).toBe('')
    expect(submit.disabled).toBe(false)
    await userEvent.click(submit)
    await screen.findByTestId('screen-AWAITING_PASSWORDLESS_CODE')
    expect(api.calls('POST /passwordless_sms/init')[0]?.body).toEqual({
      phoneNumber: '+447400123456',
      locale: 'en',
    })
  })
})

describe('submit errors', () => {
  async function submitEmail(): Promise<void> {
    renderModal(api, { walletAuth: false })
    openLogin()
    await userEvent.type(screen.getByTestId('email-input'), 'ada@example.com')
    fireEvent.submit(screen.getByTestId('email-input').closest('form') as HTMLFormElement)
  }

  test('error: a 422 shows the server message', async () => {
    api.on('POST /passwordless/init', apiError(422, 'invalid_data', 'Too many codes requested'))
    await submitEmail()
    expect((await screen.findByTestId('submit-error')).textContent).toBe('Too many codes requested')
  })

  test('error: other failures read "Issue submitting email"', async () => {
    api.on('POST /passwordless/init', apiError(500, 'internal_error', 'Something went wrong'))
    await submitEmail()
    expect((await screen.findByTestId('submit-error')).textContent).toBe('Issue submitting email')
    expect(store.getState().screen).toBe('LANDING')
  })

  test('error: "Issue submitting phone number" for SMS', async () => {
    api.on('POST /passwordless_sms/init', apiError(400, 'invalid_data', 'Invalid request data'))
    renderModal(api, { walletAuth: false, emailAuth: false, smsAuth: true })
    openLogin()
    await userEvent.type(screen.getByTestId('phone-input'), '4155550132{Enter}')
    expect((await screen.findByTestId('submit-error')).textContent).toBe(
      'Issue submitting phone number',
    )
  })

  test('error: allowlist_rejected goes to the rejection screen with the defaults', async () => {
    api.on('POST /passwordless/init', apiError(403, 'allowlist_rejected', 'Not allowed'))
    await submitEmail()
    await screen.findByTestId('screen-ALLOWLIST_REJECTION_SCREEN')
    expect(screen.getByTestId('allowlist-title').textContent).toBe(
      "You don't have access to this app",
    )
    expect(screen.getByTestId('allowlist-detail').textContent).toBe('Have you been invited?')
    await userEvent.click(screen.getByTestId('allowlist-cta'))
    expect(store.getState().screen).toBe('LANDING')
  })
})

describe('logo and legal', () => {
  test('param: logo, terms and privacy links', () => {
    renderModal(
      api,
      {
        logoUrl: 'https://acme.test/logo.png',
        termsAndConditionsUrl: 'https://acme.test/terms',
      },
      { legal: { privacyPolicyUrl: 'https://acme.test/privacy' } },
    )
    openLogin()
    expect(screen.getByTestId('app-logo').getAttribute('src')).toBe('https://acme.test/logo.png')
    expect(screen.getByTestId('terms-link').getAttribute('href')).toBe('https://acme.test/terms')
    expect(screen.getByTestId('privacy-link').getAttribute('href')).toBe(
      'https://acme.test/privacy',
    )
  })

  test('param: no links and no logo when none are configured', () => {
    renderModal(api)
    openLogin()
    expect(screen.queryByTestId('app-logo')).toBeNull()
    expect(screen.queryByTestId('legal')).toBeNull()
  })
})

describe('in-app browsers', () => {
  const HOST = 'http://localhost:5173'
  const INSTAGRAM_IOS =
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 357.0.0.25.101 (iPhone16,2; iOS 18_1_1; en_US; en; scale=3.00; 1290x2796; 664937563; IABMV/1)'
  const INSTAGRAM_ANDROID =
    'Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.107 Mobile Safari/537.36 Instagram 355.0.0.36.107 Android (34/14; 480dpi; 1080x2340; samsung; SM-S918B; dm3q; qcom; en_US; 659227658)'
  const SAFARI =
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'
  const SOCIAL = {
    googleOAuth: true,
    appleOAuth: true,
    twitterOAuth: true,
    discordOAuth: true,
    githubOAuth: true,
    showWalletLoginFirst: false,
  }
  let written: string[] = []

  function inBrowser(userAgent: string, page = `${HOST}/shop?item=3&latch_oauth_state=s#top`) {
    vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue(userAgent)
    written = []
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: { writeText: async (text: string) => void written.push(text) },
    })
    setVerifiedHost(HOST, [HOST])
    renderModal(api, SOCIAL)
    const host = runtime().host
    // The recording host, answering pageUrl() with `page`.
    if (host) {
      runtime().host = new Proxy(host, {
        get: (target, name) => (name === 'pageUrl' ? async () => page : Reflect.get(target, name)),
      })
    }
    openLogin()
  }

  afterEach(() => {
    vi.restoreAllMocks()
    Reflect.deleteProperty(navigator, 'clipboard')
    setVerifiedHost(null)
  })

  test('behavior: Instagram on iOS: no Google, Apple or Twitter button; the step shows the page link to copy, the copy is announced', async () => {
    inBrowser(INSTAGRAM_IOS)
    expect(screen.queryByTestId('social-google')).toBeNull()
    expect(screen.queryByTestId('social-apple')).toBeNull()
    expect(screen.queryByTestId('social-twitter')).toBeNull()
    // E-mail and the providers that work in an in-app browser stay.
    expect(screen.getByTestId('email-input')).toBeTruthy()
    expect(screen.getByTestId('social-discord')).toBeTruthy()
    expect(screen.getByTestId('social-github')).toBeTruthy()
    // The step is a chunk of its own, loaded only here.
    const step = await screen.findByRole('region', { name: 'Open in your browser' })
    expect(step.textContent).toContain(
      'To sign in with Google or Apple, open this page in your browser.',
    )
    const link = screen.getByRole('textbox', { name: 'Link to this page' }) as HTMLInputElement
    // The page as the host SDK answers it, without latch_ return parameters.
    await waitFor(() => expect(link.value).toBe(`${HOST}/shop?item=3#top`))
    expect(link.readOnly).toBe(true)
    // No intent link on iOS.
    expect(screen.queryByTestId('open-in-browser-intent')).toBeNull()
    await userEvent.click(screen.getByRole('button', { name: 'Copy link' }))
    expect(written).toEqual([`${HOST}/shop?item=3#top`])
    expect(screen.getByRole('status').textContent).toBe('Link copied')
  })

  test('behavior: Instagram on Android adds an intent:// link that opens the page in the default browser', async () => {
    inBrowser(INSTAGRAM_ANDROID)
    expect(screen.queryByTestId('social-google')).toBeNull()
    const intent = await screen.findByRole('link', { name: 'Open in browser' })
    await waitFor(() =>
      expect(intent.getAttribute('href')).toBe(
        'intent://localhost:5173/shop?item=3#Intent;scheme=http;end',
      ),
    )
  })

  test('behavior: a page address of another origin than the verified host is not shown: the host origin is', async () => {
    inBrowser(INSTAGRAM_IOS, 'https://evil.test/phish')
    const link = (await screen.findByRole('textbox', {
      name: 'Link to this page',
    })) as HTMLInputElement
    await act(async () => {})
    expect(link.value).toBe(HOST)
  })

  test('behavior: a refused clipboard selects the link and says so', async () => {
    inBrowser(INSTAGRAM_IOS)
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: {
        writeText: async () => {
          throw new Error('denied')
        },
      },
    })
    const link = (await screen.findByRole('textbox', {
      name: 'Link to this page',
    })) as HTMLInputElement
    await waitFor(() => expect(link.value).toContain('/shop'))
    await userEvent.click(screen.getByRole('button', { name: 'Copy link' }))
    expect(screen.getByRole('status').textContent).toBe(
      'Could not copy: select the link and copy it',
    )
    expect(document.activeElement === link || link.selectionEnd === link.value.length).toBe(true)
  })

  test('param: only Google enabled names only Google; no refused provider enabled, no step', async () => {
    vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue(INSTAGRAM_IOS)
    renderModal(api, { googleOAuth: true, showWalletLoginFirst: false })
    openLogin()
    expect((await screen.findByTestId('open-in-browser')).textContent).toContain(
      'To sign in with Google, open this page in your browser.',
    )
    cleanup()
    renderModal(api, { discordOAuth: true, showWalletLoginFirst: false })
    openLogin()
    expect(screen.queryByTestId('open-in-browser')).toBeNull()
    expect(screen.getByTestId('social-discord')).toBeTruthy()
  })

  test('behavior: a browser of its own is unchanged: every button, no step', () => {
    inBrowser(SAFARI)
    for (const p of ['google', 'apple', 'twitter', 'discord', 'github']) {
      expect(screen.getByTestId(`social-${p}`)).toBeTruthy()
    }
    expect(screen.queryByTestId('open-in-browser')).toBeNull()
  })
})
