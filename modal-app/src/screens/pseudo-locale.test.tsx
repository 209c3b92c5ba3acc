/**
 * Every screen in a pseudo-locale: each message of the table, and each error text the modal
 * shows, is wrapped in ⟦…⟧. Whatever a screen shows or names (text, aria-label, alt, title,
 * placeholder) that is not inside such a wrapping, and is not the app's or the visitor's own
 * data or a product's name, was written into the code in English and stays English in every
 * language: the test fails on it.
 */
import { ERRORS, type Hex } from '@latch/shared'
import { en } from '@latch/shared/i18n'
import { TABLES } from '@latch/shared/i18n/all'
import { enScreens } from '@latch/shared/i18n/screens'
import { act, cleanup, screen, waitFor } from '@testing-library/react'
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest'
import { setTable } from '../i18n/i18n.ts'
import { freshWalletState, type ModalState, store } from '../store.ts'
import { type ApiDouble, startApiDouble } from '../test/api-double.ts'
import { jwt, user } from '../test/fixtures.ts'
import { renderModal } from '../test/harness.tsx'
import { walletAccount, walletFrameDouble } from '../test/wallet-frame-double.ts'
import { provideWalletFrame } from '../wallet/frame.ts'
import { SCREEN_IDS, type ScreenId } from './ids.ts'
import { preloadScreens } from './lazy.tsx'

let api: ApiDouble
beforeAll(async () => {
  api = await startApiDouble()
})
afterAll(() => api.close())
afterEach(() => {
  cleanup()
  provideWalletFrame(null)
  setTable({ ...enScreens, ...en }, 'en')
})

const wrap = (text: string) => `⟦${text}⟧`
const pseudo = (table: Record<string, string>) =>
  Object.fromEntries(Object.entries(table).map(([k, v]) => [k, wrap(v)]))

/** The English table, every text wrapped: messages and the shown errors' texts. */
function pseudoTable(): Record<string, string> {
  return { ...pseudo({ ...en, ...enScreens, ...TABLES.en.m }), ...pseudo(TABLES.en.e) }
}

const ADDRESS = `0x${'12'.repeat(20)}` as Hex
const APP = 'Acme'
const EMAIL = 'ada@example.com'

/**
 * What a screen may show that is not ours to translate: the app's and the visitor's data, the
 * names of products and networks, units and numbers.
 */
const NOT_OURS = [
  APP,
  EMAIL,
  ADDRESS,
  'Latch',
  'WalletConnect',
  'MetaMask',
  'Coinbase Wallet',
  'Phantom',
  'Ethereum',
  'ETH',
  'USD',
  'Google',
  'Apple',
  'Discord',
  'GitHub',
  'Twitter',
  // The message a host asks to sign: the host's text, shown as it is.
  'Hello from Acme',
  // SPEC's example-address placeholder: an address's shape, not a sentence.
  'your@email.com',
].sort((a, b) => b.length - a.length)

/** What is left of `text` once our wrapped texts and what is not ours are taken out. */
function stray(text: string): string {
  let rest = text.replace(/⟦[^⟦⟧]*⟧/g, ' ')
  for (const allowed of NOT_OURS) rest = rest.split(allowed).join(' ')
  // Digits, punctuation, symbols and shortened addresses (0x1212…1212) carry no language.
  rest = rest.replace(/0x[0-9a-fA-F]+…?[0-9a-fA-F]*/g, ' ')
  return /^[\s\p{P}\p{S}\p{N}]*$/u.test(rest) ? '' : rest.replace(/\s+/g, ' ').trim()
}

/** Each visible text and accessible name under `root` that is not drawn from the table. */
function english(root: HTMLElement): string[] {
  const found: string[] = []
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT)
  for (let el = walker.currentNode as Element | null; el; el = walker.nextNode() as Element) {
    if (el.closest('[aria-hidden="true"], script, style')) continue
    // An element's own text, with its children's wrapped texts taken out by stray().
    const own = [...el.childNodes]
      .filter((n) => n.nodeType === Node.TEXT_NODE)
      .map((n) => n.textContent ?? '')
      .join(' ')
    // Text split around a value ('Please check {destination} for…') is checked as a whole.
    const whole = el.textContent ?? ''
    if (own.trim() && stray(whole) && stray(own)) found.push(`text "${own.trim()}"`)
    for (const name of ['aria-label', 'alt', 'title', 'placeholder', 'aria-description']) {
      const value = el.getAttribute(name)
      if (value && stray(value)) found.push(`${name} "${value}" on <${el.tagName.toLowerCase()}>`)
    }
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      if (el.type !== 'hidden' && el.value && stray(el.value)) found.push(`value "${el.value}"`)
    }
  }
  return found
}

