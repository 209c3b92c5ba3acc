/**
 * Phantom on a phone. On a desktop, Phantom's EVM provider is a browser wallet like any other
 * (the host page's bridge finds it through EIP-6963 or window.phantom.ethereum). A phone's
 * browser has no extension: there the list offers Phantom as a deep link that opens the host
 * page in Phantom's own browser, where its provider is injected and the visitor signs in as
 * on a desktop (PHANTOM_INTERSTITIAL_SCREEN first).
 */
import {
  type InjectedWalletInfo,
  LatchError,
  type LoginResult,
  MOBILE_BREAKPOINT_PX,
  OAUTH_RETURN_PARAM_NAMES,
} from '@latch/shared'
import { startFlow } from '../flow/flow.ts'
import { runtime } from '../runtime.ts'
import { store } from '../store.ts'
import { walletClientType } from './injected.ts'
import type { Connector } from './types.ts'
import { isMobile } from './wallets.ts'

export const PHANTOM_DEEP_LINK_ID = 'latch:phantom-mobile'
/** The list entry on a desktop without Phantom's extension: its install guide. */
export const PHANTOM_INSTALL_ID = 'latch:phantom-install'

/**
 * A phone: its user agent says so, or its screen is narrower than the modal's mobile
 * breakpoint. The screen, not the window: this frame is 360px wide on any device.
 */
export function isMobileDevice(
  userAgent: string = typeof navigator === 'undefined' ? '' : navigator.userAgent,
  screenWidth: number = typeof screen === 'undefined' ? Number.POSITIVE_INFINITY : screen.width,
): boolean {
  // 0: no screen to measure (not a browser); the user agent decides alone.
  return isMobile(userAgent) || (screenWidth > 0 && screenWidth < MOBILE_BREAKPOINT_PX)
}

/**
 * Phantom's universal link that opens `pageUrl` in its in-app browser; `ref` is the page's
 * origin (Phantom shows it). The page carries the connector and wallet client return
 * parameters (a Phantom client link): opened in any other browser, the modal shows
 * LOGIN_FAILED_SCREEN (checkPhantomClientLink). Only http(s) pages: anything else is refused.
 */
export function phantomBrowseLink(pageUrl: string): string {
  const url = new URL(pageUrl)
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw LatchError.of('unable_to_build_connector')
  }
  url.hash = ''
  url.searchParams.set(OAUTH_RETURN_PARAM_NAMES.connector, 'injected')
  url.searchParams.set(OAUTH_RETURN_PARAM_NAMES.walletClient, 'phantom')
  return `https://phantom.app/ul/browse/${encodeURIComponent(url.href)}?ref=${encodeURIComponent(url.origin)}`
}

const ICON =
  'data:image/svg+xml,%3Csvg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"%3E%3Crect width="32" height="32" rx="8" fill="%23AB9FF2"/%3E%3Cpath d="M8 19c0-6 4-10 9-10s7 4 7 7-3 4-4 4-1-2-2-2-2 3-5 3-5-1-5-2z" fill="%23fff"/%3E%3C/svg%3E'

/**
 * The list entry on a phone (PHANTOM_DEEP_LINK_ID), or on a desktop without the extension
 * (PHANTOM_INSTALL_ID); choosing it shows the interstitial or the install guide (choose.ts),
 * never connect().
 */
export function phantomDeepLinkEntry(id: string = PHANTOM_DEEP_LINK_ID): Connector {
  const refuse = () => Promise.reject(LatchError.of('unable_to_build_connector'))
  return {
    id,
    name: 'Phantom',
    icon: ICON,
    type: 'phantom',
    walletClientType: 'phantom',
    status: 'disconnected',
    connect: refuse,
    request: refuse,
    on: () => () => {},
  }
}

/**
 * The page was opened by a Phantom client link (wallet client 'phantom'). In Phantom's own
 * browser its provider is in the page and the visitor signs in as on a desktop. In any other
 * browser (the link opened outside Phantom, or Phantom without its EVM provider) no sign-in
 * with Phantom can happen here: the modal opens on LOGIN_FAILED_SCREEN ('Try again' goes to
 * the landing). Nothing happens for a visitor already signed in or a modal already open.
 */
export async function checkPhantomClientLink(): Promise<void> {
  let wallets: InjectedWalletInfo[] = []
  try {
    // The bridge waits up to INJECTED_WALLET_WAIT_MS for injected wallets itself.
    wallets = (await runtime().host?.wallets()) ?? []
  } catch {
    // A host that cannot list wallets has no Phantom to offer either.
  }
  if (Array.isArray(wallets) && wallets.some((w) => walletClientType(w) === 'phantom')) return
  const { user, open } = store.getState()
  if (user || open) return
  // The host's login() joins this flow; closing it rejects the (unwatched) promise.
  startFlow<LoginResult>({ kind: 'login' }, 'LOGIN_FAILED_SCREEN').promise.catch(() => {})
}
