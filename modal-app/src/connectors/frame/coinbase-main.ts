/**
 * Coinbase Wallet's connector frame (coinbase.html), on the connector origin: its own origin,
 * never the modal's, so the SDK reads none of the modal's cookies or storage and holds no
 * credential of the API. It talks only to the modal its server names, over the port of the
 * handshake (coinbase-protocol.ts), and answers only the calls of that contract
 * (coinbase-serve.ts).
 */
import './coinbase-frame.css'
import {
  COINBASE_KEYS_META,
  COINBASE_READY,
  isCoinbasePort,
  MODAL_ORIGIN_META,
} from '../coinbase-protocol.ts'
import { serveCoinbaseFrame } from './coinbase-serve.ts'

const meta = (name: string): string | null =>
  document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? null

/** An http(s) URL from this page's server, or null. */
const httpUrl = (value: string | null): URL | null =>
  value && URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) ? new URL(value) : null

const modalOrigin = httpUrl(meta(MODAL_ORIGIN_META))?.origin ?? null
const keysUrl = httpUrl(meta(COINBASE_KEYS_META))?.href
const nonce = location.hash.slice(1)
let served = false

/** The handshake: the port, once, from the parent at the modal's origin with our nonce. */
function onMessage(event: MessageEvent): void {
  if (served || event.source !== window.parent || event.origin !== modalOrigin) return
  if (!isCoinbasePort(event.data, nonce, event.ports)) return
  served = true
  window.removeEventListener('message', onMessage)
  serveCoinbaseFrame(event.ports[0] as MessagePort, {
    doc: document,
    ...(keysUrl ? { keysUrl } : {}),
  })
}

if (modalOrigin && window.parent !== window) {
  window.addEventListener('message', onMessage)
  window.parent.postMessage({ type: COINBASE_READY, nonce }, modalOrigin)
}
