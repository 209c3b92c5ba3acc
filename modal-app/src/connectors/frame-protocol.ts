/**
 * The message contract between the modal and its connector frame (connectors.html), where the
 * third-party wallet SDKs run in an opaque origin: no cookie, storage or credentials of the
 * modal's. Both sides read every message through these checks and drop what does not fit.
 *
 * The handshake goes by window messages: the frame, loaded with a random nonce in its
 * fragment, posts `ready` with that nonce to its parent at the modal's origin; the modal takes
 * it only from its own iframe's window (origin 'null') and answers `port` with the nonce and one
 * MessagePort. Everything after goes over that port: calls (`{t: 'call', id, method, args}`),
 * their replies (`{t: 'reply', id, ok, value | error, state}`) and the frame's events.
 */

/** Where the modal server serves the connector page. */
export const CONNECTOR_FRAME_PATH = '/connectors.html'

/**
 * The sandbox of the connector frame: scripts only. Never the modal's origin; no popups, forms,
 * downloads, modals or navigation of the host page (WalletConnect needs none of them: the modal
 * shows the pairing and the phone links itself).
 */
export const CONNECTOR_FRAME_SANDBOX = 'allow-scripts'

export const FRAME_READY = 'latch:connectors:ready'
export const FRAME_PORT = 'latch:connectors:port'

/** How long the frame may take to load and answer the handshake. */
export const FRAME_HANDSHAKE_TIMEOUT_MS = 15_000
/** How long the frame may take to start WalletConnect's provider (its relay's first answer). */
export const FRAME_INIT_TIMEOUT_MS = 30_000
/** How long the modal may take to answer a storage call of the frame. */
export const FRAME_STORAGE_TIMEOUT_MS = 10_000

/**
 * What the frame's wallets may be asked: the connection, the SIWE signature, and what an
 * external wallet's provider needs. Anything else is refused on both sides.
 */
export const FRAME_REQUEST_METHODS: ReadonlySet<string> = new Set([
  'eth_accounts',
  'eth_chainId',
  'eth_requestAccounts',
  'personal_sign',
  'eth_signTypedData_v4',
  'eth_sendTransaction',
  'wallet_switchEthereumChain',
])

/** The calls the modal makes to the frame. */
export type ModalCallMethod = 'wc.init' | 'wc.connect' | 'wc.request' | 'wc.disconnect'
const MODAL_CALLS: ReadonlySet<string> = new Set<ModalCallMethod>([
  'wc.init',
  'wc.connect',
  'wc.request',
  'wc.disconnect',
])

/** The calls the frame makes to the modal: WalletConnect's storage, kept by the modal. */
export type FrameCallMethod =
  | 'storage.getKeys'
  | 'storage.getItem'
  | 'storage.setItem'
  | 'storage.removeItem'
const FRAME_CALLS: ReadonlySet<string> = new Set<FrameCallMethod>([
  'storage.getKeys',
  'storage.getItem',
  'storage.setItem',
  'storage.removeItem',
])

/** The provider's events the frame passes on. */
export type FrameEventName = 'display_uri' | 'accountsChanged' | 'chainChanged' | 'disconnect'
const FRAME_EVENTS: ReadonlySet<string> = new Set<FrameEventName>([
  'display_uri',
  'accountsChanged',
  'chainChanged',
  'disconnect',
])

/** What the modal knows of the frame's WalletConnect session, sent with each reply and event. */
export interface ProviderState {
  session: boolean
  accounts: string[]
  chainId: number
  peerName: string | null
}

export interface CallMessage<M extends string = string> {
  t: 'call'
  id: number
  method: M
  args: unknown
}

export interface ReplyMessage {
  t: 'reply'
  id: number
  ok: boolean
  value?: unknown
  /** An EIP-1193 error's code and text, or our own text. */
  error?: { code?: number; message: string }
  state?: ProviderState
}

export interface EventMessage {
  t: 'event'
  name: FrameEventName
  payload: unknown
  state?: ProviderState
}

/** A WalletConnect storage key: the provider's own names, printable and short. */
const STORAGE_KEY = /^[\w:.@/-]{1,200}$/
/** One stored value, as JSON: a session and its keys are a few KB. */
export const MAX_STORAGE_VALUE_CHARS = 256 * 1024
/** Entries the frame may keep in the modal's storage at once. */
export const MAX_STORAGE_ENTRIES = 256
/** A pairing URI, an address list, a chain id: no event carries more. */
const MAX_EVENT_CHARS = 4096

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0

const ADDRESS = /^0x[0-9a-fA-F]{40}$/

/** A provider state as the frame sends it, or null. */
export function parseState(v: unknown): ProviderState | null {
  if (!isRecord(v)) return null
  const { session, accounts, chainId, peerName } = v
  if (typeof session !== 'boolean') return null
  if (!Array.isArray(accounts) || accounts.length > 16) return null
  if (!accounts.every((a) => typeof a === 'string' && ADDRESS.test(a))) return null
  if (!Number.isSafeInteger(chainId) || (chainId as number) < 0) return null
  if (peerName !== null && (typeof peerName !== 'string' || peerName.length > 200)) return null
  return { session, accounts: accounts as string[], chainId: chainId as number, peerName }
}

