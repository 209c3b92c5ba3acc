import { describe, expect, test } from 'vitest'
import { withForkToken } from './types.ts'
import {
  dappBrowserApps,
  dappBrowserLink,
  forkApps,
  forkLink,
  keepsFragment,
  WALLET_APPS,
  type WalletApp,
  walletApp,
  walletConnectLink,
} from './wallet-apps.ts'

const PAIRING =
  'wc:7f6e504bfad60b485450578e05678ed3e8e8c4751d3c6160be17160d63ec90f9@2?relay-protocol=irn&symKey=587d5484ce2a2a6ee3ba1962fdd7e8588e06200c46823bd18fbd67def96ad303'
const PAGE = 'https://shop.example.com/checkout/?item=7&latch_fork=AbC-_9#pay'

function app(id: string): WalletApp {
  const found = walletApp(id)
  if (!found) throw new Error(`no ${id}`)
  return found
}

describe('the list', () => {
  test('behavior: about 45 wallets, ids unique, every link https and every scheme a scheme', () => {
    expect(WALLET_APPS.length).toBeGreaterThanOrEqual(40)
    expect(WALLET_APPS.length).toBeLessThanOrEqual(50)
    expect(new Set(WALLET_APPS.map((w) => w.id)).size).toBe(WALLET_APPS.length)
    for (const w of WALLET_APPS) {
      expect(new URL(w.universal).protocol).toBe('https:')
      if (w.native) expect(w.native).toMatch(/^[a-z][a-z0-9+.-]*:\/\/([a-z]+\/)?$/)
      expect(w.icon.startsWith('data:image/svg+xml,')).toBe(true)
      // Small enough that the list stays a few kilobytes.
      expect(w.icon.length).toBeLessThan(600)
      expect(decodeURIComponent(w.icon)).toContain(`>${w.name.charAt(0)}</text>`)
    }
  })

  test('behavior: only the wallets with a documented in-app browser link offer one', () => {
    expect(dappBrowserApps().map((w) => w.id)).toEqual([
      'metamask',
      'coinbase_wallet',
      'trust',
      'phantom',
    ])
  })
})

describe('walletConnectLink', () => {
  test('behavior: the universal link carries the pairing URI, encoded once', () => {
    const link = walletConnectLink(app('rainbow'), PAIRING)
    expect(link).toBe(`https://rnbwapp.com/wc?uri=${encodeURIComponent(PAIRING)}`)
    expect(new URL(link).searchParams.get('uri')).toBe(PAIRING)
  })

  test('behavior: a universal link with a path keeps it, without doubling the slash', () => {
    expect(walletConnectLink(app('uniswap'), PAIRING)).toBe(
      `https://uniswap.org/app/wc?uri=${encodeURIComponent(PAIRING)}`,
    )
    expect(walletConnectLink(app('metamask'), 'wc:x@2')).toBe(
      'https://metamask.app.link/wc?uri=wc%3Ax%402',
    )
  })

  test('param: native uses the scheme, and falls back to the universal link without one', () => {
    expect(walletConnectLink(app('metamask'), PAIRING, true)).toBe(
      `metamask://wc?uri=${encodeURIComponent(PAIRING)}`,
    )
    expect(walletConnectLink(app('okx_wallet'), 'wc:a@2', true)).toBe(
      'okex://main/wc?uri=wc%3Aa%402',
    )
    expect(walletConnectLink(app('safe'), 'wc:a@2', true)).toBe(
      'https://app.safe.global/wc?uri=wc%3Aa%402',
    )
  })

  test('error: a URI with & or # cannot break out of the uri parameter', () => {
    const tricky = 'wc:a@2?relay-protocol=irn&symKey=k#x'
    const link = new URL(walletConnectLink(app('trust'), tricky))
    expect([...link.searchParams.keys()]).toEqual(['uri'])
    expect(link.searchParams.get('uri')).toBe(tricky)
    expect(link.hash).toBe('')
  })
})

