/**
 * The connector frame (connectors.html): WalletConnect's provider, in an opaque origin (the
 * page's CSP sandboxes it, and the modal's iframe too). It reads no cookie or storage of the
 * modal and holds no credential of the API; it talks only to the modal that framed it, over the
 * port of the handshake (frame-protocol.ts), and answers only the calls of that contract
 * (serve.ts).
 */
import { FRAME_READY, isPortMessage } from '../frame-protocol.ts'
import { walletConnectRelayUrl } from '../walletconnect-config.ts'
import { serveConnectorFrame } from './serve.ts'

const modalOrigin = new URL(location.href).origin
const nonce = location.hash.slice(1)
let served = false

/** The handshake: the port, once, from the parent at the modal's origin with our nonce. */
function onMessage(event: MessageEvent): void {
  if (served || event.source !== window.parent || event.origin !== modalOrigin) return
  if (!isPortMessage(event.data, nonce, event.ports)) return
  served = true
  window.removeEventListener('message', onMessage)
  serveConnectorFrame(event.ports[0] as MessagePort, walletConnectRelayUrl(document))
}

window.addEventListener('message', onMessage)
if (window.parent !== window) window.parent.postMessage({ type: FRAME_READY, nonce }, modalOrigin)
