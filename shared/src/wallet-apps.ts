/**
 * The mobile wallet apps whose deep links the modal offers, kept once: the
 * WalletConnect screens open one with a pairing URI, the session fork opens one's in-app
 * browser on the host page. Imported through `@latch/shared/wallet-apps` only by the screens
 * that need it, so the modal landing never carries it.
 *
 * Universal links and native schemes are the ones the wallets publish in the WalletConnect
 * registry; a native scheme is listed only where the wallet documents one. A dapp-browser link
 * is listed only for the wallets whose format is documented and stable (MetaMask, Coinbase
 * Wallet, Trust Wallet, Phantom); the others can only be paired with.
 */

import { FORK_RETURN_PARAM } from './types.ts'

export interface WalletApp {
  /** Stable id, the walletClientType a connection through this app records. */
  id: string
  name: string
  /** A small SVG monogram in the wallet's colour, as a data URI (no request, no asset). */
  icon: string
  /** https link that opens the app when installed (its store page or site otherwise). */
  universal: string
  /** Custom scheme with its separator, e.g. 'metamask://'. */
  native?: string
  /** Builds the link that opens `url` in the app's in-app browser. */
  dapp?: (url: URL) => string
}

const enc = encodeURIComponent

/** The dapp-browser link formats the wallets document. */
const DAPP = {
  // MetaMask takes the address without its scheme (it always opens https).
  metamask: (url: URL) =>
    `https://metamask.app.link/dapp/${url.host}${url.pathname}${url.search}${url.hash}`,
  coinbase_wallet: (url: URL) => `https://go.cb-w.com/dapp?cb_url=${enc(url.href)}`,
  trust: (url: URL) => `https://link.trustwallet.com/open_url?coin_id=60&url=${enc(url.href)}`,
  phantom: (url: URL) => `https://phantom.app/ul/browse/${enc(url.href)}?ref=${enc(url.origin)}`,
} satisfies Record<string, (url: URL) => string>