/** The handshake's `ready` from the frame, or null: its nonce must be `nonce`. */
export function isReady(data: unknown, nonce: string): boolean {
  return isRecord(data) && data.type === FRAME_READY && data.nonce === nonce && nonce.length >= 32
}

/** The handshake's `port` from the modal, or null: its nonce must be `nonce`. */
export function isPortMessage(data: unknown, nonce: string, ports: readonly unknown[]): boolean {
  return (
    isRecord(data) &&
    data.type === FRAME_PORT &&
    data.nonce === nonce &&
    nonce.length >= 32 &&
    ports.length === 1
  )
}

/** A reply to one of our calls, or null. */
export function parseReply(v: unknown): ReplyMessage | null {
  if (!isRecord(v) || v.t !== 'reply' || !isId(v.id) || typeof v.ok !== 'boolean') return null
  let state: ProviderState | undefined
  if (v.state !== undefined) {
    const parsed = parseState(v.state)
    if (!parsed) return null
    state = parsed
  }
  if (v.ok) return { t: 'reply', id: v.id, ok: true, value: v.value, ...(state ? { state } : {}) }
  const e = v.error
  if (!isRecord(e) || typeof e.message !== 'string') return null
  const code = Number.isSafeInteger(e.code) ? (e.code as number) : undefined
  return {
    t: 'reply',
    id: v.id,
    ok: false,
    error: { message: e.message.slice(0, 500), ...(code === undefined ? {} : { code }) },
    ...(state ? { state } : {}),
  }
}

/** An event of the frame, or null. */
export function parseEvent(v: unknown): EventMessage | null {
  if (!isRecord(v) || v.t !== 'event' || typeof v.name !== 'string') return null
  if (!FRAME_EVENTS.has(v.name)) return null
  const state = v.state === undefined ? undefined : parseState(v.state)
  if (state === null) return null
  const payload = v.payload
  if (v.name === 'display_uri' && (typeof payload !== 'string' || !payload.startsWith('wc:'))) {
    return null
  }
  try {
    if ((JSON.stringify(payload ?? null)?.length ?? 0) > MAX_EVENT_CHARS) return null
  } catch {
    return null
  }
  return { t: 'event', name: v.name as FrameEventName, payload, ...(state ? { state } : {}) }
}

function parseCall<M extends string>(
  v: unknown,
  methods: ReadonlySet<string>,
): CallMessage<M> | null {
  if (!isRecord(v) || v.t !== 'call' || !isId(v.id) || typeof v.method !== 'string') return null
  if (!methods.has(v.method)) return null
  return { t: 'call', id: v.id, method: v.method as M, args: v.args }
}

/** A call of the modal, as the frame takes it; null for anything else. */
export function parseModalCall(v: unknown): CallMessage<ModalCallMethod> | null {
  const call = parseCall<ModalCallMethod>(v, MODAL_CALLS)
  if (!call) return null
  if (call.method === 'wc.request') {
    const args = call.args
    if (!isRecord(args) || typeof args.method !== 'string') return null
    if (!FRAME_REQUEST_METHODS.has(args.method)) return null
    if (args.params !== undefined && (typeof args.params !== 'object' || args.params === null)) {
      return null
    }
  }
  if (call.method === 'wc.init' && parseInitArgs(call.args) === null) return null
  return call
}

/** What the modal starts the frame's WalletConnect provider with. */
export interface InitArgs {
  projectId: string
  metadata: { name: string; url: string }
}

const PROJECT_ID = /^[A-Za-z0-9_-]{1,128}$/

export function parseInitArgs(v: unknown): InitArgs | null {
  if (!isRecord(v) || typeof v.projectId !== 'string' || !PROJECT_ID.test(v.projectId)) {
    return null
  }
  const m = v.metadata
  if (!isRecord(m) || typeof m.name !== 'string' || typeof m.url !== 'string') return null
  if (m.name.length > 200 || !URL.canParse(m.url) || !/^https?:$/.test(new URL(m.url).protocol)) {
    return null
  }
  return { projectId: v.projectId, metadata: { name: m.name, url: new URL(m.url).origin } }
}

/** A storage call of the frame, as the modal takes it; null for anything else. */
export function parseFrameCall(v: unknown): CallMessage<FrameCallMethod> | null {
  const call = parseCall<FrameCallMethod>(v, FRAME_CALLS)
  if (!call) return null
  if (call.method === 'storage.getKeys') return call
  const args = call.args
  if (!isRecord(args) || typeof args.key !== 'string' || !STORAGE_KEY.test(args.key)) return null
  if (call.method === 'storage.setItem') {
    if (typeof args.value !== 'string' || args.value.length > MAX_STORAGE_VALUE_CHARS) return null
    try {
      JSON.parse(args.value)
    } catch {
      return null
    }
  }
  return call
}
