import { describe, expect, test } from 'vitest'
import { IN_APP_BROWSERS, inAppBrowser, mobilePlatform } from './in-app-browser.ts'
import { IN_APP_MARKER, isInAppBrowser } from './in-app-check.ts'

// User agents as the apps send them (recent versions), iOS then Android for each.
const IN_APP: [string, string, string][] = [
  [
    'instagram',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 357.0.0.25.101 (iPhone16,2; iOS 18_1_1; en_US; en; scale=3.00; 1290x2796; 664937563; IABMV/1)',
  ],
  [
    'instagram',
    'android',
    'Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.107 Mobile Safari/537.36 Instagram 355.0.0.36.107 Android (34/14; 480dpi; 1080x2340; samsung; SM-S918B; dm3q; qcom; en_US; 659227658)',
  ],
  [
    'facebook',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/489.0.0.49.108;FBBV/665377064;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/18.1;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5;FBRV/667129389;IABMV/1]',
  ],
  [
    'facebook',
    'android',
    'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.102 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/490.0.0.52.109;IABMV/1;]',
  ],
  [
    'facebook',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_6_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/MessengerForiOS;FBAV/482.0.0.38.107;FBBV/651577372;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.6.1;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/5;FBRV/0]',
  ],
  [
    'linkedin',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [LinkedInApp]/9.30.1961',
  ],
  [
    'linkedin',
    'android',
    'Mozilla/5.0 (Linux; Android 14; Pixel 7 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/128.0.6613.146 Mobile Safari/537.36 [LinkedInApp]/4.1.1005',
  ],
  [
    'tiktok',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_6_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 musical_ly_36.5.0 JsSdk/2.0 NetType/WIFI Channel/App Store ByteLocale/en Region/US isDarkMode/0 WKWebView/1 RevealType/Dialog BytedanceWebview/d8a21c6 FalconTag/',
  ],
  [
    'tiktok',
    'android',
    'Mozilla/5.0 (Linux; Android 13; SM-A536B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/129.0.6668.100 Mobile Safari/537.36 trill_370104 JsSdk/1.0 NetType/WIFI Channel/googleplay AppName/trill app_version/37.1.4 ByteLocale/en ByteFullLocale/en Region/GB AppId/1180 Spark/1.5.8.5-bugfix AppVersion/37.1.4 BytedanceWebview/d8a21c6',
  ],
  [
    'x',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Twitter for iPhone/10.68',
  ],
  [
    'x',
    'android',
    'Mozilla/5.0 (Linux; Android 14; SM-G991B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.86 Mobile Safari/537.36 TwitterAndroid',
  ],
  [
    'line',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Safari Line/14.19.0',
  ],
  [
    'line',
    'android',
    'Mozilla/5.0 (Linux; Android 14; SO-51D Build/67.2.A.2.118; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.86 Mobile Safari/537.36 Line/14.19.1/IAB',
  ],
  [
    'wechat',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.50(0x1800323d) NetType/WIFI Language/zh_CN',
  ],
  [
    'wechat',
    'android',
    'Mozilla/5.0 (Linux; Android 14; V2307A Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/122.0.6261.120 Mobile Safari/537.36 XWEB/1220099 MMWEBSDK/20240404 MMWEBID/2307 MicroMessenger/8.0.49.2600(0x28003133) WeChat/arm64 Weixin NetType/WIFI Language/zh_CN ABI/arm64',
  ],
  [
    'snapchat',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Snapchat/13.10.0.40 (like Safari/8618.2.12.10.5, panda)',
  ],
  // A Telegram Mini App's WebView on Android names Telegram.
  [
    'telegram',
    'android',
    'Mozilla/5.0 (Linux; Android 14; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.6723.107 Mobile Safari/537.36 Telegram-Android/11.4.3 (Samsung SM-S918B; Android 14; SDK 34; HIGH)',
  ],
  // Telegram's in-app browser on iOS: the system WKWebView's own user agent, no Safari token.
  [
    'webview',
    'ios',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  ],
  // Another app's Android WebView.
  [
    'webview',
    'android',
    'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.102 Mobile Safari/537.36',
  ],
]