/** A round monogram: the wallet's initial on its colour. */
function monogram(name: string, color: string): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="16" fill="${color}"/><text x="16" y="21" font-family="sans-serif" font-size="15" font-weight="700" fill="#fff" text-anchor="middle">${name.charAt(0)}</text></svg>`
  return `data:image/svg+xml,${enc(svg)}`
}

// id, name, colour, universal link, native scheme: one row each keeps the list reviewable.
const ROWS: readonly (readonly [string, string, string, string, string?])[] = [
  ['metamask', 'MetaMask', '#F6851B', 'https://metamask.app.link', 'metamask://'],
  ['coinbase_wallet', 'Coinbase Wallet', '#0052FF', 'https://go.cb-w.com', 'cbwallet://'],
  ['trust', 'Trust Wallet', '#3375BB', 'https://link.trustwallet.com', 'trust://'],
  ['phantom', 'Phantom', '#AB9FF2', 'https://phantom.app/ul', 'phantom://'],
  ['rainbow', 'Rainbow', '#001E59', 'https://rnbwapp.com', 'rainbow://'],
  ['uniswap', 'Uniswap Wallet', '#FF007A', 'https://uniswap.org/app', 'uniswap://'],
  ['zerion', 'Zerion', '#2962EF', 'https://wallet.zerion.io', 'zerion://'],
  ['okx_wallet', 'OKX Wallet', '#000000', 'https://www.okx.com/download', 'okex://main/'],
  ['safe', 'Safe', '#12FF80', 'https://app.safe.global'],
  ['argent', 'Argent', '#FF875B', 'https://www.argent.xyz/app', 'argent://'],
  ['ledger_live', 'Ledger Live', '#000000', 'https://www.ledger.com/ledger-live', 'ledgerlive://'],
  ['imtoken', 'imToken', '#11C4D1', 'https://token.im', 'imtokenv2://'],
  ['tokenpocket', 'TokenPocket', '#2980FE', 'https://www.tokenpocket.pro', 'tpoutside://'],
  ['bitkeep', 'Bitget Wallet', '#00F0FF', 'https://bkapp.vip', 'bitkeep://'],
  ['safepal', 'SafePal', '#4A21EF', 'https://link.safepal.io', 'safepalwallet://'],
  ['exodus', 'Exodus', '#1F2033', 'https://exodus.com/m', 'exodus://'],
  ['cryptocom', 'Crypto.com DeFi Wallet', '#103F68', 'https://wallet.crypto.com'],
  ['binance', 'Binance Web3 Wallet', '#F0B90B', 'https://app.binance.com/cedefi'],
  ['oneinch', '1inch Wallet', '#1B314F', 'https://wallet.1inch.io'],
  ['spot', 'Spot', '#6E56CF', 'https://spot.so'],
  ['omni', 'Omni', '#000000', 'https://links.omni.app'],
  ['blockchain', 'Blockchain.com', '#121D33', 'https://www.blockchain.com'],
  ['zengo', 'ZenGo', '#16D5B1', 'https://get.zengo.com'],
  ['mew_wallet', 'MEW wallet', '#05C0A5', 'https://mewwallet.com', 'mewwallet://'],
  ['alphawallet', 'AlphaWallet', '#2A6AFF', 'https://aw.app', 'awallet://'],
  ['keyring_pro', 'KEYRING PRO', '#1B1F3B', 'https://keyring.app'],
  ['mathwallet', 'MathWallet', '#000000', 'https://www.mathwallet.org'],
  ['unstoppable', 'Unstoppable', '#0D67FE', 'https://unstoppabledomains.com/mobile'],
  ['obvious', 'Obvious', '#5B2EE0', 'https://wallet.obvious.technology'],
  ['ambire', 'Ambire', '#6000FF', 'https://mobile.ambire.com'],
  ['internet_money_wallet', 'Internet Money Wallet', '#000000', 'https://internetmoney.io'],
  ['coin98', 'Coin98', '#D9B432', 'https://coin98.services'],
  ['abc_wallet', 'ABC Wallet', '#1A1A1A', 'https://abcwalletconnect.page.link'],
  ['arculus_wallet', 'Arculus Wallet', '#000000', 'https://gw.arculus.co/app'],
  ['haha', 'HaHa', '#3E3AF2', 'https://haha.me'],
  ['enjin_wallet', 'Enjin Wallet', '#7866D5', 'https://deeplink.wallet.enjin.io'],
  ['plasma_wallet', 'Plasma Wallet', '#0E1B37', 'https://plasma-wallet.com'],
  ['avacus', 'Avacus', '#2C2C2C', 'https://avacus.app.link'],
  ['bee', 'Bee Wallet', '#FFB800', 'https://beewallet.app'],
  ['pitaka', 'Pitaka', '#3B5BDB', 'https://app.pitaka.io'],
  ['minerva', 'Minerva', '#263238', 'https://minerva.digital'],
  ['kryptogo', 'KryptoGO', '#0B0B0B', 'https://kryptogo.page.link'],
  ['kriptonio', 'Kriptonio', '#3F51B5', 'https://app.kriptonio.com/mobile'],
  ['timeless', 'Timeless', '#101010', 'https://timelesswallet.xyz'],
  ['secux', 'SecuX', '#1A3E6E', 'https://wsweb.secuxtech.com'],
  ['bitizen', 'Bitizen', '#000000', 'https://bitizen.org/wallet'],
  ['blocto', 'Blocto', '#1890FF', 'https://blocto.app'],
]

const dappLinks: Partial<Record<string, (url: URL) => string>> = DAPP

/** Every wallet app, in the order the screens offer them. */
export const WALLET_APPS: readonly WalletApp[] = ROWS.map(
  ([id, name, color, universal, native]) => {
    const dapp = dappLinks[id]
    return {
      id,
      name,
      icon: monogram(name, color),
      universal,
      ...(native ? { native } : {}),
      ...(dapp ? { dapp } : {}),
    }
  },
)

/** The wallet app with this id, if listed. */
export function walletApp(id: string): WalletApp | undefined {
  return WALLET_APPS.find((w) => w.id === id)
}

/**
 * The link that hands a WalletConnect pairing URI to the app: its universal link (what a
 * phone browser follows even from a frame) or, with `native`, its custom scheme.
 * @example walletConnectLink(walletApp('rainbow')!, uri) // https://rnbwapp.com/wc?uri=wc%3A…
 */
export function walletConnectLink(app: WalletApp, pairingUri: string, native = false): string {
  const base = native && app.native ? app.native : `${app.universal.replace(/\/+$/, '')}/`
  return `${base}wc?uri=${enc(pairingUri)}`
}

/** The apps that can open a page in their in-app browser (the session fork offers these). */
export function dappBrowserApps(): WalletApp[] {
  return WALLET_APPS.filter((w) => w.dapp)
}

/**
 * Whether the app's in-app browser link keeps the page's fragment as the link's own fragment,
 * so the link service's server never receives it. Checked on the built link itself rather than
 * listed: MetaMask's link (the address appended to its path) keeps it; Coinbase Wallet's, Trust
 * Wallet's and Phantom's percent-encode the whole address into their query or path, which the
 * browser sends to go.cb-w.com, link.trustwallet.com or phantom.app when the app is not
 * installed, and they document no way to carry an outer fragment into the page.
 */
export function keepsFragment(app: WalletApp): boolean {
  if (!app.dapp) return false
  const probe = 'Zq9probe'
  const link = new URL(
    app.dapp(new URL(`https://page.invalid/p?q=1#${FORK_RETURN_PARAM}=${probe}`)),
  )
  return (
    !`${link.origin}${link.pathname}${link.search}`.includes(probe) && link.hash.includes(probe)
  )
}

/** The apps a session fork may open: an in-app browser link that keeps the token out of requests. */
export function forkApps(): WalletApp[] {
  return dappBrowserApps().filter(keepsFragment)
}

/**
 * The link that opens `pageUrl` (with its fork token, withForkToken) in the app's in-app
 * browser; throws for an app whose link would send the fragment to a server.
 */
export function forkLink(app: WalletApp, pageUrl: string): string {
  if (!keepsFragment(app)) throw new Error(`${app.name} cannot open a session link`)
  return dappBrowserLink(app, pageUrl)
}

/**
 * The link that opens `pageUrl` (http or https) in the app's in-app browser; throws for an
 * app without one or another kind of address, so no link carries a script or file address.
 */
export function dappBrowserLink(app: WalletApp, pageUrl: string): string {
  const url = new URL(pageUrl)
  if (!app.dapp) throw new Error(`${app.name} has no in-app browser link`)
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error('Only http and https pages open in a wallet app')
  }
  return app.dapp(url)
}
