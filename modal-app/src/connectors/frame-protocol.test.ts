/**
 * The connector frame's contract (frame-protocol.ts) and the modal's side of it (frame-host.ts):
 * what either side takes from the other, the handshake that accepts only the modal's own
 * iframe, and the storage the modal keeps for the frame. The frame in Chromium is
 * e2e/src/connector-frame.spec.ts.
 */
import { afterEach, describe, expect, test, vi } from 'vitest'
import { frameOverPort, openConnectorFrame } from './frame-host.ts'
import {
  CONNECTOR_FRAME_SANDBOX,
  FRAME_PORT,
  FRAME_READY,
  isPortMessage,
  isReady,
  MAX_STORAGE_ENTRIES,
  parseEvent,
  parseFrameCall,
  parseModalCall,
  parseReply,
  parseState,
} from './frame-protocol.ts'
import { WalletConnectStorage } from './walletconnect.ts'
import { WALLETCONNECT_STORAGE_PREFIX } from './walletconnect-storage.ts'

const NONCE = '0123456789abcdef0123456789abcdef'
const ADDRESS = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8'
const STATE = { session: true, accounts: [ADDRESS], chainId: 1, peerName: 'Rainbow' }

afterEach(() => {
  vi.useRealTimers()
  localStorage.clear()
  document.body.replaceChildren()
})

describe('what the frame takes from the modal', () => {
  test('behavior: the four calls, requests of the allowed methods with list or object params', () => {
    const init = { projectId: 'abc', metadata: { name: 'Shop', url: 'https://shop.example/x' } }
    expect(parseModalCall({ t: 'call', id: 1, method: 'wc.init', args: init })).not.toBeNull()
    expect(parseModalCall({ t: 'call', id: 2, method: 'wc.connect', args: null })).not.toBeNull()
    expect(parseModalCall({ t: 'call', id: 3, method: 'wc.disconnect', args: null })).not.toBeNull()
    for (const [method, params] of [
      ['personal_sign', ['0x6869', ADDRESS]],
      ['eth_chainId', undefined],
      ['wallet_switchEthereumChain', [{ chainId: '0x1' }]],
      ['eth_sendTransaction', [{ to: ADDRESS }]],
    ] as const) {
      expect(
        parseModalCall({ t: 'call', id: 4, method: 'wc.request', args: { method, params } }),
      ).not.toBeNull()
    }
  })

  test('refusal: other calls, other wallet methods, bad params, bad ids, a bad init', () => {
    const refused = [
      null,
      'wc.connect',
      { t: 'call', id: 1, method: 'storage.getKeys', args: null },
      { t: 'call', id: 1, method: 'eval', args: 'alert(1)' },
      { t: 'call', id: 0, method: 'wc.connect', args: null },
      { t: 'call', id: 1.5, method: 'wc.connect', args: null },
      { t: 'call', id: '1', method: 'wc.connect', args: null },
      { t: 'reply', id: 1, method: 'wc.connect', args: null },
      { t: 'call', id: 1, method: 'wc.request', args: { method: 'eth_sign', params: [] } },
      { t: 'call', id: 1, method: 'wc.request', args: { method: 'wallet_addEthereumChain' } },
      { t: 'call', id: 1, method: 'wc.request', args: { method: 'personal_sign', params: 'x' } },
      { t: 'call', id: 1, method: 'wc.request', args: { method: 'personal_sign', params: null } },
      { t: 'call', id: 1, method: 'wc.request', args: ['personal_sign'] },
      { t: 'call', id: 1, method: 'wc.init', args: { projectId: 'a b', metadata: {} } },
      {
        t: 'call',
        id: 1,
        method: 'wc.init',
        args: { projectId: 'abc', metadata: { name: 'x', url: 'javascript:alert(1)' } },
      },
    ]
    for (const message of refused) expect(parseModalCall(message)).toBeNull()
  })
})

