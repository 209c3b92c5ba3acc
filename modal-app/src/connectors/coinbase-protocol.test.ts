/**
 * Coinbase Wallet's connector frame contract (coinbase-protocol.ts), both sides: what the frame
 * takes from the modal, what the modal takes from the frame, the handshake that accepts only the
 * modal's own iframe at the connector origin, and the frame's side over a port (the click that
 * starts the connection, calls outside the contract dropped).
 */
import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { coinbaseConnector, coinbaseOverPort, openCoinbaseFrame } from './coinbase.ts'
import {
  COINBASE_FRAME_SANDBOX,
  COINBASE_PORT,
  COINBASE_READY,
  type CoinbaseInit,
  isCoinbasePort,
  isCoinbaseReady,
  parseCoinbaseCall,
  parseCoinbaseEvent,
  parseConnection,
  parseInit,
} from './coinbase-protocol.ts'
import { serveCoinbaseFrame } from './frame/coinbase-serve.ts'

const account = privateKeyToAccount(
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
)
const ORIGIN = 'https://connect.example.test'
const INIT: CoinbaseInit = {
  appName: 'Shop',
  chainId: 1,
  label: 'Continue',
  busyLabel: 'Loading…',
  lang: 'pt-BR',
  dir: 'ltr',
  look: {
    background: 'rgb(17, 24, 39)',
    color: 'rgb(255, 255, 255)',
    borderRadius: '8px',
    fontFamily: '"Inter", system-ui, sans-serif',
    fontSize: '15px',
    fontWeight: '600',
  },
}
const call = (method: string, args: unknown, id = 1) => ({ t: 'call', id, method, args })

afterEach(() => {
  vi.useRealTimers()
  document.body.innerHTML = ''
})

describe('what the frame takes from the modal', () => {
  test('behavior: init with its words and look, connect, requests of the allowed methods', () => {
    expect(parseCoinbaseCall(call('cb.init', INIT))?.method).toBe('cb.init')
    expect(parseInit({ ...INIT, look: null, dir: 'rtl', lang: 'ar' })).toMatchObject({ dir: 'rtl' })
    expect(parseCoinbaseCall(call('cb.connect', null))?.method).toBe('cb.connect')
    for (const method of ['personal_sign', 'eth_chainId', 'eth_signTypedData_v4']) {
      expect(parseCoinbaseCall(call('cb.request', { method, params: ['0x00'] }))).not.toBeNull()
    }
  })

  test('refusal: other calls, methods outside the contract, bad params or ids, an init with a look that could load something or a label out of bounds', () => {
    expect(parseCoinbaseCall(call('wc.init', INIT))).toBeNull()
    expect(parseCoinbaseCall(call('storage.getItem', { key: 'x' }))).toBeNull()
    expect(parseCoinbaseCall({ ...call('cb.connect', null), id: 0 })).toBeNull()
    expect(parseCoinbaseCall({ ...call('cb.connect', null), t: 'reply' })).toBeNull()
    // eth_requestAccounts only from the frame's own click: never asked by the modal.
    for (const method of ['eth_requestAccounts', 'wallet_addEthereumChain', 'eth_sign']) {
      expect(parseCoinbaseCall(call('cb.request', { method }))).toBeNull()
    }
    expect(
      parseCoinbaseCall(call('cb.request', { method: 'personal_sign', params: 'x' })),
    ).toBeNull()
    const bad: Partial<Record<keyof CoinbaseInit, unknown>>[] = [
      { appName: '' },
      { chainId: 999_999 },
      { label: 'x'.repeat(101) },
      { label: 'a\nb' },
      { lang: 'en"><script>' },
      { dir: 'up' },
      { look: { ...INIT.look, background: 'url(https://evil.example/x)' } },
      { look: { ...INIT.look, fontFamily: 'a; background-image: image-set("x")' } },
      { look: { ...INIT.look, color: undefined } },
    ]
    for (const change of bad) expect(parseInit({ ...INIT, ...change })).toBeNull()
    expect(parseCoinbaseCall(call('cb.init', { ...INIT, chainId: 0 }))).toBeNull()
  })
})

