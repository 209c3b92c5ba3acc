/**
 * The modal's side of the connector frame: WalletConnect's provider runs in connectors.html, an
 * iframe sandboxed without `allow-same-origin` (an opaque origin: the modal's cookies, storage
 * and credentials are out of its reach), and the modal talks to it through the narrow contract
 * of frame-protocol.ts. The frame's only call into the modal is WalletConnect's storage, which
 * the modal keeps under its `latch:wc:` prefix and nothing else (so a session still survives a
 * reload where the browser gives the modal storage, and logout forgets it).
 */
import { LatchError, WALLET_REQUEST_TIMEOUT_MS } from '@latch/shared'
import { type PortEnd, portEnd } from './frame-port.ts'
import {
  type CallMessage,
  CONNECTOR_FRAME_PATH,
  CONNECTOR_FRAME_SANDBOX,
  FRAME_HANDSHAKE_TIMEOUT_MS,
  FRAME_INIT_TIMEOUT_MS,
  FRAME_PORT,
  FRAME_REQUEST_METHODS,
  type FrameEventName,
  isReady,
  MAX_STORAGE_ENTRIES,
  type ProviderState,
  parseEvent,
  parseFrameCall,
  parseReply,
  type ReplyMessage,
} from './frame-protocol.ts'

/** WalletConnect's storage as the modal keeps it for the frame (walletconnect.ts). */
export interface FrameStorage {
  getKeys(): Promise<string[]>
  getItem<T>(key: string): Promise<T | undefined>
  setItem<T>(key: string, value: T): Promise<void>
  removeItem(key: string): Promise<void>
}

/** The frame as the modal holds it: its port, its events, the element. */
export interface ConnectorFrame {
  port: PortEnd
  onEvent(handler: (name: FrameEventName, payload: unknown, state?: ProviderState) => void): void
  /** The iframe (none for a frame served over a port in a test). */
  element?: HTMLIFrameElement
}

export const randomNonce = (): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')
}

export const frameGone = () => LatchError.of('unable_to_build_connector')

/**
 * Loads the frame and makes the handshake: the frame's `ready` is taken only from this
 * iframe's window, with the origin an opaque document has ('null') and the nonce of its URL;
 * anything else posted to the modal is ignored. The port goes only to that window.
 */
export function openConnectorFrame(
  storage: FrameStorage,
  options: {
    doc?: Document
    /** The page's app id: the frame's server answers frame-ancestors by it. */
    appId?: string | null
    timeoutMs?: number
  } = {},
): Promise<ConnectorFrame> {
  const doc = options.doc ?? document
  const win = doc.defaultView ?? window
  const nonce = randomNonce()
  const iframe = doc.createElement('iframe')
  iframe.setAttribute('sandbox', CONNECTOR_FRAME_SANDBOX)
  iframe.title = 'Wallet connection'
  iframe.hidden = true
  iframe.tabIndex = -1
  iframe.setAttribute('aria-hidden', 'true')
  iframe.setAttribute('data-testid', 'connector-frame')
  const src = new URL(CONNECTOR_FRAME_PATH, win.location.href)
  if (options.appId) src.searchParams.set('app', options.appId)
  src.hash = nonce
  iframe.src = src.href
  return frameHandshake({
    doc,
    iframe,
    nonce,
    // An opaque document posts with origin 'null' and is reached only with '*': the window is
    // checked to be this frame's, which just proved it holds the nonce.
    origin: 'null',
    target: '*',
    isReady,
    portType: FRAME_PORT,
    timeoutMs: options.timeoutMs ?? FRAME_HANDSHAKE_TIMEOUT_MS,
  }).then((port) => ({ ...frameOverPort(port, storage), element: iframe }))
}

/**
 * The handshake with a connector frame the modal appends to `doc`: its `ready` is taken only
 * from this iframe's window, with the origin `origin` and the nonce of its URL; anything else
 * posted to the modal is ignored. The port goes only to that window, at `target`. No `ready`
 * in time removes the iframe and fails with unable_to_build_connector.
 */
