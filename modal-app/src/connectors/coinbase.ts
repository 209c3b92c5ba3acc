/**
 * Coinbase Wallet through its SDK (`@coinbase/wallet-sdk` v4): the list entry, and the modal's
 * side of the connector frame the SDK runs in (coinbase.html on the connector origin, an origin
 * of its own the modal server serves; coinbase-protocol.ts is the contract). Nothing of the SDK
 * runs in the modal's origin. The frame draws the Continue button: the SDK's popup opens only
 * inside a click in the frame itself, and the frame outlives the interstitial (the SDK keeps its
 * session with the popup there), so it is placed over the interstitial's slot rather than
 * inside it, and hidden, not removed, when the screen goes.
 */
import { LatchError, WALLET_REQUEST_TIMEOUT_MS } from '@latch/shared'
import { runtime } from '../runtime.ts'
import {
  COINBASE_FRAME_PATH,
  COINBASE_FRAME_SANDBOX,
  COINBASE_HANDSHAKE_TIMEOUT_MS,
  COINBASE_INIT_TIMEOUT_MS,
  COINBASE_PORT,
  COINBASE_REQUEST_METHODS,
  CONNECTOR_ORIGIN_META,
  type CoinbaseEventName,
  type CoinbaseInit,
  isCoinbaseReady,
  noCall,
  parseCoinbaseEvent,
  parseConnection,
} from './coinbase-protocol.ts'
import { firstAccount, walletEventListeners } from './eip1193.ts'
import { frameGone, frameHandshake, randomNonce, replyValue } from './frame-host.ts'
import { type PortEnd, portEnd } from './frame-port.ts'
import { parseReply } from './frame-protocol.ts'
import { withTimeout } from './injected.ts'
import type { Connection, ConnectionStatus, Connector } from './types.ts'

export const COINBASE_SDK_ID = 'latch:coinbase-wallet-sdk'

/**
 * The connector origin, from the modal page's meta tag (the modal server's setting): an http(s)
 * origin that is not the modal's own; null without one, and Coinbase Wallet is then not offered.
 */
export function connectorOrigin(doc: Document = document): string | null {
  const content = doc.querySelector<HTMLMetaElement>(
    `meta[name="${CONNECTOR_ORIGIN_META}"]`,
  )?.content
  if (!content || !URL.canParse(content)) return null
  const url = new URL(content)
  if (!/^https?:$/.test(url.protocol) || url.origin !== content.replace(/\/$/, '')) return null
  const own = doc.defaultView?.location.origin
  return url.origin === own ? null : url.origin
}

/** The frame as the modal holds it. */
export interface CoinbaseFrame {
  port: PortEnd
  onEvent(handler: (name: CoinbaseEventName, payload: unknown) => void): () => void
  /** The iframe (none for a frame served over a port in a test). */
  element?: HTMLIFrameElement
}

/** The modal's end of the frame's port: its calls and its checked events; it takes no call. */
export function coinbaseOverPort(port: MessagePort): Omit<CoinbaseFrame, 'element'> {
  const handlers = new Set<(name: CoinbaseEventName, payload: unknown) => void>()
  const end = portEnd(port, {
    parseReply,
    parseCall: noCall,
    onCall: () => Promise.reject(new Error('no calls')),
    onOther(data) {
      const e = parseCoinbaseEvent(data)
      if (e) for (const handler of [...handlers]) handler(e.name, e.payload)
    },
  })
  return {
    port: end,
    onEvent(handler) {
      handlers.add(handler)
      return () => void handlers.delete(handler)
    },
  }
}

/**
 * Loads the frame from the connector origin and makes the handshake: `ready` only from this
 * iframe's window at that origin with the nonce of its URL; the port only to that origin.
 */
