/**
 * Every screen of the modal (ids.ts; docs/behaviour.md has a section for each) with its
 * component, size and back target.
 */
import type { ComponentType } from 'react'
import { type ModalState, store } from '../store.ts'
import type { ScreenId } from './ids.ts'
import { Landing, landingSections } from './Landing.tsx'
import { lazyScreen } from './lazy.tsx'
import { walletListScreen } from './wallet-list-screen.ts'

/** compact: as tall as the content; full: 620px; medium: at least 480px. */
export type ScreenSize = 'compact' | 'full' | 'medium'

export interface ScreenEntry {
  component: ComponentType
  size: ScreenSize | ((state: ModalState) => ScreenSize)
  /** Where the back arrow goes; null shows none. */
  back: ScreenId | null | (() => ScreenId | null)
}

// Reached only after an API round trip the visitor started, or opened by a host's link() or an
// OAuth return: loaded apart from the landing (lazy.tsx); a screen shown before its chunk
// arrived shows the loading view for that moment.
const AwaitingOAuth = lazyScreen(() => import('./AwaitingOAuth.tsx').then((m) => m.AwaitingOAuth))
const LinkEmail = lazyScreen(() => import('./LinkEmail.tsx').then((m) => m.LinkEmail))
const LinkPhone = lazyScreen(() => import('./LinkPhone.tsx').then((m) => m.LinkPhone))
const AwaitingPasswordlessCode = lazyScreen(() =>
  import('./AwaitingPasswordlessCode.tsx').then((m) => m.AwaitingPasswordlessCode),
)
const AllowlistRejection = lazyScreen(() =>
  import('./AllowlistRejection.tsx').then((m) => m.AllowlistRejection),
)

// The in-app wallet's screens: reached only after a sign-in or a host call (wallet/).
const EmbeddedWallet = lazyScreen(() =>
  import('./EmbeddedWallet.tsx').then((m) => m.EmbeddedWallet),
)
const EmbeddedWalletCreated = lazyScreen(() =>
  import('./EmbeddedWalletCreated.tsx').then((m) => m.EmbeddedWalletCreated),
)
const EmbeddedWalletConnecting = lazyScreen(() =>
  import('./EmbeddedWalletConnecting.tsx').then((m) => m.EmbeddedWalletConnecting),
)
const EmbeddedWalletKeyExport = lazyScreen(() =>
  import('./EmbeddedWalletKeyExport.tsx').then((m) => m.EmbeddedWalletKeyExport),
)
const EmbeddedWalletRecovery = lazyScreen(() =>
  import('./EmbeddedWalletRecovery.tsx').then((m) => m.EmbeddedWalletRecovery),
)
const SignRequest = lazyScreen(() => import('./SignRequest.tsx').then((m) => m.SignRequest))
const SendTransaction = lazyScreen(() =>
  import('./SendTransaction.tsx').then((m) => m.SendTransaction),
)

// The external wallets' screens: reached from the landing's wallet section or
// link('wallet'); they carry ethers and qrcode, which the landing does without.
const AwaitingConnection = lazyScreen(() =>
  import('./AwaitingConnection.tsx').then((m) => m.AwaitingConnection),
)
const WalletEducation = lazyScreen(() =>
  import('./WalletEducation.tsx').then((m) => m.WalletEducation),
)
const InstallMetamask = lazyScreen(() =>
  import('./InstallWallet.tsx').then((m) => m.InstallMetamask),
)
const InstallPhantom = lazyScreen(() => import('./InstallWallet.tsx').then((m) => m.InstallPhantom))
const InstallCoinbaseWallet = lazyScreen(() =>
  import('./InstallWallet.tsx').then((m) => m.InstallCoinbaseWallet),
)
const LoginFailed = lazyScreen(() => import('./LoginFailed.tsx').then((m) => m.LoginFailed))
const LinkWallet = lazyScreen(() => import('./LinkWallet.tsx').then((m) => m.LinkWallet))

// Connect-only and the interstitials. The Coinbase Wallet SDK is not in these
// chunks: the interstitial fetches it (connectors/coinbase.ts).
const ConnectOnlyLanding = lazyScreen(() =>
  import('./ConnectOnly.tsx').then((m) => m.ConnectOnlyLanding),
)
const ConnectOnlyAuthenticated = lazyScreen(() =>
  import('./ConnectOnly.tsx').then((m) => m.ConnectOnlyAuthenticated),
)
const AwaitingConnectOnlyConnection = lazyScreen(() =>
  import('./ConnectOnly.tsx').then((m) => m.AwaitingConnectOnlyConnection),
)
const CoinbaseInterstitial = lazyScreen(() =>
  import('./WalletInterstitials.tsx').then((m) => m.CoinbaseInterstitial),
)
const PhantomInterstitial = lazyScreen(() =>
  import('./WalletInterstitials.tsx').then((m) => m.PhantomInterstitial),
)

