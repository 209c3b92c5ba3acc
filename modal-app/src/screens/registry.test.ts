import { expect, test } from 'vitest'
import { mergeConfig } from '../startup/config.ts'
import { initialState, type ModalState, resetStore, store } from '../store.ts'
import { serverConfig } from '../test/fixtures.ts'
import { SCREEN_IDS } from './ids.ts'
import { backTarget, SCREENS, screenSize } from './registry.ts'

const state = (patch: Partial<ModalState>): ModalState => ({ ...initialState, ...patch })

test('behavior: the registry lists exactly the 25 screens of docs/behaviour.md, the session fork screen and the passkey screens', () => {
  // The screen list of docs/behaviour.md, as written there.
  const spec = `LANDING; AWAITING_PASSWORDLESS_CODE; WALLET_EDUCATION; AWAITING_CONNECTION;
    AWAITING_CONNECT_ONLY_CONNECTION; COINBASE_INTERSTITIAL_SCREEN; PHANTOM_INTERSTITIAL_SCREEN;
    LOGIN_FAILED_SCREEN; AWAITING_OAUTH_SCREEN; ALLOWLIST_REJECTION_SCREEN; INSTALL_METAMASK_SCREEN;
    INSTALL_PHANTOM_SCREEN; INSTALL_COINBASE_WALLET_SCREEN; LINK_EMAIL_SCREEN; LINK_PHONE_SCREEN;
    LINK_WALLET_SCREEN; CONNECT_ONLY_LANDING_SCREEN; CONNECT_ONLY_AUTHENTICATED_SCREEN;
    EMBEDDED_WALLET_SCREEN; EMBEDDED_WALLET_CREATED_SCREEN; EMBEDDED_WALLET_CONNECTING_SCREEN;
    EMBEDDED_WALLET_RECOVERY_SCREEN; EMBEDDED_WALLET_KEY_EXPORT_SCREEN;
    EMBEDDED_WALLET_SIGN_REQUEST_SCREEN; EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN`
  // The additions (docs/behaviour.md, "Deviations"): the session fork, passkeys.
  expect([...SCREEN_IDS]).toEqual([
    ...spec.split(';').map((s) => s.trim()),
    'SESSION_FORK_SCREEN',
    'PASSKEY_SCREEN',
    'PASSKEY_RECOVERY_SCREEN',
  ])
  expect(Object.keys(SCREENS).sort()).toEqual([...SCREEN_IDS].sort())
  expect(SCREEN_IDS).toHaveLength(28)
})

test('param: sizes per docs/behaviour.md, "Every screen"', () => {
  const one = mergeConfig(serverConfig({ walletAuth: false }), {})
  const two = mergeConfig(serverConfig(), {})
  expect(screenSize(state({ screen: 'LANDING', app: one }))).toBe('compact')
  expect(screenSize(state({ screen: 'LANDING', app: two }))).toBe('full')
  expect(screenSize(state({ screen: 'WALLET_EDUCATION' }))).toBe('full')
  for (const s of [
    'AWAITING_CONNECTION',
    'AWAITING_OAUTH_SCREEN',
    'ALLOWLIST_REJECTION_SCREEN',
  ] as const) {
    expect(screenSize(state({ screen: s }))).toBe('compact')
  }
  for (const s of ['LINK_EMAIL_SCREEN', 'LINK_PHONE_SCREEN', 'LINK_WALLET_SCREEN'] as const) {
    expect(screenSize(state({ screen: s }))).toBe('medium')
  }
})

test('behavior: back targets', () => {
  expect(backTarget('LANDING')).toBeNull()
  expect(backTarget('ALLOWLIST_REJECTION_SCREEN')).toBe('LANDING')
  expect(backTarget('AWAITING_PASSWORDLESS_CODE')).toBe('LANDING')
  // The guides WALLET_EDUCATION offers go back there; Phantom's, reached from the wallet list,
  // goes back to the list of the flow on screen.
  expect(backTarget('INSTALL_METAMASK_SCREEN')).toBe('WALLET_EDUCATION')
  expect(backTarget('INSTALL_PHANTOM_SCREEN')).toBe('LANDING')
  store.setState({ flow: { kind: 'link', account: 'wallet' } })
  try {
    expect(backTarget('INSTALL_PHANTOM_SCREEN')).toBe('LINK_WALLET_SCREEN')
  } finally {
    resetStore()
  }
})
