/**
 * Finds the browser wallets injected into this page: EIP-6963 announcements and the legacy
 * `window.ethereum`. Everything a wallet announces is untrusted (any extension or page script
 * can announce anything), so it is checked and capped before the modal sees it.
 */
import type { InjectedWalletInfo } from '@latch/shared'

/** An EIP-1193 provider, as far as the bridge uses it. */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown }): Promise<unknown>
  on?(event: string, listener: (...args: unknown[]) => void): unknown
}

export interface InjectedWallet {
  info: InjectedWalletInfo
  provider: Eip1193Provider
}

/** The id the legacy provider gets; a dot never appears in an accepted EIP-6963 uuid. */
export const LEGACY_ID = 'window.ethereum'
/** More announcements than any real browser has wallets: a flood stops here. */
export const MAX_WALLETS = 20
export const MAX_NAME_LENGTH = 64
/** A wallet's icon is shown at 32 px or so; 64 KB of data URI is plenty and bounds the message. */
export const MAX_ICON_LENGTH = 65_536

const UUID = /^[\w-]{1,64}$/
const RDNS = /^[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63}){1,7}$/i
/** Raster or SVG images only; an SVG in an <img> runs no script. */
const ICON = /^data:image\/(png|jpeg|gif|webp|svg\+xml)[;,]/

/**
 * The legacy provider's flags, most specific first: many wallets also set isMetaMask for
 * compatibility, so it comes last.
 */
const LEGACY_FLAGS: [flag: string, name: string, rdns: string][] = [
  ['isPhantom', 'Phantom', 'app.phantom'],
  ['isCoinbaseWallet', 'Coinbase Wallet', 'com.coinbase.wallet'],
  ['isRabby', 'Rabby Wallet', 'io.rabby'],
  ['isBraveWallet', 'Brave Wallet', 'com.brave.wallet'],
  ['isRainbow', 'Rainbow', 'me.rainbow'],
  ['isTrust', 'Trust Wallet', 'com.trustwallet.app'],
  ['isOkxWallet', 'OKX Wallet', 'com.okex.wallet'],
  ['isZerion', 'Zerion', 'io.zerion.wallet'],
  ['isMetaMask', 'MetaMask', 'io.metamask'],
]

const isProvider = (value: unknown): value is Eip1193Provider =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { request?: unknown }).request === 'function'

const text = (value: unknown): string => (typeof value === 'string' ? value : '')

/**
 * An EIP-6963 announcement's detail as a wallet, or undefined when it is not one. The name is
 * trimmed and cut to its cap; an icon that is not a bounded data:image URI and an rdns that is
 * not reverse DNS are dropped (the modal shows a generic icon), not the wallet.
 */
export function announcedWallet(detail: unknown): InjectedWallet | undefined {
  try {
    if (typeof detail !== 'object' || detail === null) return undefined
    const { info, provider } = detail as { info?: unknown; provider?: unknown }
    if (typeof info !== 'object' || info === null || !isProvider(provider)) return undefined
    // The in-app wallet's own announcement (getEthereumProvider({ announce: true })) is not a
    // browser wallet: signing in with it would sign in through itself.
    if ((provider as { isLatch?: unknown }).isLatch === true) return undefined
    const { uuid, name, icon, rdns } = info as Record<string, unknown>
    const id = text(uuid)
    // Control characters and bidirectional overrides could disguise the name.
    const label = text(name)
      .replace(/[\p{Cc}\p{Cf}]/gu, '')
      .trim()
      .slice(0, MAX_NAME_LENGTH)
    if (!UUID.test(id) || !label) return undefined
    const image = text(icon)
    const domain = text(rdns)
    return {
      info: {
        id,
        name: label,
        icon: image.length <= MAX_ICON_LENGTH && ICON.test(image) ? image : '',
        rdns: RDNS.test(domain) ? domain.toLowerCase() : '',
      },
      provider,
    }
  } catch {
    // A getter that throws: not a wallet.
    return undefined
  }
}

/** The legacy `window.ethereum`, named from its flags, if there is one. */
export function legacyWallet(win: Window): InjectedWallet | undefined {
  try {
    const provider: unknown = (win as Window & { ethereum?: unknown }).ethereum
    if (!isProvider(provider)) return undefined
    const flags = provider as unknown as Record<string, unknown>
    const [, name, rdns] = LEGACY_FLAGS.find(([flag]) => flags[flag] === true) ?? [
      '',
      'Browser Wallet',
      '',
    ]
    return { info: { id: LEGACY_ID, name, icon: '', rdns }, provider }
  } catch {
    return undefined
  }
}

export interface Discovery {
  /** Announced wallets in order of announcement, then the legacy one if it is not among them. */
  list(): InjectedWallet[]
  stop(): void
}

/**
 * Listens for EIP-6963 announcements and asks wallets to announce themselves. `onChange` runs
 * when a wallet is added (an announcement, or `ethereum#initialized` for a late legacy one).
 * The first announcement of a uuid or of a provider wins: a later one cannot replace a wallet
 * the modal may already be talking to.
 */
export function discoverWallets(win: Window, onChange: () => void): Discovery {
  const announced = new Map<string, InjectedWallet>()
  const onAnnounce = (event: Event) => {
    const wallet = announcedWallet((event as CustomEvent<unknown>).detail)
    if (!wallet || announced.size >= MAX_WALLETS || announced.has(wallet.info.id)) return
    for (const other of announced.values()) if (other.provider === wallet.provider) return
    announced.set(wallet.info.id, wallet)
    onChange()
  }
  win.addEventListener('eip6963:announceProvider', onAnnounce)
  win.addEventListener('ethereum#initialized', onChange)
  win.dispatchEvent(new Event('eip6963:requestProvider'))
  return {
    list() {
      const wallets = [...announced.values()]
      const legacy = legacyWallet(win)
      // The same wallet as an announced one (same object, or the same rdns by its flags).
      const duplicate =
        !legacy ||
        wallets.some(
          (w) =>
            w.provider === legacy.provider ||
            (legacy.info.rdns && w.info.rdns === legacy.info.rdns),
        )
      return duplicate ? wallets : [...wallets, legacy]
    },
    stop() {
      win.removeEventListener('eip6963:announceProvider', onAnnounce)
      win.removeEventListener('ethereum#initialized', onChange)
    },
  }
}
