/**
 * Platform flags the landing reads (docs/behaviour.md, "LANDING"), from the check that answers as
 * the one table of in-app browsers does (`@latch/shared/in-app-check`, `in-app-browser`).
 *
 * Inside an in-app browser (Instagram, Facebook, LinkedIn, TikTok, X, Line, Telegram, WeChat,
 * Snapchat, any other app's web view):
 * - Google and Apple are not offered: Google refuses embedded browsers (`disallowed_useragent`)
 *   and Apple's page does not complete there; the "Open in your browser" step takes their place.
 * - Twitter's button is hidden (the flag SPEC leaves unnamed): X's authorization page hands off
 *   to the X app or refuses the embedded view, and the visitor never comes back to the page.
 * Discord and GitHub work there and stay, as do e-mail, SMS and wallets.
 */
import type { OAuthProvider } from '@latch/shared'
import { isInAppBrowser as check } from '@latch/shared/in-app-check'

const here = (): string => (typeof navigator === 'undefined' ? '' : navigator.userAgent)

/** Whether the modal runs in an in-app browser (its user agent, and the markers an app injects). */
export function inAppBrowserHere(userAgent: string = here()): boolean {
  return check(userAgent, typeof window === 'undefined' ? undefined : window)
}

export function isInAppBrowser(userAgent: string): boolean {
  return check(userAgent)
}

/** Whether the Twitter button shows on this platform. */
export function showTwitterButton(userAgent: string = here()): boolean {
  return !inAppBrowserHere(userAgent)
}

/** The providers whose sign-in page refuses an in-app browser: the step replaces them. */
export const REFUSE_IN_APP: readonly OAuthProvider[] = ['google', 'apple']
