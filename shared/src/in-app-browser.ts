/**
 * The in-app browsers of social and messaging apps, told apart by their user agent.
 *
 * Google refuses its sign-in page inside embedded browsers (`disallowed_useragent`) and Apple's
 * does not complete there either, so the modal's landing replaces those buttons with an "Open in
 * your browser" step in them (docs/architecture.md, "In-app browsers"). Imported through
 * `@latch/shared/in-app-browser`.
 *
 * What can and cannot be detected:
 * - Instagram, Facebook (and Messenger), LinkedIn, TikTok, X, Line, WeChat and Snapchat add a
 *   marker of their own to the system web view's user agent, on iOS and Android.
 * - Telegram's in-app browser adds none. On Android it rewrites the WebView's user agent to look
 *   like Chrome's (it removes `; wv)`, `Version/4.0` and the device model), so its user agent
 *   cannot be told from Chrome's; what gives it away is the `TelegramWebviewProxy` object it
 *   injects into every frame of the page (Android's JavaScript interfaces reach iframes too),
 *   which `globals` checks. Only its Mini Apps add `Telegram-Android/`. On iOS it is a plain
 *   WKWebView with the system's default user agent: it reads as an unnamed web view (below), as
 *   any other app's WKWebView does.
 * - Any other app's web view is `'webview'`: on Android the WebView's `; wv)` marker, on iOS an
 *   iPhone or iPad WebKit user agent without Safari's `Safari/` token (Safari, Chrome, Firefox,
 *   Edge and the Google app all carry it). That is also what Google goes by when it refuses.
 * - An app that opens links in the system browser's own view (SFSafariViewController, Chrome
 *   Custom Tabs) is the real browser, with its cookies and Google's consent: nothing to detect.
 */

export type InAppBrowserApp =
  | 'instagram'
  | 'facebook'
  | 'linkedin'
  | 'tiktok'
  | 'x'
  | 'line'
  | 'telegram'
  | 'wechat'
  | 'snapchat'
  | 'webview'

export type MobilePlatform = 'ios' | 'android'

export interface InAppBrowser {
  app: InAppBrowserApp
  /** null on a platform that is neither (a desktop app's web view). */
  platform: MobilePlatform | null
}

/** Each app's user agent markers, in the order they are tried. */
export const IN_APP_BROWSERS: readonly (readonly [InAppBrowserApp, RegExp])[] = [
  // Before Facebook: Instagram's Android user agent carries no FB marker, but keep it first.
  ['instagram', /\bInstagram \d/],
  // FBAN/FBIOS (Facebook on iOS), FB_IAB/FB4A (on Android), FBAN/MessengerForiOS, FB_IAB/MESSENGER.
  ['facebook', /\bFB(AN|AV|_IAB)\//],
  ['linkedin', /\[LinkedInApp\]/],
  // musical_ly_ (TikTok in Asia and the US), trill_ (elsewhere), ByteDance's web view on both.
  ['tiktok', /\b(musical_ly|trill)_\d|BytedanceWebview\//],
  ['x', /\bTwitter( for iP(hone|ad)\/|Android\b)/],
  ['line', /\bLine\/\d/],
  ['telegram', /\bTelegram-(Android|iOS)\//],
  ['wechat', /\bMicroMessenger\//],
  ['snapchat', /\bSnapchat\/\d/],
]

/** 'ios' for an iPhone, iPad or iPod, 'android' for Android, else null. */
export function mobilePlatform(userAgent: string): MobilePlatform | null {
  return /\b(iPhone|iPad|iPod)\b/.test(userAgent)
    ? 'ios'
    : /\bAndroid\b/.test(userAgent)
      ? 'android'
      : null
}

/**
 * The in-app browser this user agent belongs to, or null for a browser of its own (Safari,
 * Chrome, Firefox, Samsung Internet, Edge…). `globals` (the page's window) lets the markers an
 * app injects count too: Telegram's on Android.
 */
export function inAppBrowser(userAgent: string, globals?: object): InAppBrowser | null {
  const platform = mobilePlatform(userAgent)
  const found = IN_APP_BROWSERS.find(([, marker]) => marker.test(userAgent))
  const app: InAppBrowserApp | null = found
    ? found[0]
    : globals && 'TelegramWebviewProxy' in globals
      ? 'telegram'
      : (platform === 'android' && /; wv\)/.test(userAgent)) ||
          (platform === 'ios' && /AppleWebKit\//.test(userAgent) && !/Safari\//.test(userAgent))
        ? 'webview'
        : null
  return app ? { app, platform } : null
}
