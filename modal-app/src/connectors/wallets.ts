/**
 * Where the education and install screens send a visitor without a wallet: each wallet's own
 * download pages (the extension for the visitor's browser, the app store on a phone).
 */
const ua = () => (typeof navigator === 'undefined' ? '' : navigator.userAgent)

export const isFirefox = (userAgent = ua()): boolean => /\bFirefox\//.test(userAgent)
export const isIos = (userAgent = ua()): boolean => /\b(iPhone|iPad|iPod)\b/.test(userAgent)
export const isAndroid = (userAgent = ua()): boolean => /\bAndroid\b/.test(userAgent)
export const isMobile = (userAgent = ua()): boolean => isIos(userAgent) || isAndroid(userAgent)

/** The 'Still not sure? Learn more' link: what a wallet is, by a neutral party. */
export const LEARN_MORE_URL = 'https://ethereum.org/en/wallets/'

export const METAMASK = {
  chrome: 'https://chromewebstore.google.com/detail/metamask/nkbihfbeogaeaoehlefnkodbefgpgknn',
  firefox: 'https://addons.mozilla.org/firefox/addon/ether-metamask/',
  appStore: 'https://apps.apple.com/app/metamask/id1438144202',
  playStore: 'https://play.google.com/store/apps/details?id=io.metamask',
}

export const PHANTOM = {
  chrome: 'https://chromewebstore.google.com/detail/phantom/bfnaelmomeimhlpmgjnjophhpkkoljpa',
  firefox: 'https://addons.mozilla.org/firefox/addon/phantom-app/',
  appStore: 'https://apps.apple.com/app/phantom-crypto-wallet/id1598432977',
  playStore: 'https://play.google.com/store/apps/details?id=app.phantom',
}

export const COINBASE_WALLET = {
  /** What the QR code of the install screen opens on the visitor's phone. */
  download: 'https://www.coinbase.com/wallet/downloads',
  appStore: 'https://apps.apple.com/app/coinbase-wallet/id1278383455',
  playStore: 'https://play.google.com/store/apps/details?id=org.toshi',
}

/** A browser extension's page for this browser (Firefox has its own add-on store). */
export const extensionUrl = (wallet: { chrome: string; firefox: string }, userAgent = ua()) =>
  isFirefox(userAgent) ? wallet.firefox : wallet.chrome

/** The app store of this phone (Google Play unless iOS). */
export const appStoreUrl = (wallet: { appStore: string; playStore: string }, userAgent = ua()) =>
  isIos(userAgent) ? wallet.appStore : wallet.playStore