// Browsers of their own: Google's sign-in works there.
const BROWSERS = [
  // Chrome on Android (reduced user agent), Windows, macOS.
  'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  // Safari on iPhone, iPad, macOS.
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPad; CPU OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.7 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  // Firefox on Android, iOS, Linux.
  'Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/132.0 Mobile/15E148 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0',
  // Samsung Internet.
  'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36',
  // Chrome on iOS, Edge on iOS, the Google app on iOS.
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 EdgiOS/131.2903.56 Mobile/15E148 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GSA/343.0.695551749 Mobile/15E148 Safari/604.1',
  // Telegram's in-app browser on Android, as it rewrites the WebView's user agent: the user agent
  // alone cannot tell it from Chrome (its injected object can, below).
  'Mozilla/5.0 (Linux; Android 14; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.6723.107 Mobile Safari/537.36',
]

describe('inAppBrowser', () => {
  test.each(IN_APP)('param: %s on %s', (app, platform, userAgent) => {
    expect(inAppBrowser(userAgent)).toEqual({ app, platform })
  })

  test('param: every app of the table is recognised on both platforms where it marks itself', () => {
    const seen = new Set(IN_APP.map(([app]) => app))
    for (const [app] of IN_APP_BROWSERS) expect([app, seen.has(app)]).toEqual([app, true])
    for (const app of ['instagram', 'facebook', 'linkedin', 'tiktok', 'x', 'line', 'wechat']) {
      const platforms = IN_APP.filter(([a]) => a === app).map(([, p]) => p)
      expect([app, [...new Set(platforms)].sort()]).toEqual([app, ['android', 'ios']])
    }
  })

  test.each(BROWSERS)('param: a browser of its own is null: %s', (userAgent) => {
    expect(inAppBrowser(userAgent)).toBeNull()
    expect(inAppBrowser(userAgent, {})).toBeNull()
  })

  test("behavior: Telegram's in-app browser on Android shows by the object it injects, not its user agent", () => {
    const telegram = BROWSERS[BROWSERS.length - 1] as string
    expect(inAppBrowser(telegram)).toBeNull()
    expect(inAppBrowser(telegram, { TelegramWebviewProxy: {} })).toEqual({
      app: 'telegram',
      platform: 'android',
    })
  })

  test('param: an empty or unknown user agent is null', () => {
    expect(inAppBrowser('')).toBeNull()
    expect(inAppBrowser('curl/8.4.0')).toBeNull()
    // Words that only look like a marker.
    expect(inAppBrowser('Mozilla/5.0 (X11; Linux x86_64) Timeline/2 Safari/537.36')).toBeNull()
  })
})

describe('mobilePlatform', () => {
  test('param: iPhone, iPad and Android; desktop is null', () => {
    expect(mobilePlatform(BROWSERS[3] as string)).toBe('ios')
    expect(mobilePlatform(BROWSERS[4] as string)).toBe('ios')
    expect(mobilePlatform(BROWSERS[0] as string)).toBe('android')
    expect(mobilePlatform(BROWSERS[6] as string)).toBe('android')
    expect(mobilePlatform(BROWSERS[1] as string)).toBeNull()
    expect(mobilePlatform(BROWSERS[5] as string)).toBeNull()
  })
})

describe("isInAppBrowser (the landing's check, in-app-check.ts)", () => {
  test('behavior: its marker is every marker of the table, in order', () => {
    expect(IN_APP_MARKER.source).toBe(IN_APP_BROWSERS.map(([, marker]) => marker.source).join('|'))
  })

  test("behavior: it answers as inAppBrowser does for every user agent here, with and without Telegram's object", () => {
    const agents = [...IN_APP.map(([, , ua]) => ua), ...BROWSERS, '', 'curl/8.4.0']
    for (const ua of agents) {
      for (const globals of [undefined, {}, { TelegramWebviewProxy: {} }]) {
        expect([ua, globals, isInAppBrowser(ua, globals)]).toEqual([
          ua,
          globals,
          inAppBrowser(ua, globals) !== null,
        ])
      }
    }
  })
})
