/**
 * A compromised wallet SDK. WalletConnect's provider runs in the connector frame
 * (modal-app/connectors.html), sandboxed into an opaque origin; Coinbase Wallet's SDK in
 * coinbase.html on the connector origin, an origin of its own (the last test). Code running there, as a
 * hijacked copy of the SDK would, reads none of the modal's cookies or storage, cannot reach
 * the modal's document, open a window or navigate the host page, and cannot call the API as the
 * signed-in visitor; what it posts to the modal's window outside the handshake's port is
 * ignored. Same-site deployment, where the modal
 * does keep a session and WalletConnect's entries in its own storage: there is something to
 * steal. Every piece is local (the relay of wc-relay.ts).
 */
import { API_PREFIX, type User } from '@latch/shared'
import type { Frame } from 'playwright-core'
import { expect, test } from 'vitest'
import { expectOk, latchCall, newEmail, settle, signInByEmail, visit } from './flows.ts'
import { useHarness } from './use-harness.ts'
import { useLocalRelay } from './wc-relay.ts'

const PROJECT_ID = 'e2e0c0ffee0c0ffee0c0ffee0c0ffee2'

const relayUp = useLocalRelay()
const h = useHarness({
  sameSite: true,
  get walletConnectRelayUrl() {
    return relayUp().url
  },
})

/** What a script in the frame gets when it reaches for the visitor's secrets. */
interface Reach {
  origin: string
  cookie: string
  localStorage: string
  sessionStorage: string
  indexedDB: string
  parentDocument: string
  parentStorage: string
  topNavigation: string
  popup: string
  refresh: string
  fork: string
}

test('refusal: code in the connector frame reads no cookie or storage of the modal, cannot reach its document, cannot call the API as the visitor; the modal ignores what other windows post to it', async () => {
  const { id } = await h().createApp({
    loginMethods: ['wallet', 'email'],
    appearance: { showWalletLoginFirst: false },
    walletConnectCloudProjectId: PROJECT_ID,
  })
  const hp = await h().open({ appId: id })
  await signInByEmail(h(), hp, newEmail('sdk-frame'))

  // The wallet link screen: choosing WalletConnect loads the connector frame.
  const linking = latchCall<User>(hp.page, 'link', 'wallet')
  await visit(hp, 'LINK_WALLET_SCREEN')
  await hp.modal.getByTestId('walletconnect-option').click()
  const qr = hp.modal.getByTestId('walletconnect-qr')
  await qr.waitFor({ state: 'visible' })
  const uri = await qr.getAttribute('data-uri')
  expect(uri).toMatch(/^wc:[0-9a-f]{64}@2\?/)

  const modal = hp.page.frames().find((f) => f.url().startsWith(`${h().modalUrl}/?`))
  const connector = hp.page.frames().find((f) => f.url().includes('/connectors.html'))
  if (!modal || !connector) throw new Error('the modal or its connector frame is missing')
  expect(connector.parentFrame()).toBe(modal)

  // The modal has something to steal: a session, and WalletConnect's pairing it keeps.
  const modalHeld = await modal.evaluate(() => ({
    storage: Object.keys(localStorage),
    cookie: document.cookie.length > 0,
  }))
  expect(modalHeld.storage.some((k) => k.startsWith('latch:wc:'))).toBe(true)

  const hostUrl = hp.page.url()
  const reach = await reachFrom(connector, `${h().apiUrl}${API_PREFIX}`)
  expect(reach).toEqual({
    origin: 'null',
    cookie: 'SecurityError',
    localStorage: 'SecurityError',
    sessionStorage: 'SecurityError',
    indexedDB: 'SecurityError',
    parentDocument: 'SecurityError',
    parentStorage: 'SecurityError',
    topNavigation: 'refused',
    popup: 'blocked',
    refresh: 'refused',
    fork: 'refused',
  } satisfies Reach)
  expect(hp.page.url()).toBe(hostUrl)

  // Posted to the modal's window by the frame, or by the host page: not the port, so ignored.
  const forged =
    'wc:0000000000000000000000000000000000000000000000000000000000000000@2?relay-protocol=irn&symKey=00'
  await connector.evaluate((forgedUri) => {
    parent.postMessage({ t: 'event', name: 'display_uri', payload: forgedUri }, '*')
    parent.postMessage({ type: 'latch:connectors:ready', nonce: location.hash.slice(1) }, '*')
  }, forged)
  await hp.page.evaluate((forgedUri) => {
    for (const frame of Array.from(window.frames)) {
      frame.postMessage({ t: 'event', name: 'display_uri', payload: forgedUri }, '*')
    }
  }, forged)
  // A round trip to the modal: anything it would have done with those has happened.
  await modal.evaluate(() => new Promise((r) => setTimeout(r, 300)))
  expect(await qr.getAttribute('data-uri')).toBe(uri)
  expect(hp.page.frames().filter((f) => f.url().includes('/connectors.html'))).toHaveLength(1)

  // The visitor's session is untouched: still signed in as before.
  await hp.page.keyboard.press('Escape')
  await settle(linking, 'link(wallet)')
  const user = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser'), 'getUser()'))
  expect(user?.email?.address).toMatch(/^sdk-frame/)
})