describe('what the modal takes from the frame', () => {
  test('behavior: replies with a value or an EIP-1193 error, a state that checks; events of the provider', () => {
    expect(parseReply({ t: 'reply', id: 1, ok: true, value: '0xsig', state: STATE })).toEqual({
      t: 'reply',
      id: 1,
      ok: true,
      value: '0xsig',
      state: STATE,
    })
    expect(
      parseReply({ t: 'reply', id: 2, ok: false, error: { code: 4001, message: 'no' } }),
    ).toMatchObject({ ok: false, error: { code: 4001, message: 'no' } })
    expect(parseEvent({ t: 'event', name: 'display_uri', payload: 'wc:ab@2?x=1' })).toMatchObject({
      name: 'display_uri',
      payload: 'wc:ab@2?x=1',
    })
    expect(parseEvent({ t: 'event', name: 'accountsChanged', payload: [ADDRESS] })).not.toBeNull()
  })

  test('refusal: a state with a bad account or chain, an error without text, an unknown event, a pairing URI that is not wc:, an oversized payload', () => {
    expect(parseState({ ...STATE, accounts: ['0xnope'] })).toBeNull()
    expect(parseState({ ...STATE, chainId: -1 })).toBeNull()
    expect(parseState({ ...STATE, session: 'yes' })).toBeNull()
    expect(parseReply({ t: 'reply', id: 1, ok: true, state: { ...STATE, chainId: 'x' } })).toBe(
      null,
    )
    expect(parseReply({ t: 'reply', id: 1, ok: false, error: { code: 1 } })).toBeNull()
    expect(parseReply({ t: 'reply', id: 1, ok: 'yes' })).toBeNull()
    expect(parseEvent({ t: 'event', name: 'message', payload: 'x' })).toBeNull()
    expect(parseEvent({ t: 'event', name: 'display_uri', payload: 'https://evil.example' })).toBe(
      null,
    )
    expect(parseEvent({ t: 'event', name: 'chainChanged', payload: 'x'.repeat(10_000) })).toBe(null)
  })

  test("refusal: storage calls on keys outside WalletConnect's names, values that are not JSON or too large", () => {
    const ok = {
      t: 'call',
      id: 1,
      method: 'storage.setItem',
      args: { key: 'wc@2:core', value: '{}' },
    }
    expect(parseFrameCall(ok)).not.toBeNull()
    expect(parseFrameCall({ t: 'call', id: 1, method: 'storage.getKeys', args: null })).not.toBe(
      null,
    )
    for (const args of [
      { key: 'a b', value: '1' },
      { key: '', value: '1' },
      { key: 'k'.repeat(201), value: '1' },
      { key: 'wc@2:core', value: 'not json' },
      { key: 'wc@2:core', value: 1 },
      { key: 'wc@2:core', value: JSON.stringify('x'.repeat(300 * 1024)) },
    ]) {
      expect(parseFrameCall({ t: 'call', id: 1, method: 'storage.setItem', args })).toBeNull()
    }
    expect(parseFrameCall({ t: 'call', id: 1, method: 'storage.clear', args: null })).toBeNull()
    expect(parseFrameCall({ t: 'call', id: 1, method: 'wc.request', args: {} })).toBeNull()
  })
})

describe('the handshake', () => {
  test('behavior: ready and port each carry the nonce; the port message exactly one port', () => {
    expect(isReady({ type: FRAME_READY, nonce: NONCE }, NONCE)).toBe(true)
    expect(isReady({ type: FRAME_READY, nonce: 'other' }, NONCE)).toBe(false)
    expect(isReady({ type: FRAME_READY, nonce: '' }, '')).toBe(false)
    expect(isPortMessage({ type: FRAME_PORT, nonce: NONCE }, NONCE, [{}])).toBe(true)
    expect(isPortMessage({ type: FRAME_PORT, nonce: NONCE }, NONCE, [])).toBe(false)
    expect(isPortMessage({ type: FRAME_PORT, nonce: 'x' }, NONCE, [{}])).toBe(false)
  })

  /** The frame the modal opened, its nonce, and the window it posts from. */
  function opened() {
    vi.useFakeTimers()
    const storage = new WalletConnectStorage()
    const pending = openConnectorFrame(storage, { appId: 'app_1', timeoutMs: 1000 })
    pending.catch(() => {})
    const iframe = document.querySelector('iframe') as HTMLIFrameElement
    const frameWindow = iframe.contentWindow as Window
    const nonce = new URL(iframe.src).hash.slice(1)
    const posted = vi.spyOn(frameWindow, 'postMessage').mockImplementation(() => {})
    const deliver = (data: unknown, source: Window | null, origin: string) =>
      window.dispatchEvent(new MessageEvent('message', { data, source, origin }))
    return { pending, iframe, frameWindow, nonce, posted, deliver }
  }

  test('behavior: the frame is sandboxed without the modal origin, at /connectors.html for the app, and gets its port only from its own ready', async () => {
    const { pending, iframe, frameWindow, nonce, posted, deliver } = opened()
    expect(iframe.getAttribute('sandbox')).toBe(CONNECTOR_FRAME_SANDBOX)
    expect(CONNECTOR_FRAME_SANDBOX).toBe('allow-scripts')
    const src = new URL(iframe.src)
    expect(src.pathname).toBe('/connectors.html')
    expect(src.searchParams.get('app')).toBe('app_1')
    expect(nonce).toMatch(/^[0-9a-f]{32}$/)
    deliver({ type: FRAME_READY, nonce }, frameWindow, 'null')
    const frame = await pending
    expect(frame.element).toBe(iframe)
    expect(posted).toHaveBeenCalledTimes(1)
    const [data, target, ports] = posted.mock.calls[0] as unknown as [unknown, string, unknown[]]
    expect(data).toEqual({ type: FRAME_PORT, nonce })
    expect(target).toBe('*')
    expect(ports).toHaveLength(1)
    frame.port.close(new Error('done'))
  })

  test('refusal: a ready from another window, another origin or with another nonce is ignored; without the frame’s own, the wait ends in unable_to_build_connector', async () => {
    const { pending, iframe, frameWindow, nonce, posted, deliver } = opened()
    // The host page (or any other window) posting to the modal with the right words.
    deliver({ type: FRAME_READY, nonce }, window.parent === window ? null : window.parent, 'null')
    deliver({ type: FRAME_READY, nonce }, window, 'null')
    // The frame's window, but a document with an origin: not the sandboxed page.
    deliver({ type: FRAME_READY, nonce }, frameWindow, 'https://evil.example')
    deliver({ type: FRAME_READY, nonce }, frameWindow, window.location.origin)
    // A document navigated into the frame does not know the nonce.
    deliver({ type: FRAME_READY, nonce: 'f'.repeat(32) }, frameWindow, 'null')
    deliver({ type: 'latch:connectors:port', nonce }, frameWindow, 'null')
    expect(posted).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1000)
    await expect(pending).rejects.toMatchObject({ code: 'unable_to_build_connector' })
    expect(iframe.isConnected).toBe(false)
  })
})

