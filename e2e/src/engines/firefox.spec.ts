/**
 * The Firefox lane (Debian's firefox-esr through puppeteer-core over WebDriver BiDi): the
 * wallet keeps its credential in the cross-site frame (Firefox partitions it, and keeps it), so
 * every flow works cross-site and same-site. See lanes.ts.
 */
import { engineLanes } from './lanes.ts'

engineLanes('firefox', { crossSiteCookies: true })
