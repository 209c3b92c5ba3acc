/**
 * A local stand-in for Coinbase Wallet's keys page (the popup `@coinbase/wallet-sdk` v4 opens),
 * so the modal's Coinbase Wallet connector runs against every real piece but the wallet itself,
 * which lives outside the machine. The page speaks the SDK's popup protocol as its source
 * (Communicator, SCWSigner, cipher) has it:
 *
 * 1. The page posts `{event: 'PopupLoaded', id}` to its opener; the SDK answers
 *    `{requestId: id, data: {version, metadata, preference, location}}`.
 * 2. `{id, event: 'selectSignerType'}` is answered `{requestId: id, data: 'scw'}`.
 * 3. The handshake `{id, sender: <SDK P-256 public key, SPKI hex>, content: {handshake:
 *    {method: 'eth_requestAccounts'}}}` is answered with this page's own P-256 public key as
 *    `sender` and `content.encrypted` = AES-GCM under the ECDH secret of
 *    `{result: {value: [address]}}`.
 * 4. Every later request is `content.encrypted` `{action: {method, params}, chainId}`; the
 *    answer is encrypted the same way. personal_sign is signed in Node (exposeBinding) with a
 *    real key; `reject` answers 4001 instead.
 *
 * The page takes messages only from its opener and its origin (the SDK's `origin` query
 * parameter), and posts only to that origin. What it received is reported to Node (`log`), so a
 * test can check that no request crossed in the clear.
 */
import { createServer, type Server } from 'node:http'
import type { BrowserContext } from 'playwright-core'
import type { Hex } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'

export interface CoinbaseKeysPage {
  /** The keys URL the modal server is given (its `coinbaseKeysUrl`). */
  url: string
  close(): Promise<void>
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Coinbase Wallet keys (test stand-in)</title></head>
<body><main><h1>Coinbase Wallet</h1><p id="status">Waiting for the app</p></main>
<script type="module">
const origin = new URL(location.href).searchParams.get('origin')
const opener = window.opener
const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('')
const bytes = (h) => new Uint8Array(h.match(/.{1,2}/g).map((b) => Number.parseInt(b, 16)))
const own = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveKey'])
const ownPublic = hex(await crypto.subtle.exportKey('spki', own.publicKey))
let secret = null
const encrypt = async (content) => {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const cipherText = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, secret, new TextEncoder().encode(JSON.stringify(content)))
  return { iv, cipherText }
}
const decrypt = async ({ iv, cipherText }) =>
  JSON.parse(new TextDecoder().decode(await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, secret, cipherText)))
const answer = async (requestId, content) =>
  opener.postMessage({ id: crypto.randomUUID(), requestId, sender: ownPublic, content: { encrypted: await encrypt(content) }, timestamp: new Date() }, origin)
const result = async (action) => {
  const mode = await window.coinbaseKeys('mode')
  if (mode === 'reject') return { error: { code: 4001, message: 'User rejected the request.' } }
  if (action.method === 'eth_requestAccounts') return { value: [await window.coinbaseKeys('address')] }
  if (action.method === 'personal_sign') return { value: await window.coinbaseKeys('sign', action.params[0]) }
  return { error: { code: 4200, message: 'Unsupported method' } }
}
window.addEventListener('message', async (event) => {
  if (event.source !== opener || event.origin !== origin) return
  const m = event.data
  await window.coinbaseKeys('log', JSON.stringify(m, (k, v) => (v instanceof ArrayBuffer || ArrayBuffer.isView(v) ? '<bytes>' : v)))
  if (m.event === 'selectSignerType') {
    opener.postMessage({ requestId: m.id, data: 'scw' }, origin)
  } else if (m.content && m.content.handshake) {
    const peer = await crypto.subtle.importKey('spki', bytes(m.sender), { name: 'ECDH', namedCurve: 'P-256' }, true, [])
    secret = await crypto.subtle.deriveKey({ name: 'ECDH', public: peer }, own.privateKey, { name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])
    await answer(m.id, { result: await result({ method: m.content.handshake.method }) })
    document.getElementById('status').textContent = 'Connected'
  } else if (m.content && m.content.encrypted && secret) {
    const { action } = await decrypt(m.content.encrypted)
    await window.coinbaseKeys('log', JSON.stringify({ decrypted: action.method }))
    await answer(m.id, { result: await result(action) })
  }
})
opener.postMessage({ event: 'PopupLoaded', id: crypto.randomUUID() }, origin)
</script></body></html>`

/** Serves the stand-in page on 127.0.0.1 (any path). */
export async function startCoinbaseKeysPage(): Promise<CoinbaseKeysPage> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET') {
      res.writeHead(405).end()
      return
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    res.end(PAGE)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('the keys page has no port')
  return {
    url: `http://127.0.0.1:${address.port}/connect`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export interface CoinbaseWalletDouble {
  /** Every message the popup received from the SDK, as JSON (binary fields as '<bytes>'). */
  received: string[]
  /** 'approve' (default) or 'reject' (4001 for every request). */
  mode: 'approve' | 'reject'
}

/**
 * The wallet behind the stand-in page in `context`: its popups answer with `account`'s address
 * and sign with its key, in Node.
 */
export async function coinbaseWalletFor(
  context: BrowserContext,
  account: PrivateKeyAccount,
): Promise<CoinbaseWalletDouble> {
  const wallet: CoinbaseWalletDouble = { received: [], mode: 'approve' }
  await context.exposeBinding('coinbaseKeys', async (_source, what: string, arg?: string) => {
    if (what === 'mode') return wallet.mode
    if (what === 'address') return account.address
    if (what === 'log') {
      wallet.received.push(String(arg))
      return null
    }
    if (what === 'sign') return account.signMessage({ message: { raw: arg as Hex } })
    throw new Error(`unknown keys page call ${what}`)
  })
  return wallet
}
