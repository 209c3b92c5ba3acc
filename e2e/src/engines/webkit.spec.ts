/**
 * The WebKit lane (Debian's WebKitGTK MiniBrowser through WebKitWebDriver under Xvfb, driven by
 * selenium-webdriver): WebKit's default policy refuses every third-party cookie, Partitioned
 * included, so cross-site the wallet credential never reaches the wallet frame and the modal
 * says so at once; same-site (Latch on the host's own subdomains) every flow works. See lanes.ts.
 */
import { engineLanes } from './lanes.ts'

engineLanes('webkit', { crossSiteCookies: false })