describe('the storage the modal keeps for the frame', () => {
  /** The frame's end of the port, speaking raw messages. */
  function frameEnd() {
    const channel = new MessageChannel()
    frameOverPort(channel.port1, new WalletConnectStorage())
    const replies: unknown[] = []
    channel.port2.onmessage = (e) => replies.push(e.data)
    const send = (message: unknown) => channel.port2.postMessage(message)
    const settled = () => new Promise((r) => setTimeout(r, 50))
    return { replies, send, settled, close: () => channel.port2.close() }
  }

  test("behavior: the frame's entries live under WalletConnect's prefix, and it reads back only those", async () => {
    localStorage.setItem('latch:refresh', 'modal-secret')
    const f = frameEnd()
    f.send({
      t: 'call',
      id: 1,
      method: 'storage.setItem',
      args: { key: 'wc@2:core', value: '{"a":1}' },
    })
    f.send({ t: 'call', id: 2, method: 'storage.getKeys', args: null })
    f.send({ t: 'call', id: 3, method: 'storage.getItem', args: { key: 'wc@2:core' } })
    await f.settled()
    expect(localStorage.getItem(`${WALLETCONNECT_STORAGE_PREFIX}wc@2:core`)).toBe('{"a":1}')
    expect(f.replies).toEqual([
      { t: 'reply', id: 1, ok: true, value: null },
      { t: 'reply', id: 2, ok: true, value: ['wc@2:core'] },
      { t: 'reply', id: 3, ok: true, value: '{"a":1}' },
    ])
    f.close()
  })

  test("refusal: the modal's own entries stay out of reach (every key is WalletConnect's prefix plus the frame's name); wallet calls and malformed calls get no answer and write nothing; past the entry limit, an error", async () => {
    localStorage.setItem('latch:refresh', 'modal-secret')
    const f = frameEnd()
    f.send({ t: 'call', id: 1, method: 'storage.getItem', args: { key: 'latch:refresh' } })
    f.send({ t: 'call', id: 2, method: 'storage.removeItem', args: { key: '../latch:refresh' } })
    f.send({ t: 'call', id: 3, method: 'storage.setItem', args: { key: 'a b', value: '1' } })
    f.send({ t: 'call', id: 4, method: 'wc.request', args: { method: 'personal_sign' } })
    f.send({ t: 'call', id: 5, method: 'storage.clear', args: null })
    f.send('storage.getKeys')
    await f.settled()
    expect(f.replies).toEqual([
      { t: 'reply', id: 1, ok: true, value: null },
      { t: 'reply', id: 2, ok: true, value: null },
    ])
    expect(Object.keys(localStorage)).toEqual(['latch:refresh'])
    for (let i = 0; i < MAX_STORAGE_ENTRIES; i++) {
      localStorage.setItem(`${WALLETCONNECT_STORAGE_PREFIX}k${i}`, '1')
    }
    f.send({ t: 'call', id: 6, method: 'storage.setItem', args: { key: 'one-more', value: '1' } })
    await f.settled()
    expect(f.replies.slice(2)).toEqual([
      { t: 'reply', id: 6, ok: false, error: { message: 'WalletConnect storage is full' } },
    ])
    expect(localStorage.getItem(`${WALLETCONNECT_STORAGE_PREFIX}one-more`)).toBeNull()
    f.close()
  })
})