/** What a script in Coinbase Wallet's frame, on the connector origin, gets of the modal's. */
interface CoinbaseReach {
  origin: string
  modalCookies: string[]
  modalStorageKeys: string[]
  parentDocument: string
  parentStorage: string
  topNavigation: string
  refresh: string
  fork: string
}

test("refusal: code in Coinbase Wallet's frame (its own connector origin) reads none of the modal's cookies or storage, cannot reach its document or navigate the page, cannot call the API as the visitor; what it posts to the modal's window is ignored", async () => {
  const { id } = await h().createApp({
    loginMethods: ['wallet', 'email'],
    appearance: { showWalletLoginFirst: false },
  })
  const hp = await h().open({ appId: id })
  await signInByEmail(h(), hp, newEmail('cb-frame'))

  const linking = latchCall<User>(hp.page, 'link', 'wallet')
  await visit(hp, 'LINK_WALLET_SCREEN')
  await hp.modal.locator('[data-wallet-id="latch:coinbase-wallet-sdk"]').click()
  await visit(hp, 'COINBASE_INTERSTITIAL_SCREEN')
  const proceed = hp.modal
    .frameLocator('[data-testid="coinbase-frame"]')
    .getByTestId('coinbase-continue')
  await expect.poll(() => proceed.isEnabled(), { timeout: 15_000 }).toBe(true)

  const modal = hp.page.frames().find((f) => f.url().startsWith(`${h().modalUrl}/?`))
  const coinbase = hp.page
    .frames()
    .find((f) => f.url().startsWith(`${h().connectorUrl}/coinbase.html`))
  if (!modal || !coinbase) throw new Error("the modal or Coinbase Wallet's frame is missing")
  expect(coinbase.parentFrame()).toBe(modal)
  // The SDK is there, in that frame only.
  expect(await coinbase.evaluate(() => document.querySelectorAll('button').length)).toBe(1)

  // The modal has something to steal: its session's cookie or storage.
  const held = await modal.evaluate(() => ({
    cookies: document.cookie
      .split(';')
      .map((c) => c.trim())
      .filter(Boolean),
    storage: Object.keys(localStorage),
  }))
  expect(held.cookies.length + held.storage.length).toBeGreaterThan(0)

  const hostUrl = hp.page.url()
  const reach = await coinbase.evaluate(async (apiBase) => {
    const attempt = (f: () => unknown): string => {
      try {
        return `read: ${String(f())}`
      } catch (e) {
        return e instanceof DOMException ? e.name : String(e)
      }
    }
    const call = async (path: string): Promise<string> => {
      try {
        const res = await fetch(`${apiBase}${path}`, {
          method: 'POST',
          credentials: 'include',
          body: '{}',
        })
        return `answered ${res.status}`
      } catch {
        return 'refused'
      }
    }
    let storageKeys: string[] = []
    try {
      storageKeys = Object.keys(localStorage)
    } catch {}
    let topNavigation = 'refused'
    try {
      const before = location.href
      window.top?.location.assign('about:blank#hijacked')
      topNavigation = before === location.href ? 'refused' : 'navigated'
    } catch {
      topNavigation = 'refused'
    }
    return {
      origin: self.origin,
      modalCookies: document.cookie
        .split(';')
        .map((c) => c.trim())
        .filter(Boolean),
      modalStorageKeys: storageKeys,
      parentDocument: attempt(() => parent.document.cookie),
      parentStorage: attempt(() => parent.localStorage.length),
      topNavigation,
      refresh: await call('/sessions'),
      fork: await call('/sessions/fork'),
    }
  }, `${h().apiUrl}${API_PREFIX}`)
  expect(reach.origin).toBe(h().connectorUrl)
  // Whatever the frame's own origin holds (the SDK's entries), none of it is the modal's.
  expect(reach.modalCookies.filter((c) => held.cookies.includes(c))).toEqual([])
  expect(reach.modalStorageKeys.filter((k) => held.storage.includes(k))).toEqual([])
  expect(reach.modalStorageKeys.filter((k) => k.startsWith('latch'))).toEqual([])
  expect({ ...reach, modalCookies: [], modalStorageKeys: [] }).toEqual({
    origin: h().connectorUrl,
    modalCookies: [],
    modalStorageKeys: [],
    parentDocument: 'SecurityError',
    parentStorage: 'SecurityError',
    topNavigation: 'refused',
    refresh: 'refused',
    fork: 'refused',
  } satisfies CoinbaseReach)
  expect(hp.page.url()).toBe(hostUrl)

  // Posted to the modal's window rather than over the handshake's port: ignored. A click
  // reported this way would start an attempt; the screen stays.
  await coinbase.evaluate(() => {
    parent.postMessage({ t: 'event', name: 'clicked', payload: null }, '*')
    parent.postMessage({ type: 'latch:coinbase:ready', nonce: location.hash.slice(1) }, '*')
  })
  await modal.evaluate(() => new Promise((r) => setTimeout(r, 300)))
  await visit(hp, 'COINBASE_INTERSTITIAL_SCREEN')
  expect(hp.page.frames().filter((f) => f.url().includes('/coinbase.html'))).toHaveLength(1)

  await hp.page.keyboard.press('Escape')
  await settle(linking, 'link(wallet)')
  const user = expectOk(await settle(latchCall<User | null>(hp.page, 'getUser'), 'getUser()'))
  expect(user?.email?.address).toMatch(/^cb-frame/)
})

