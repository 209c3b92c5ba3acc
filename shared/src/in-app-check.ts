/**
 * Whether a page runs in an in-app browser, as `inAppBrowser` (in-app-browser.ts) decides, in
 * one expression and without the table of names. The modal's landing decides with it on its
 * first render; the table loads only where the "Open in your browser" step is drawn. It lives
 * in a module of its own because a bundle that imports any export of a module keeps the exports
 * its lazy chunks use beside it. in-app-check.test.ts holds the two to the same answers.
 */

/** Every marker of IN_APP_BROWSERS, in its order (the test compares the sources). */
export const IN_APP_MARKER =
  /\bInstagram \d|\bFB(AN|AV|_IAB)\/|\[LinkedInApp\]|\b(musical_ly|trill)_\d|BytedanceWebview\/|\bTwitter( for iP(hone|ad)\/|Android\b)|\bLine\/\d|\bTelegram-(Android|iOS)\/|\bMicroMessenger\/|\bSnapchat\/\d/

export function isInAppBrowser(userAgent: string, globals?: object): boolean {
  if (IN_APP_MARKER.test(userAgent)) return true
  if (globals && 'TelegramWebviewProxy' in globals) return true
  const ios = /\b(iPhone|iPad|iPod)\b/.test(userAgent)
  const android = !ios && /\bAndroid\b/.test(userAgent)
  return (
    (android && /; wv\)/.test(userAgent)) ||
    (ios && /AppleWebKit\//.test(userAgent) && !/Safari\//.test(userAgent))
  )
}