export function openCoinbaseFrame(
  origin: string,
  options: { doc?: Document; appId?: string | null; timeoutMs?: number } = {},
): Promise<CoinbaseFrame> {
  const doc = options.doc ?? document
  const nonce = randomNonce()
  const iframe = doc.createElement('iframe')
  iframe.setAttribute('sandbox', COINBASE_FRAME_SANDBOX)
  iframe.setAttribute('data-testid', 'coinbase-frame')
  // A stop of the dialog's Tab cycle (App.tsx) while it is shown.
  iframe.className = 'latch-tab-stop'
  hideFrame(iframe)
  const src = new URL(COINBASE_FRAME_PATH, origin)
  if (options.appId) src.searchParams.set('app', options.appId)
  src.hash = nonce
  iframe.src = src.href
  return frameHandshake({
    doc,
    iframe,
    nonce,
    origin,
    target: origin,
    isReady: isCoinbaseReady,
    portType: COINBASE_PORT,
    timeoutMs: options.timeoutMs ?? COINBASE_HANDSHAKE_TIMEOUT_MS,
    // Inside the dialog: what lies outside an aria-modal dialog is hidden from assistive
    // technology, and its Tab cycle covers only its own elements.
    parent: doc.querySelector('.latch-modal') ?? doc.body,
  }).then((port) => ({ ...coinbaseOverPort(port), element: iframe }))
}

let frame: Promise<CoinbaseFrame> | null = null

/** The page's one Coinbase frame, opened on first use; a failed start is tried afresh. */
export function coinbaseFrame(): Promise<CoinbaseFrame> {
  if (!frame) {
    const origin = connectorOrigin()
    if (!origin) return Promise.reject(LatchError.of('unable_to_build_connector'))
    let appId: string | null = null
    try {
      appId = runtime().appId
    } catch {}
    const opening = openCoinbaseFrame(origin, { appId })
    frame = opening
    opening.catch(() => {
      if (frame === opening) frame = null
    })
  }
  return frame
}

/** Tests: the page's frame, e.g. one served over a port; null forgets it. */
export function setCoinbaseFrame(next: Promise<CoinbaseFrame> | null): void {
  frame = next
}

/** Starts the SDK in the frame and draws its Continue button with the modal's words and look. */
export async function initCoinbaseFrame(init: CoinbaseInit): Promise<CoinbaseFrame> {
  const f = await coinbaseFrame()
  wire(f)
  replyValue(await f.port.call('cb.init', init, COINBASE_INIT_TIMEOUT_MS, frameGone))
  return f
}

function hideFrame(iframe: HTMLIFrameElement): void {
  iframe.title = ''
  iframe.tabIndex = -1
  iframe.setAttribute('aria-hidden', 'true')
  Object.assign(iframe.style, {
    // Out of the dialog's flow and clipping; placed by viewport coordinates.
    position: 'fixed',
    left: '0',
    top: '0',
    width: '1px',
    height: '1px',
    border: '0',
    visibility: 'hidden',
  })
}

/**
 * Shows the frame's Continue button over `slot` (the interstitial's place for it) until the
 * returned function hides it again; the frame itself lives on for the SDK's later requests.
 */
export function placeCoinbaseFrame(iframe: HTMLIFrameElement, slot: HTMLElement, title: string) {
  const win = slot.ownerDocument.defaultView ?? window
  const place = () => {
    const rect = slot.getBoundingClientRect()
    Object.assign(iframe.style, {
      left: `${rect.left}px`,
      top: `${rect.top}px`,
      width: `${rect.width}px`,
      height: `${rect.height}px`,
      visibility: 'visible',
    })
  }
  shownIn = slot.ownerDocument
  iframe.title = title
  iframe.removeAttribute('tabindex')
  iframe.removeAttribute('aria-hidden')
  place()
  const observer = typeof ResizeObserver === 'function' ? new ResizeObserver(place) : null
  observer?.observe(slot)
  observer?.observe(slot.ownerDocument.body)
  win.addEventListener('resize', place)
  win.addEventListener('scroll', place, true)
  return () => {
    observer?.disconnect()
    win.removeEventListener('resize', place)
    win.removeEventListener('scroll', place, true)
    // The visitor's click left the keyboard in the frame: give it back to the modal, whose
    // next screen (and its Escape) it belongs to.
    if (slot.ownerDocument.activeElement === iframe) {
      iframe.blur()
      win.focus()
    }
    hideFrame(iframe)
    shownIn = null
  }
}

