/**
 * The message contract between the modal and Coinbase Wallet's connector frame (coinbase.html),
 * where `@coinbase/wallet-sdk` runs on the connector origin: an origin of its own that the modal
 * server serves on a second listener, never the modal's. Both sides read every message through
 * these checks and drop what does not fit.
 *
 * Why not the opaque frame WalletConnect runs in: the SDK names its own origin to its keys page
 * (the popup's `origin` parameter) and the page answers by postMessage to that origin, which an
 * opaque origin ('null') cannot be; and the popup opens only inside a click in the frame itself,
 * so the frame draws the Continue button the visitor clicks.
 *
 * The handshake: the frame, loaded with a random nonce in its fragment, posts `ready` with that
 * nonce to its parent at the modal's origin (its server names it); the modal takes it only from
 * its own iframe's window at the connector origin and answers `port` with the nonce and one
 * MessagePort, posted to the connector origin only. Everything after goes over that port:
 * the modal's calls (`cb.init`, `cb.connect`, `cb.request`) and their replies, and the frame's
 * events (`clicked`: the visitor pressed Continue and the SDK's popup opened in that click;
 * `escape`: the visitor pressed Escape with the keyboard in the frame; the wallet's `accountsChanged`, `chainChanged`, `disconnect`). The frame makes no call into
 * the modal.
 */
import { isSupportedChainId } from '@latch/shared'
import type { CallMessage } from './frame-protocol.ts'

/** Where the connector origin serves Coinbase Wallet's frame. */
export const COINBASE_FRAME_PATH = '/coinbase.html'

/**
 * The frame's sandbox: scripts, its own origin (the keys page must address it), and the popup
 * to the keys page, which must not inherit the sandbox (a sandboxed popup is an opaque origin
 * the SDK could not talk to). No forms, downloads, modals or navigation of the host page.
 */
export const COINBASE_FRAME_SANDBOX =
  'allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox'

/** The modal page's meta tag naming the connector origin (absent: no Coinbase Wallet). */
export const CONNECTOR_ORIGIN_META = 'latch-connector-origin'
/** The frame page's meta tag naming the modal's origin, the only parent it talks to. */
export const MODAL_ORIGIN_META = 'latch-modal-origin'
/** The frame page's meta tag naming the keys page (absent: the SDK's own). */
export const COINBASE_KEYS_META = 'latch-coinbase-keys-url'

export const COINBASE_READY = 'latch:coinbase:ready'
export const COINBASE_PORT = 'latch:coinbase:port'

/** How long the frame may take to load and answer the handshake. */
export const COINBASE_HANDSHAKE_TIMEOUT_MS = 15_000
/** How long the frame may take to load the SDK and build its provider. */
export const COINBASE_INIT_TIMEOUT_MS = 30_000

/** What the frame's wallet may be asked after the connection (the SIWE signature and the rest). */
export const COINBASE_REQUEST_METHODS: ReadonlySet<string> = new Set([
  'eth_accounts',
  'eth_chainId',
  'personal_sign',
  'eth_signTypedData_v4',
  'eth_sendTransaction',
  'wallet_switchEthereumChain',
])

export type CoinbaseCallMethod = 'cb.init' | 'cb.connect' | 'cb.request'
const CALLS: ReadonlySet<string> = new Set<CoinbaseCallMethod>([
  'cb.init',
  'cb.connect',
  'cb.request',
])

export type CoinbaseEventName =
  | 'clicked'
  | 'escape'
  | 'accountsChanged'
  | 'chainChanged'
  | 'disconnect'
const EVENTS: ReadonlySet<string> = new Set<CoinbaseEventName>([
  'clicked',
  'escape',
  'accountsChanged',
  'chainChanged',
  'disconnect',
])

/** The Continue button as the modal draws its own primary button (computed style values). */
export interface ButtonLook {
  background: string
  color: string
  borderRadius: string
  fontFamily: string
  fontSize: string
  fontWeight: string
}
const LOOK_KEYS = [
  'background',
  'color',
  'borderRadius',
  'fontFamily',
  'fontSize',
  'fontWeight',
] as const

/** What the modal starts the frame with: the SDK's settings and the button's words and look. */
export interface CoinbaseInit {
  appName: string
  chainId: number
  /** The button's text (the message table's, in the modal's language) and its busy text. */
  label: string
  busyLabel: string
  lang: string
  dir: 'ltr' | 'rtl'
  look: ButtonLook | null
}