describe('what the modal takes from the frame', () => {
  test('behavior: the click, the wallet events, a connection with an address and a supported chain', () => {
    expect(parseCoinbaseEvent({ t: 'event', name: 'clicked', payload: null })?.name).toBe('clicked')
    expect(parseCoinbaseEvent({ t: 'event', name: 'escape', payload: null })?.name).toBe('escape')
    expect(
      parseCoinbaseEvent({ t: 'event', name: 'accountsChanged', payload: [account.address] }),
    ).toEqual({ name: 'accountsChanged', payload: [account.address] })
    expect(parseCoinbaseEvent({ t: 'event', name: 'chainChanged', payload: '0x89' })).not.toBeNull()
    expect(parseConnection({ address: account.address, chainId: 137 })).toEqual({
      address: account.address,
      chainId: 137,
    })
  })

  test('refusal: unknown events, payloads that are not addresses or hex chains, a connection without an address or on an unsupported chain', () => {
    expect(parseCoinbaseEvent({ t: 'event', name: 'display_uri', payload: 'wc:x' })).toBeNull()
    expect(parseCoinbaseEvent({ t: 'event', name: 'clicked', payload: 'now' })).toBeNull()
    expect(parseCoinbaseEvent({ t: 'event', name: 'accountsChanged', payload: ['bob'] })).toBeNull()
    expect(parseCoinbaseEvent({ t: 'event', name: 'chainChanged', payload: 137 })).toBeNull()
    expect(parseConnection({ address: '0x12', chainId: 1 })).toBeNull()
    expect(parseConnection({ address: account.address, chainId: 999_999 })).toBeNull()
  })
})

describe('the handshake', () => {
  test('behavior: ready and port each carry the nonce; the port message exactly one port', () => {
    const nonce = 'a'.repeat(32)
    expect(isCoinbaseReady({ type: COINBASE_READY, nonce }, nonce)).toBe(true)
    expect(isCoinbaseReady({ type: COINBASE_READY, nonce: 'short' }, 'short')).toBe(false)
    expect(isCoinbasePort({ type: COINBASE_PORT, nonce }, nonce, [{}])).toBe(true)
    expect(isCoinbasePort({ type: COINBASE_PORT, nonce }, nonce, [])).toBe(false)
    expect(isCoinbasePort({ type: 'latch:connectors:port', nonce }, nonce, [{}])).toBe(false)
  })

  function opened() {
    vi.useFakeTimers()
    document.body.innerHTML = '<div class="latch-modal"></div>'
    const pending = openCoinbaseFrame(ORIGIN, { appId: 'app_1', timeoutMs: 1000 })
    pending.catch(() => {})
    const iframe = document.querySelector('iframe') as HTMLIFrameElement
    const frameWindow = iframe.contentWindow as Window
    const nonce = new URL(iframe.src).hash.slice(1)
    const posted = vi.spyOn(frameWindow, 'postMessage').mockImplementation(() => {})
    const deliver = (data: unknown, source: Window | null, origin: string) =>
      window.dispatchEvent(new MessageEvent('message', { data, source, origin }))
    return { pending, iframe, frameWindow, nonce, posted, deliver }
  }

  test('behavior: the frame is on the connector origin at /coinbase.html for the app, sandboxed with its own origin and popups, and gets its port, addressed to that origin, only from its own ready', async () => {
    const { pending, iframe, frameWindow, nonce, posted, deliver } = opened()
    expect(iframe.getAttribute('sandbox')).toBe(COINBASE_FRAME_SANDBOX)
    const src = new URL(iframe.src)
    expect(src.origin).toBe(ORIGIN)
    expect(src.pathname).toBe('/coinbase.html')
    expect(src.searchParams.get('app')).toBe('app_1')
    expect(nonce).toMatch(/^[0-9a-f]{32}$/)
    // Inside the dialog (aria-modal hides what is outside), hidden until the interstitial
    // places it.
    expect(iframe.parentElement?.className).toBe('latch-modal')
    expect(iframe.getAttribute('aria-hidden')).toBe('true')
    expect(iframe.tabIndex).toBe(-1)
    deliver({ type: COINBASE_READY, nonce }, frameWindow, ORIGIN)
    const frame = await pending
    expect(frame.element).toBe(iframe)
    const [data, target, ports] = posted.mock.calls[0] as unknown as [unknown, string, unknown[]]
    expect(data).toEqual({ type: COINBASE_PORT, nonce })
    expect(target).toBe(ORIGIN)
    expect(ports).toHaveLength(1)
    frame.port.close(new Error('done'))
  })

  test('refusal: a ready from another window, another origin (the modal’s own, an opaque one) or with another nonce is ignored; without the frame’s own, the wait ends in unable_to_build_connector', async () => {
    const { pending, iframe, frameWindow, nonce, posted, deliver } = opened()
    deliver({ type: COINBASE_READY, nonce }, window, ORIGIN)
    deliver({ type: COINBASE_READY, nonce }, frameWindow, window.location.origin)
    deliver({ type: COINBASE_READY, nonce }, frameWindow, 'null')
    deliver({ type: COINBASE_READY, nonce }, frameWindow, 'https://evil.example')
    deliver({ type: COINBASE_READY, nonce: 'f'.repeat(32) }, frameWindow, ORIGIN)
    deliver({ type: 'latch:connectors:ready', nonce }, frameWindow, ORIGIN)
    expect(posted).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1000)
    await expect(pending).rejects.toMatchObject({ code: 'unable_to_build_connector' })
    expect(iframe.isConnected).toBe(false)
  })
})