const ICON =
  'data:image/svg+xml,%3Csvg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"%3E%3Ccircle cx="16" cy="16" r="16" fill="%230052FF"/%3E%3Crect x="11" y="11" width="10" height="10" rx="1.5" fill="%23fff"/%3E%3C/svg%3E'

/** The frame's wallet events go to the connector that connected last. */
let listening: ((name: CoinbaseEventName, payload: unknown) => void) | null = null
/** The interstitial's handler of the frame's `clicked`, while it is on screen. */
let onClicked: (() => void) | null = null
/** The document the frame's Continue is shown in, while it is. */
let shownIn: Document | null = null

/** While the interstitial is on screen: what a click on the frame's Continue does. */
export function whenCoinbaseClicked(handler: () => void): () => void {
  onClicked = handler
  return () => {
    if (onClicked === handler) onClicked = null
  }
}

const wired = new WeakSet<CoinbaseFrame>()
function wire(f: CoinbaseFrame): void {
  if (wired.has(f)) return
  wired.add(f)
  f.onEvent((name, payload) => {
    if (name === 'clicked') onClicked?.()
    else if (name === 'escape') {
      // As if pressed in the modal: its own Escape rule (App.tsx) decides.
      shownIn?.dispatchEvent(
        new (shownIn.defaultView ?? window).KeyboardEvent('keydown', { key: 'Escape' }),
      )
    } else listening?.(name, payload)
  })
}

/**
 * The list entry. Its connect() takes the connection the visitor's click on the frame's
 * Continue started (choose.ts shows the interstitial for it first; Retry goes back there), so
 * it is marked `needsFrameClick`. The SDK gets the app's name from the interstitial's
 * `cb.init`.
 */
export function coinbaseConnector(
  options: { timeoutMs?: number; frame?: () => Promise<CoinbaseFrame> } = {},
): Connector {
  const timeoutMs = options.timeoutMs ?? WALLET_REQUEST_TIMEOUT_MS
  const getFrame = options.frame ?? coinbaseFrame
  let status: ConnectionStatus = 'disconnected'
  let initialized = false
  const listeners = walletEventListeners()
  const onEvent = (name: CoinbaseEventName, payload: unknown) => {
    if (name === 'disconnect') status = 'disconnected'
    if (name === 'accountsChanged' || name === 'chainChanged') listeners.emit(name, payload)
    if (name === 'disconnect') listeners.emit(name, undefined)
  }
  const call = async (method: 'cb.connect' | 'cb.request', args: unknown) => {
    const f = await getFrame()
    wire(f)
    // The connector's own timeout comes first; the port's ends a call the frame never answers.
    const reply = await withTimeout(
      f.port.call(method, args, timeoutMs + 5_000, frameGone),
      timeoutMs,
    )
    return replyValue(reply)
  }
  return {
    id: COINBASE_SDK_ID,
    name: 'Coinbase Wallet',
    icon: ICON,
    type: 'coinbase_wallet',
    walletClientType: 'coinbase_wallet',
    needsFrameClick: true,
    get status() {
      return status
    },
    async connect(): Promise<Connection> {
      initialized = true
      status = 'connecting'
      listening = onEvent
      try {
        const connection = parseConnection(await call('cb.connect', null))
        if (!connection) throw LatchError.of('wallet_not_connected')
        status = 'connected'
        return { address: firstAccount([connection.address]), chainId: connection.chainId }
      } catch (e) {
        status = 'disconnected'
        throw e
      }
    },
    async request(method, params) {
      if (!initialized) throw LatchError.of('connector_not_initialized')
      if (status !== 'connected') throw LatchError.of('wallet_not_connected')
      if (!COINBASE_REQUEST_METHODS.has(method)) throw LatchError.of('rpc_unsupported_method')
      if (params !== undefined && (typeof params !== 'object' || params === null)) {
        throw LatchError.of('rpc_invalid_params')
      }
      return call('cb.request', params === undefined ? { method } : { method, params })
    },
    on: listeners.on,
  }
}

/** Wires a frame's events (tests: a frame served over a port). */
export const wireCoinbaseFrame = wire