describe('dappBrowserLink', () => {
  test('behavior: MetaMask takes the address without its scheme, query and fragment kept', () => {
    expect(dappBrowserLink(app('metamask'), PAGE)).toBe(
      'https://metamask.app.link/dapp/shop.example.com/checkout/?item=7&latch_fork=AbC-_9#pay',
    )
  })

  test('behavior: Coinbase Wallet, Trust Wallet and Phantom carry the whole address encoded', () => {
    const cb = new URL(dappBrowserLink(app('coinbase_wallet'), PAGE))
    expect(cb.origin + cb.pathname).toBe('https://go.cb-w.com/dapp')
    expect(cb.searchParams.get('cb_url')).toBe(PAGE)

    const trust = new URL(dappBrowserLink(app('trust'), PAGE))
    expect(trust.origin + trust.pathname).toBe('https://link.trustwallet.com/open_url')
    expect(trust.searchParams.get('coin_id')).toBe('60')
    expect(trust.searchParams.get('url')).toBe(PAGE)

    const phantom = new URL(dappBrowserLink(app('phantom'), PAGE))
    expect(phantom.origin).toBe('https://phantom.app')
    expect(phantom.pathname.startsWith('/ul/browse/')).toBe(true)
    expect(decodeURIComponent(phantom.pathname.slice('/ul/browse/'.length))).toBe(PAGE)
    expect(phantom.searchParams.get('ref')).toBe('https://shop.example.com')
    // The page's own query and fragment stay inside the encoded address.
    expect(phantom.hash).toBe('')
    expect([...phantom.searchParams.keys()]).toEqual(['ref'])
  })

  test('error: a wallet without an in-app browser link refuses', () => {
    expect(() => dappBrowserLink(app('rainbow'), PAGE)).toThrow(
      'Rainbow has no in-app browser link',
    )
  })

  test('error: only http and https pages', () => {
    expect(() => dappBrowserLink(app('trust'), 'javascript:alert(1)')).toThrow(
      'Only http and https pages open in a wallet app',
    )
    expect(() => dappBrowserLink(app('metamask'), 'file:///etc/passwd')).toThrow(
      'Only http and https pages',
    )
    expect(() => dappBrowserLink(app('metamask'), 'not a url')).toThrow()
  })
})

describe('session fork links', () => {
  const TOKEN = 'AbC-_9xYz0123456789abcdefghijklmnopqrstuvw'

  test('behavior: the token goes in the fragment, after the page own fragment, never in the query', () => {
    const page = withForkToken('https://shop.example.com/checkout/?item=7', TOKEN)
    expect(page).toBe(`https://shop.example.com/checkout/?item=7#latch_fork=${TOKEN}`)
    const routed = new URL(withForkToken('https://shop.example.com/#/cart?x=1', TOKEN))
    expect(routed.search).toBe('')
    expect(routed.hash).toBe(`#/cart?x=1&latch_fork=${TOKEN}`)
  })

  test('behavior: only a link that keeps the fragment as its own is offered; what its server receives has no token', () => {
    expect(forkApps().map((w) => w.id)).toEqual(['metamask'])
    const page = withForkToken('https://shop.example.com/checkout/?item=7', TOKEN)
    const link = new URL(forkLink(app('metamask'), page))
    // What a request for the link carries (the fragment stays in the browser).
    expect(`${link.origin}${link.pathname}${link.search}`).toBe(
      'https://metamask.app.link/dapp/shop.example.com/checkout/?item=7',
    )
    expect(link.hash).toBe(`#latch_fork=${TOKEN}`)
  })

  test('error: the apps whose links percent-encode the whole address would send the token: refused', () => {
    const page = withForkToken('https://shop.example.com/', TOKEN)
    for (const id of ['coinbase_wallet', 'trust', 'phantom']) {
      const w = app(id)
      expect(keepsFragment(w)).toBe(false)
      // The reason: their ordinary link puts the token where the request carries it.
      const plain = new URL(dappBrowserLink(w, page))
      expect(`${plain.pathname}${plain.search}`).toContain(TOKEN.slice(0, 8))
      expect(() => forkLink(w, page)).toThrow(`${w.name} cannot open a session link`)
    }
    expect(keepsFragment(app('rainbow'))).toBe(false)
  })
})
