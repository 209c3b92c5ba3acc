/**
 * What Coinbase Wallet's connector frame answers (coinbase-main.ts makes the handshake): the
 * SDK's provider, built on `cb.init`, behind the calls of coinbase-protocol.ts only, and the
 * Continue button the visitor clicks. The popup must open inside a click in this frame, so the
 * click itself asks the SDK for the accounts (its popup opens), then tells the modal; the
 * modal's `cb.connect` then waits for that connection. Apart from main so a test can serve it
 * over a port in a document of its own.
 */
import { WALLET_REQUEST_TIMEOUT_MS } from '@latch/shared'
import { withTimeout } from '../../flow/timeout.ts'
import { type CoinbaseInit, parseCoinbaseCall, parseInit } from '../coinbase-protocol.ts'
import type { Eip1193 } from '../coinbase-sdk.ts'
import { requestConnection } from '../eip1193.ts'
import { type PortEnd, portEnd } from '../frame-port.ts'
import type { CallMessage, ReplyMessage } from '../frame-protocol.ts'
import type { Connection } from '../types.ts'

export interface CoinbaseFrameDeps {
  /** The document the button is drawn in. */
  doc: Document
  /** The keys page this frame's server names (its meta tag); the SDK's own when undefined. */
  keysUrl?: string
  /** Builds the SDK's provider; the real SDK's lazily loaded chunk by default. */
  load?: () => Promise<(options: { appName: string; chainId: number; keysUrl?: string }) => Eip1193>
  timeoutMs?: number
  /** Whether a click is the visitor's own (a test's document has none): `isTrusted`. */
  trusted?: (event: MouseEvent) => boolean
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/

/** How long a settled connection waits for the modal's cb.connect. */
const UNTAKEN_MS = 10_000

const timedOut = () => ({ code: -32603, message: 'Wallet request timed out' })
const noReply = (): ReplyMessage | null => null

/** Serves the modal over `given`. */
export function serveCoinbaseFrame(given: MessagePort, deps: CoinbaseFrameDeps): PortEnd {
  const { doc } = deps
  const timeoutMs = deps.timeoutMs ?? WALLET_REQUEST_TIMEOUT_MS
  const load =
    deps.load ?? (() => import('../coinbase-sdk.ts').then((m) => m.createCoinbaseProvider))
  let provider: Eip1193 | null = null
  let building: Promise<Eip1193> | null = null
  /** The connection the last click started, until the modal takes it. */
  let started: Promise<Connection> | null = null
  let button: HTMLButtonElement | null = null
  let words: CoinbaseInit | null = null
  const post = (name: string, payload: unknown) => given.postMessage({ t: 'event', name, payload })

  const send = (method: string, params?: unknown): Promise<unknown> => {
    if (!provider) return Promise.reject(new Error('not started'))
    return withTimeout(
      provider.request(params === undefined ? { method } : { method, params }),
      timeoutMs,
      timedOut,
    )
  }

  function drawButton(init: CoinbaseInit): void {
    words = init
    doc.documentElement.lang = init.lang
    doc.documentElement.dir = init.dir
    button ??= doc.createElement('button')
    button.type = 'button'
    button.setAttribute('data-testid', 'coinbase-continue')
    if (init.look) {
      button.style.setProperty('background-color', init.look.background)
      button.style.setProperty('color', init.look.color)
      button.style.setProperty('border-radius', init.look.borderRadius)
      button.style.setProperty('font-family', init.look.fontFamily)
      button.style.setProperty('font-size', init.look.fontSize)
      button.style.setProperty('font-weight', init.look.fontWeight)
    }
    button.onclick = onClick
    // The keyboard is in this frame while the visitor is on its button: Escape is the modal's.
    doc.onkeydown = (event) => {
      if (event.key === 'Escape') post('escape', null)
    }
    if (!button.isConnected) doc.body.append(button)
    setReady(provider !== null && started === null)
  }

  function setReady(ready: boolean): void {
    if (!button || !words) return
    button.disabled = !ready
    button.setAttribute('aria-busy', String(!ready))
    button.textContent = ready ? words.label : words.busyLabel
  }

  /** The visitor's click: the SDK's popup opens in it, then the modal hears of it. */
  function onClick(event: MouseEvent): void {
    if (!(deps.trusted?.(event) ?? event.isTrusted) || !provider || started) return
    // First, before any await: the SDK opens its popup inside this click.
    const connection = requestConnection(send)
    started = connection
    setReady(false)
    // The modal takes it at once (cb.connect); one it never takes frees the button a while
    // after it settled, so the frame is never stuck.
    void connection
      .catch(() => {})
      .then(() => {
        setTimeout(() => {
          if (started !== connection) return
          started = null
          setReady(true)
        }, UNTAKEN_MS)
      })
    post('clicked', null)
  }

  function attach(p: Eip1193): void {
    p.on('accountsChanged', (accounts) =>
      post(
        'accountsChanged',
        Array.isArray(accounts)
          ? accounts
              .filter((a): a is string => typeof a === 'string' && ADDRESS.test(a))
              .slice(0, 16)
          : [],
      ),
    )
    p.on('chainChanged', (chainId) => {
      const hex = typeof chainId === 'number' ? `0x${chainId.toString(16)}` : String(chainId)
      if (/^0x[0-9a-fA-F]{1,16}$/.test(hex)) post('chainChanged', hex)
    })
    p.on('disconnect', () => post('disconnect', null))
  }

  async function onCall(call: CallMessage): Promise<unknown> {
    switch (call.method) {
      case 'cb.init': {
        const init = parseInit(call.args)
        if (!init) throw new Error('bad init')
        drawButton(init)
        building ??= load().then((create) => {
          const built = create({
            appName: init.appName,
            chainId: init.chainId,
            ...(deps.keysUrl ? { keysUrl: deps.keysUrl } : {}),
          })
          attach(built)
          provider = built
          return built
        })
        building.catch(() => {
          building = null
        })
        await building
        setReady(started === null)
        return null
      }
      case 'cb.connect': {
        const connection = started
        if (!connection) throw { code: 4100, message: 'Continue was not clicked in the frame' }
        try {
          return await connection
        } finally {
          started = null
          setReady(true)
        }
      }
      case 'cb.request': {
        const { method, params } = call.args as { method: string; params?: object }
        return send(method, params)
      }
      default:
        throw new Error('unknown call')
    }
  }

  return portEnd(given, { parseReply: noReply, parseCall: parseCoinbaseCall, onCall })
}