const signedInUser = () => {
  const base = user(EMAIL)
  const wallet = walletAccount(ADDRESS, 'user-passcode')
  return { ...base, linkedAccounts: [...base.linkedAccounts, wallet], wallet }
}

/** The state each screen renders with (the flow's step as its action would leave it). */
function stateFor(id: ScreenId): Partial<ModalState> {
  const connector = { id: 'io.metamask', name: 'MetaMask', icon: '' }
  switch (id) {
    case 'AWAITING_PASSWORDLESS_CODE':
      return {
        passwordless: { channel: 'email', destination: EMAIL, status: 'idle', error: null },
      }
    case 'AWAITING_OAUTH_SCREEN':
      return { oauth: { provider: 'google', status: 'verifying', error: null, retryable: true } }
    case 'AWAITING_CONNECTION':
    case 'AWAITING_CONNECT_ONLY_CONNECTION':
      return {
        externalWallet: {
          connector,
          status: 'connecting',
          step: 'waiting',
          address: null,
          error: null,
          retries: 0,
        },
      }
    case 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN':
      return {
        flow: { kind: 'sign' },
        signRequest: {
          payload: { kind: 'message', message: 'Hello from Acme' },
          options: {},
          status: 'idle',
          error: null,
        },
      }
    case 'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN':
      return {
        flow: { kind: 'send-transaction' },
        transaction: {
          request: { to: ADDRESS, value: '0x1', chainId: 1 },
          options: {},
          status: 'ready',
          prepared: {
            to: ADDRESS,
            from: ADDRESS,
            value: '0x1',
            gasLimit: '0x5208',
            nonce: 0,
            type: 2,
            chainId: 1,
            maxFeePerGas: '0x1',
            maxPriorityFeePerGas: '0x1',
          },
          balance: 10n ** 18n,
          usdPrice: null,
          prepareError: null,
          submitError: null,
          receipt: null,
        },
      }
    case 'SESSION_FORK_SCREEN':
      return { flow: { kind: 'fork-session' }, sessionFork: { page: null, error: null } }
    case 'EMBEDDED_WALLET_KEY_EXPORT_SCREEN':
      return { flow: { kind: 'export-wallet' } }
    default:
      return {}
  }
}

/** The screens again, each in the failure its action shows (the texts the catalogue holds). */
function failedStates(): [ScreenId, Partial<ModalState>][] {
  const connector = { id: 'io.metamask', name: 'MetaMask', icon: '' }
  const sign = stateFor('EMBEDDED_WALLET_SIGN_REQUEST_SCREEN')
  const send = stateFor('EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN')
  return [
    [
      'LINK_EMAIL_SCREEN',
      { flow: { kind: 'link', account: 'email' }, submitError: ERRORS.email_submit_failed.message },
    ],
    [
      'AWAITING_PASSWORDLESS_CODE',
      {
        passwordless: {
          channel: 'email',
          destination: EMAIL,
          status: 'error',
          error: ERRORS.invalid_verification_code.message,
          resendWait: { seconds: 42, at: Date.now() },
        },
      },
    ],
    [
      'EMBEDDED_WALLET_CONNECTING_SCREEN',
      { wallet: { ...freshWalletState(), status: 'error', error: ERRORS.recovery_failed.message } },
    ],
    [
      'EMBEDDED_WALLET_RECOVERY_SCREEN',
      {
        flow: { kind: 'recover-wallet' },
        wallet: {
          ...freshWalletState(),
          status: 'error',
          error: ERRORS.wallet_sign_in_required.message,
        },
      },
    ],
    [
      'EMBEDDED_WALLET_SCREEN',
      { wallet: { ...freshWalletState(), status: 'error', error: ERRORS.create_failed.message } },
    ],
    [
      'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN',
      {
        ...sign,
        signRequest: sign.signRequest && {
          ...sign.signRequest,
          status: 'error',
          error: ERRORS.sign_failed.message,
        },
      },
    ],
    [
      'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN',
      {
        ...send,
        transaction: send.transaction && {
          ...send.transaction,
          submitError: ERRORS.transaction_submit_failed.message,
        },
      },
    ],
    [
      'AWAITING_CONNECTION',
      {
        externalWallet: {
          connector,
          status: 'disconnected',
          step: 'failed',
          address: null,
          error: {
            message: ERRORS.signature_rejected.message,
            details: ERRORS.signature_rejected.details ?? null,
            retryable: true,
          },
          retries: 1,
        },
      },
    ],
    [
      'SESSION_FORK_SCREEN',
      {
        flow: { kind: 'fork-session' },
        sessionFork: { page: null, error: ERRORS.fork_token_expired.message },
      },
    ],
  ]
}