describe('the frame over a port', () => {
  function served(wallet: { asked: string[] }) {
    const doc = document.implementation.createHTMLDocument('')
    const channel = new MessageChannel()
    serveCoinbaseFrame(channel.port2, {
      doc,
      trusted: () => true,
      load: async () => () => ({
        async request({ method }) {
          wallet.asked.push(method)
          if (method === 'eth_requestAccounts') return [account.address.toLowerCase()]
          if (method === 'eth_chainId') return '0x1'
          if (method === 'personal_sign') return '0xsigned'
          throw { code: 4200, message: 'Unsupported' }
        },
        on: () => {},
      }),
    })
    const frame = coinbaseOverPort(channel.port1)
    return { doc, channel, frame }
  }
  /** Time for messages that must not come (a port delivers within it on any machine). */
  const settle = () => new Promise((r) => setTimeout(r, 200))

  test("behavior: init draws the button in the modal's words and language; only a click in it asks the wallet, and cb.connect answers that connection; later requests pass", async () => {
    const wallet = { asked: [] as string[] }
    const { doc, channel, frame } = served(wallet)
    const events: string[] = []
    frame.onEvent((name) => events.push(name))
    const init = await frame.port.call('cb.init', INIT, 1000, () => new Error('timeout'))
    expect(init.ok).toBe(true)
    const button = doc.querySelector('button') as HTMLButtonElement
    expect(button.textContent).toBe('Continue')
    expect(button.disabled).toBe(false)
    expect(doc.documentElement.lang).toBe('pt-BR')
    expect(button.style.getPropertyValue('border-radius')).toBe('8px')
    // Without the click, no connection: the modal cannot ask for the accounts itself.
    const early = await frame.port.call('cb.connect', null, 1000, () => new Error('timeout'))
    expect(early).toMatchObject({ ok: false, error: { code: 4100 } })
    expect(wallet.asked).toEqual([])
    button.click()
    expect(wallet.asked).toEqual(['eth_requestAccounts'])
    expect(button.disabled).toBe(true)
    await vi.waitFor(() => expect(events).toEqual(['clicked']), { timeout: 5000 })
    const connector = coinbaseConnector({ frame: async () => frame })
    await expect(connector.connect()).resolves.toEqual({ address: account.address, chainId: 1 })
    expect(button.disabled).toBe(false)
    await expect(connector.request('personal_sign', ['0x00', account.address])).resolves.toBe(
      '0xsigned',
    )
    // Refused before it leaves the modal; the frame would drop it too.
    await expect(connector.request('eth_requestAccounts')).rejects.toMatchObject({
      code: 'rpc_unsupported_method',
    })
    expect(wallet.asked).toEqual(['eth_requestAccounts', 'eth_chainId', 'personal_sign'])
    channel.port1.close()
  })

  test('refusal: calls outside the contract get no answer and reach no wallet; an untrusted click asks nothing', async () => {
    const wallet = { asked: [] as string[] }
    const doc = document.implementation.createHTMLDocument('')
    const channel = new MessageChannel()
    serveCoinbaseFrame(channel.port2, {
      doc,
      load: async () => () => ({
        async request({ method }) {
          wallet.asked.push(method)
          return []
        },
        on: () => {},
      }),
    })
    const replies: unknown[] = []
    channel.port1.onmessage = (e) => replies.push(e.data)
    channel.port1.postMessage(call('cb.init', INIT, 1))
    await vi.waitFor(() => expect(replies).toHaveLength(1), { timeout: 5000 })
    channel.port1.postMessage(call('cb.request', { method: 'eth_requestAccounts' }, 2))
    channel.port1.postMessage(call('storage.getKeys', null, 3))
    channel.port1.postMessage({
      t: 'call',
      id: 4,
      method: 'cb.request',
      args: { method: 'eth_sign' },
    })
    await settle()
    expect(replies).toEqual([{ t: 'reply', id: 1, ok: true, value: null }])
    // A script's click (the SDK's own, or the test's): not the visitor's.
    ;(doc.querySelector('button') as HTMLButtonElement).click()
    await settle()
    expect(wallet.asked).toEqual([])
    channel.port1.close()
  })
})