export function frameHandshake(options: {
  doc: Document
  iframe: HTMLIFrameElement
  nonce: string
  origin: string
  target: string
  isReady(data: unknown, nonce: string): boolean
  portType: string
  timeoutMs: number
  /** Where the iframe goes: the document's body unless given. */
  parent?: Element
}): Promise<MessagePort> {
  const { doc, iframe, nonce } = options
  const win = doc.defaultView ?? window
  return new Promise<MessagePort>((resolve, reject) => {
    const timer = setTimeout(() => {
      win.removeEventListener('message', onMessage)
      iframe.remove()
      reject(LatchError.of('unable_to_build_connector'))
    }, options.timeoutMs)
    function onMessage(event: MessageEvent): void {
      if (event.source !== iframe.contentWindow || event.origin !== options.origin) return
      if (!options.isReady(event.data, nonce)) return
      win.removeEventListener('message', onMessage)
      clearTimeout(timer)
      const channel = new MessageChannel()
      iframe.contentWindow?.postMessage({ type: options.portType, nonce }, options.target, [
        channel.port2,
      ])
      resolve(channel.port1)
    }
    win.addEventListener('message', onMessage)
    ;(options.parent ?? doc.body).append(iframe)
  })
}

/** The modal's end of the frame's port: its calls, its events, the storage it answers. */
export function frameOverPort(
  port: MessagePort,
  storage: FrameStorage,
): Omit<ConnectorFrame, 'element'> {
  const handlers = new Set<(n: FrameEventName, p: unknown, s?: ProviderState) => void>()
  const end = portEnd(port, {
    parseReply,
    parseCall: parseFrameCall,
    onCall: (call) => storageCall(storage, call),
    onOther(data) {
      const e = parseEvent(data)
      if (e) for (const handler of handlers) handler(e.name, e.payload, e.state)
    },
  })
  return { port: end, onEvent: (handler) => void handlers.add(handler) }
}

/** The frame's storage calls, on WalletConnect's own entries only. */
async function storageCall(storage: FrameStorage, call: CallMessage): Promise<unknown> {
  const args = call.args as { key: string; value?: string }
  switch (call.method) {
    case 'storage.getKeys':
      return storage.getKeys()
    case 'storage.getItem': {
      const value = await storage.getItem<unknown>(args.key)
      return value === undefined ? null : JSON.stringify(value)
    }
    case 'storage.setItem': {
      const keys = await storage.getKeys()
      if (!keys.includes(args.key) && keys.length >= MAX_STORAGE_ENTRIES) {
        throw new Error('WalletConnect storage is full')
      }
      await storage.setItem(args.key, JSON.parse(args.value ?? 'null'))
      return null
    }
    case 'storage.removeItem':
      await storage.removeItem(args.key)
      return null
    default:
      throw new Error('unknown call')
  }
}

let frame: Promise<ConnectorFrame> | null = null

/** The page's one connector frame, opened on first use; a failed start is tried afresh. */
export function connectorFrame(
  storage: FrameStorage,
  appId?: string | null,
): Promise<ConnectorFrame> {
  frame ??= openConnectorFrame(storage, { appId })
  frame.catch(() => {
    frame = null
  })
  return frame
}

/** A reply's value, or its error as the connectors read one (an EIP-1193 code and text). */
export function replyValue(reply: ReplyMessage): unknown {
  if (reply.ok) return reply.value
  const error = reply.error ?? { message: 'failed' }
  throw error.code === undefined ? new Error(error.message) : { ...error }
}

/** The WalletConnect provider calls and how long each may take. */
export const CALL_TIMEOUT_MS: Record<
  'wc.init' | 'wc.connect' | 'wc.request' | 'wc.disconnect',
  number
> = {
  'wc.init': FRAME_INIT_TIMEOUT_MS,
  // The connector's own timeout comes first; this one ends a call the frame never answers.
  'wc.connect': WALLET_REQUEST_TIMEOUT_MS + 5_000,
  'wc.request': WALLET_REQUEST_TIMEOUT_MS + 5_000,
  'wc.disconnect': 10_000,
}

/** Whether the frame may be asked `method` at all (frame-protocol.ts). */
export const frameMethodAllowed = (method: string): boolean => FRAME_REQUEST_METHODS.has(method)

/** Tests: the page's frame, e.g. one served over a port in the same document; null forgets it. */
export function setConnectorFrame(next: Promise<ConnectorFrame> | null): void {
  frame = next
}
