/**
 * Platform flags the landing reads.
 *
 * The Twitter button rule (docs/behaviour.md, "LANDING": hidden on one platform flag): hidden in
 * embedded in-app browsers (Facebook, Messenger, Instagram, LinkedIn, LINE, WeChat, TikTok,
 * Snapchat, and Android WebViews). Twitter's (X's) authorization page does not complete there: it
 * hands off to the X app or refuses the embedded view, and the visitor never comes back to the
 * page. The other providers' pages work in those browsers.
 */
const IN_APP_BROWSER =
  /\b(FBAN|FBAV|FB_IAB|Instagram|LinkedInApp|Line\/|MicroMessenger|musical_ly|Bytedance|Snapchat)\b|; wv\)/i

export function isInAppBrowser(userAgent: string): boolean {
  return IN_APP_BROWSER.test(userAgent)
}

/** Whether the Twitter button shows on this platform. */
export function showTwitterButton(
  userAgent: string = typeof navigator === 'undefined' ? '' : navigator.userAgent,
): boolean {
  return !isInAppBrowser(userAgent)
}