export interface CoinbaseEvent {
  name: CoinbaseEventName
  payload: unknown
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const isText = (v: unknown, max: number): v is string =>
  typeof v === 'string' &&
  v.length > 0 &&
  v.length <= max &&
  ![...v].some((c) => (c.codePointAt(0) ?? 0) < 0x20)

/** A style value for one CSSOM property: nothing that could load a resource or end the value. */
const LOOK_VALUE = /^[\w\s#%.,'"()+-]{1,200}$/
const isLookValue = (v: unknown): v is string =>
  typeof v === 'string' && LOOK_VALUE.test(v) && !/url\s*\(|image|expression/i.test(v)

const LANG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/

export function parseLook(v: unknown): ButtonLook | null {
  if (!isRecord(v)) return null
  const look: Partial<ButtonLook> = {}
  for (const key of LOOK_KEYS) {
    const value = v[key]
    if (!isLookValue(value)) return null
    look[key] = value
  }
  return look as ButtonLook
}

export function parseInit(v: unknown): CoinbaseInit | null {
  if (!isRecord(v)) return null
  const { appName, chainId, label, busyLabel, lang, dir } = v
  if (!isText(appName, 200) || !isSupportedChainId(chainId)) return null
  if (!isText(label, 100) || !isText(busyLabel, 100)) return null
  if (typeof lang !== 'string' || !LANG.test(lang) || (dir !== 'ltr' && dir !== 'rtl')) return null
  const look = v.look === null ? null : parseLook(v.look)
  if (v.look !== null && look === null) return null
  return { appName, chainId, label, busyLabel, lang, dir, look }
}

/** The handshake's `ready` from the frame: its nonce must be `nonce`. */
export function isCoinbaseReady(data: unknown, nonce: string): boolean {
  return (
    isRecord(data) && data.type === COINBASE_READY && data.nonce === nonce && nonce.length >= 32
  )
}

/** The handshake's `port` from the modal: its nonce must be `nonce`, with exactly one port. */
export function isCoinbasePort(data: unknown, nonce: string, ports: readonly unknown[]): boolean {
  return (
    isRecord(data) &&
    data.type === COINBASE_PORT &&
    data.nonce === nonce &&
    nonce.length >= 32 &&
    ports.length === 1
  )
}

/** A call of the modal, as the frame takes it; null for anything else. */
export function parseCoinbaseCall(v: unknown): CallMessage<CoinbaseCallMethod> | null {
  if (!isRecord(v) || v.t !== 'call' || typeof v.method !== 'string' || !CALLS.has(v.method)) {
    return null
  }
  if (!Number.isSafeInteger(v.id) || (v.id as number) <= 0) return null
  const call = {
    t: 'call',
    id: v.id as number,
    method: v.method as CoinbaseCallMethod,
    args: v.args,
  }
  if (call.method === 'cb.init' && parseInit(call.args) === null) return null
  if (call.method === 'cb.request') {
    const args = call.args
    if (!isRecord(args) || typeof args.method !== 'string') return null
    if (!COINBASE_REQUEST_METHODS.has(args.method)) return null
    if (args.params !== undefined && (typeof args.params !== 'object' || args.params === null)) {
      return null
    }
  }
  return call as CallMessage<CoinbaseCallMethod>
}

/** The modal takes no call from this frame. */
export const noCall = (): null => null

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const CHAIN = /^0x[0-9a-fA-F]{1,16}$/

/** An event of the frame, as the modal takes it; null for anything else. */
export function parseCoinbaseEvent(v: unknown): CoinbaseEvent | null {
  if (!isRecord(v) || v.t !== 'event' || typeof v.name !== 'string' || !EVENTS.has(v.name)) {
    return null
  }
  const name = v.name as CoinbaseEventName
  const p = v.payload
  switch (name) {
    case 'clicked':
    case 'escape':
    case 'disconnect':
      return p === null ? { name, payload: null } : null
    case 'accountsChanged':
      return Array.isArray(p) &&
        p.length <= 16 &&
        p.every((a) => typeof a === 'string' && ADDRESS.test(a))
        ? { name, payload: [...p] }
        : null
    case 'chainChanged':
      return typeof p === 'string' && CHAIN.test(p) ? { name, payload: p } : null
  }
}

/** What `cb.connect` answers: the account and the chain of the connection the click started. */
export function parseConnection(v: unknown): { address: string; chainId: number } | null {
  if (!isRecord(v) || typeof v.address !== 'string' || !ADDRESS.test(v.address)) return null
  if (!isSupportedChainId(v.chainId)) return null
  return { address: v.address, chainId: v.chainId }
}