/** Runs in the connector frame, as a hijacked SDK would. */
function reachFrom(frame: Frame, api: string): Promise<Reach> {
  return frame.evaluate(async (apiBase) => {
    const attempt = (f: () => unknown): string => {
      try {
        const value = f()
        return `read: ${String(value)}`
      } catch (e) {
        return e instanceof DOMException ? e.name : String(e)
      }
    }
    const call = async (path: string): Promise<string> => {
      try {
        // A simple request (no preflight) with every credential the browser would add.
        const res = await fetch(`${apiBase}${path}`, {
          method: 'POST',
          credentials: 'include',
          body: '{}',
        })
        return `answered ${res.status}`
      } catch {
        return 'refused'
      }
    }
    const indexedDBOpen = await new Promise<string>((resolve) => {
      try {
        const request = indexedDB.open('latch-probe')
        request.onsuccess = () => resolve('opened')
        request.onerror = () => resolve(request.error?.name ?? 'error')
      } catch (e) {
        resolve(e instanceof DOMException ? e.name : String(e))
      }
    })
    let topNavigation = 'refused'
    try {
      // Navigating the host page away: the sandbox has no allow-top-navigation.
      const before = location.href
      window.top?.location.assign('about:blank#hijacked')
      topNavigation = before === location.href ? 'refused' : 'navigated'
    } catch {
      topNavigation = 'refused'
    }
    return {
      origin: self.origin,
      cookie: attempt(() => document.cookie),
      localStorage: attempt(() => localStorage.length),
      sessionStorage: attempt(() => sessionStorage.length),
      indexedDB: indexedDBOpen,
      parentDocument: attempt(() => parent.document.cookie),
      parentStorage: attempt(() => parent.localStorage.length),
      topNavigation,
      // A window of its own (a phishing page outside the sandbox): no allow-popups.
      popup: window.open('about:blank#popup') === null ? 'blocked' : 'opened',
      refresh: await call('/sessions'),
      fork: await call('/sessions/fork'),
    }
  }, api)
}