// Passkeys: the landing's button and link('passkey'); the ceremonies come with it (passkey.ts).
const Passkeys = lazyScreen(() => import('./Passkeys.tsx').then((m) => m.Passkeys))
const PasskeyRecovery = lazyScreen(() =>
  import('./PasskeyRecovery.tsx').then((m) => m.PasskeyRecovery),
)

// The session fork's wallet apps: the list of wallet apps comes with it.
const SessionFork = lazyScreen(() => import('./SessionFork.tsx').then((m) => m.SessionFork))

/** The code screen's back target depends on the flow that led to it. */
function codeScreenBack(): ScreenId {
  const flow = store.getState().flow
  if (flow?.kind === 'link')
    return flow.account === 'email' ? 'LINK_EMAIL_SCREEN' : 'LINK_PHONE_SCREEN'
  return 'LANDING'
}

/** Back from a wallet screen: the wallets of the flow on screen. */
const walletsScreen = walletListScreen

export const SCREENS: Record<ScreenId, ScreenEntry> = {
  LANDING: {
    component: Landing,
    size: (s) => (s.app && landingSections(s.app).length === 1 ? 'compact' : 'full'),
    back: null,
  },
  AWAITING_PASSWORDLESS_CODE: {
    component: AwaitingPasswordlessCode,
    size: (s) => (s.flow?.kind === 'link' ? 'medium' : 'full'),
    back: codeScreenBack,
  },
  WALLET_EDUCATION: { component: WalletEducation, size: 'full', back: walletsScreen },
  AWAITING_CONNECTION: { component: AwaitingConnection, size: 'compact', back: walletsScreen },
  AWAITING_CONNECT_ONLY_CONNECTION: {
    component: AwaitingConnectOnlyConnection,
    size: 'compact',
    back: walletsScreen,
  },
  COINBASE_INTERSTITIAL_SCREEN: {
    component: CoinbaseInterstitial,
    size: 'compact',
    back: walletsScreen,
  },
  PHANTOM_INTERSTITIAL_SCREEN: {
    component: PhantomInterstitial,
    size: 'compact',
    back: walletsScreen,
  },
  LOGIN_FAILED_SCREEN: { component: LoginFailed, size: 'full', back: null },
  AWAITING_OAUTH_SCREEN: { component: AwaitingOAuth, size: 'compact', back: null },
  ALLOWLIST_REJECTION_SCREEN: { component: AllowlistRejection, size: 'compact', back: 'LANDING' },
  INSTALL_METAMASK_SCREEN: { component: InstallMetamask, size: 'full', back: 'WALLET_EDUCATION' },
  // Reached from a wallet list only (WALLET_EDUCATION does not offer Phantom).
  INSTALL_PHANTOM_SCREEN: { component: InstallPhantom, size: 'full', back: walletsScreen },
  INSTALL_COINBASE_WALLET_SCREEN: {
    component: InstallCoinbaseWallet,
    size: 'full',
    back: 'WALLET_EDUCATION',
  },
  LINK_EMAIL_SCREEN: { component: LinkEmail, size: 'medium', back: null },
  LINK_PHONE_SCREEN: { component: LinkPhone, size: 'medium', back: null },
  LINK_WALLET_SCREEN: { component: LinkWallet, size: 'medium', back: null },
  CONNECT_ONLY_LANDING_SCREEN: { component: ConnectOnlyLanding, size: 'full', back: null },
  CONNECT_ONLY_AUTHENTICATED_SCREEN: {
    component: ConnectOnlyAuthenticated,
    size: 'full',
    back: null,
  },
  EMBEDDED_WALLET_SCREEN: { component: EmbeddedWallet, size: 'full', back: null },
  EMBEDDED_WALLET_CREATED_SCREEN: { component: EmbeddedWalletCreated, size: 'full', back: null },
  EMBEDDED_WALLET_CONNECTING_SCREEN: {
    component: EmbeddedWalletConnecting,
    size: 'full',
    back: null,
  },
  EMBEDDED_WALLET_RECOVERY_SCREEN: { component: EmbeddedWalletRecovery, size: 'full', back: null },
  EMBEDDED_WALLET_KEY_EXPORT_SCREEN: {
    component: EmbeddedWalletKeyExport,
    size: 'full',
    back: null,
  },
  EMBEDDED_WALLET_SIGN_REQUEST_SCREEN: { component: SignRequest, size: 'full', back: null },
  EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN: {
    component: SendTransaction,
    size: 'full',
    back: null,
  },
  SESSION_FORK_SCREEN: { component: SessionFork, size: 'full', back: null },
  // Its sign-in view has its own way back to the landing (a link flow has none).
  PASSKEY_SCREEN: { component: Passkeys, size: 'full', back: null },
  PASSKEY_RECOVERY_SCREEN: { component: PasskeyRecovery, size: 'compact', back: null },
}

export function screenSize(state: ModalState): ScreenSize {
  const size = SCREENS[state.screen].size
  return typeof size === 'function' ? size(state) : size
}

export function backTarget(screen: ScreenId): ScreenId | null {
  const back = SCREENS[screen].back
  return typeof back === 'function' ? back() : back
}