/**
 * Renders `id` with `state` in the pseudo-locale; answers what it found in English (and, with
 * `failed`, a screen that shows no failure at all, which would check nothing).
 */
async function check(id: ScreenId, state: Partial<ModalState>, failed = false): Promise<string[]> {
  const double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'user-passcode') })
  provideWalletFrame(double.frame)
  setTable(pseudoTable(), 'de')
  const harness = renderModal(api, {
    name: APP,
    logoUrl: 'https://acme.test/logo.png',
    smsAuth: true,
    googleOAuth: true,
    passkeyAuth: true,
    termsAndConditionsUrl: 'https://acme.test/terms',
    privacyPolicyUrl: 'https://acme.test/privacy',
    embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: true },
  })
  act(() => {
    harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, signedInUser())
  })
  act(() => {
    store.setState({
      open: true,
      flow: { kind: 'login' },
      wallet: freshWalletState(),
      ...state,
      screen: id,
    })
  })
  await waitFor(() => expect(screen.queryByTestId('screen-loading')).toBeNull(), {
    timeout: 5000,
  })
  const modal = screen.getByTestId('latch-modal')
  const found = modal.querySelector('h1, h2, button, p') ? english(modal) : ['rendered nothing']
  const shown = [...modal.querySelectorAll('[role="alert"], .latch-error')].some((el) =>
    el.textContent?.includes('⟦'),
  )
  if (failed && !shown) found.push('shows no failure')
  cleanup()
  return found.map((f) => `${id}: ${f}`)
}

test('behavior: every screen in its failure shows only texts of the message table (pseudo-locale)', async () => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
  vi.spyOn(console, 'warn').mockImplementation(() => {})
  await preloadScreens()
  const problems: string[] = []
  for (const [id, state] of failedStates()) problems.push(...(await check(id, state, true)))
  expect(problems).toEqual([])
}, 120_000)

test('behavior: every screen shows and names only texts of the message table (pseudo-locale)', async () => {
  vi.spyOn(console, 'error').mockImplementation(() => {})
  vi.spyOn(console, 'warn').mockImplementation(() => {})
  // Every lazy part loaded first (the landing's wallet list too), so each renders whole.
  await preloadScreens()
  const problems: string[] = []
  const empty: string[] = []
  for (const id of SCREEN_IDS) {
    const double = walletFrameDouble({ wallet: walletAccount(ADDRESS, 'user-passcode') })
    provideWalletFrame(double.frame)
    setTable(pseudoTable(), 'de')
    const harness = renderModal(api, {
      name: APP,
      logoUrl: 'https://acme.test/logo.png',
      smsAuth: true,
      googleOAuth: true,
      passkeyAuth: true,
      termsAndConditionsUrl: 'https://acme.test/terms',
      privacyPolicyUrl: 'https://acme.test/privacy',
      embeddedWalletConfig: { createOnLogin: 'off', requireUserPasswordOnCreate: true },
    })
    act(() => {
      harness.session.start({ token: jwt(Math.floor(Date.now() / 1000) + 3600) }, signedInUser())
    })
    act(() => {
      store.setState({
        open: true,
        flow: { kind: 'login' },
        wallet: freshWalletState(),
        ...stateFor(id),
        screen: id,
      })
    })
    // Lazy screens load their chunk first.
    await waitFor(() => expect(screen.queryByTestId('screen-loading')).toBeNull(), {
      timeout: 5000,
    })
    const modal = screen.getByTestId('latch-modal')
    if (!modal.querySelector('h1, h2, button, p')) empty.push(id)
    for (const found of english(modal)) problems.push(`${id}: ${found}`)
    cleanup()
  }
  expect(problems).toEqual([])
  // A screen that rendered nothing was not checked: none may hide that way.
  expect(empty).toEqual([])
}, 120_000)
