/**
 * The wallet frame: a hidden iframe of the modal on the API origin (the only code that holds
 * key material), reached over penpal. Mounted once per modal page and kept: where the browser
 * refuses the frame storage, the device share lives in the frame's memory, so removing the
 * frame would turn this device into a new one.
 */

import {
  LatchError,
  remoteMethods,
  WALLET_FRAME_CALL_TIMEOUT_MS,
  WALLET_FRAME_CONNECT_TIMEOUT_MS,
  WALLET_MESSAGES,
  type WalletBatchMethods,
  type WalletMethods,
  type WalletModalMethods,
} from '@latch/shared'
import { connect, WindowMessenger } from 'penpal'
import { withTimeout } from '../flow/timeout.ts'
import { t } from '../i18n/i18n.ts'
import { runtime } from '../runtime.ts'

/**
 * The frame's methods, each call bounded by a timeout (but the approval and the batch review,
 * which wait for the visitor). The batch review is optional for tests' stand-ins.
 */
export type WalletFrame = WalletMethods & Partial<WalletBatchMethods>

export interface MountOptions {
  apiUrl: string
  appId: string
  doc?: Document
  connectTimeoutMs?: number
  callTimeoutMs?: number
}

/**
 * The frame's page: `{apiUrl}/apps/{appId}/embedded-wallets` (served by the API, not under
 * /api/v1). Spelled here rather than through shared's walletFramePath: importing that puts it
 * in the landing's common chunk, which has no room. A wrong spelling fails every e2e wallet spec.
 */
export function walletFrameUrl(apiUrl: string, appId: string): string {
  return `${apiUrl.replace(/\/+$/, '')}/apps/${encodeURIComponent(appId)}/embedded-wallets`
}

const frameError = (message: string, cause?: unknown): LatchError =>
  LatchError.of('embedded_wallet_error', { message, cause })

/**
 * Mounts the frame and shakes hands with it. Only the API origin may answer (penpal's
 * allowedOrigins). A frame that does not load or answer within the connect timeout is removed,
 * logged, and rejects with a LatchError.
 */
export async function mountWalletFrame(options: MountOptions): Promise<WalletFrame> {
  const doc = options.doc ?? document
  const src = walletFrameUrl(options.apiUrl, options.appId)
  const origin = new URL(src).origin
  const iframe = doc.createElement('iframe')
  iframe.src = src
  // The frame runs its own passkey ceremonies (recovery by passkey): a cross-origin frame may
  // call WebAuthn only where its embedder delegates it.
  iframe.setAttribute('allow', 'publickey-credentials-get; publickey-credentials-create')
  iframe.title = t('walletFrame')
  iframe.dataset.testid = 'latch-wallet-frame'
  // Hidden from sight, focus and assistive technology: it shows nothing.
  iframe.setAttribute('aria-hidden', 'true')
  iframe.tabIndex = -1
  iframe.style.cssText = 'position:absolute;width:0;height:0;border:0;visibility:hidden'
  const contentWindow = (): Window => {
    if (!iframe.contentWindow) throw frameError('The wallet frame could not be mounted')
    return iframe.contentWindow
  }
  doc.body.append(iframe)
  frameElement = iframe
  const connection = connect<Record<string, (...args: never[]) => Promise<unknown>>>({
    messenger: new WindowMessenger({ remoteWindow: contentWindow(), allowedOrigins: [origin] }),
    // The frame asks, on a batch's click, whether the request is still open; the answer can stop
    // a send (as closing does) but approve nothing. Escape on its approval or review, which has
    // the focus, closes as Escape here does.
    methods: {
      [WALLET_MESSAGES.batchSending]: async () => batchSendingHeard(),
      [WALLET_MESSAGES.escape]: async () => relayEscape(doc),
    } satisfies WalletModalMethods,
    timeout: options.connectTimeoutMs ?? WALLET_FRAME_CONNECT_TIMEOUT_MS,
  })
  let remote: object
  try {
    remote = await connection.promise
  } catch (e) {
    connection.destroy()
    iframe.remove()
    console.error(`Latch: the wallet frame at ${src} did not load or answer`, e)
    throw frameError('The wallet could not be loaded, please try again.', e)
  }
  const methods = remoteMethods<WalletMethods & WalletBatchMethods>(remote)
  const callTimeout = options.callTimeoutMs ?? WALLET_FRAME_CALL_TIMEOUT_MS
  const bounded = <K extends keyof WalletMethods>(name: K): WalletMethods[K] =>
    ((params: never) =>
      withTimeout((methods[name] as (p: never) => Promise<unknown>)(params), callTimeout, () =>
        frameError('The wallet did not answer in time, please try again.'),
      )) as WalletMethods[K]
  return {
    [WALLET_MESSAGES.create]: bounded(WALLET_MESSAGES.create),
    [WALLET_MESSAGES.connect]: bounded(WALLET_MESSAGES.connect),
    [WALLET_MESSAGES.recover]: bounded(WALLET_MESSAGES.recover),
    [WALLET_MESSAGES.rpc]: bounded(WALLET_MESSAGES.rpc),
    [WALLET_MESSAGES.confirmFork]: bounded(WALLET_MESSAGES.confirmFork),
    // The visitor takes their time: the screen that asked takes the approval away when it goes.
    [WALLET_MESSAGES.approval]: methods[WALLET_MESSAGES.approval],
    [WALLET_MESSAGES.sendCalls]: methods[WALLET_MESSAGES.sendCalls],
    [WALLET_MESSAGES.dismissApproval]: bounded(WALLET_MESSAGES.dismissApproval),
    [WALLET_MESSAGES.addPasskey]: bounded(WALLET_MESSAGES.addPasskey),
    [WALLET_MESSAGES.passkeyOptions]: bounded(WALLET_MESSAGES.passkeyOptions),
  }
}

/**
 * Escape pressed in a frame of the wallet origin that holds the focus (the wallet frame's
 * approval or review, the key export page), whose document alone hears it: dispatched on the
 * modal's document as if pressed there, so it does what Escape does there (shell/effects.ts,
 * useEscapeCloses: closes a dialog that may be closed, else nothing).
 */
export function relayEscape(doc: Document): void {
  doc.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))
}

/** The mounted frame's element, which an approval shows over its screen's slot. */
let frameElement: HTMLIFrameElement | null = null

/**
 * Shows the wallet frame over `slot` (where the screen's buttons would be), for an approval it
 * draws itself, and follows the slot while it moves; the answer hides it again. The frame is never
 * moved in the document: that would reload it and lose a device share held in its memory.
 */
export function showWalletFrameOver(slot: HTMLElement): () => void {
  const iframe = frameElement
  if (!iframe) return () => {}
  const hidden = iframe.style.cssText
  iframe.removeAttribute('aria-hidden')
  iframe.tabIndex = 0
  let last = ''
  let raf = 0
  const place = () => {
    const r = slot.getBoundingClientRect()
    const next = `position:fixed;left:${r.left}px;top:${r.top}px;width:${r.width}px;height:${r.height}px;border:0;z-index:2147483647;visibility:visible;color-scheme:normal;background:transparent`
    // Written only when the slot moved: the frame arms its button once it stays put.
    if (next !== last) {
      last = next
      iframe.style.cssText = next
    }
    raf = requestAnimationFrame(place)
  }
  place()
  return () => {
    cancelAnimationFrame(raf)
    iframe.style.cssText = hidden
    iframe.setAttribute('aria-hidden', 'true')
    iframe.tabIndex = -1
  }
}

let batchSending: (() => boolean) | null = null

/**
 * What the screen showing a batch review answers when the frame asks, on its click, whether the
 * request is still open (true: it now holds closing until the answer).
 */
export function onBatchSending(listener: (() => boolean) | null): void {
  batchSending = listener
}

/**
 * The frame's `batchSending` (exported for tests, which stand in for the frame): with no screen
 * showing a review, the request is gone and the frame sends nothing.
 */
export function batchSendingHeard(): boolean {
  return batchSending?.() ?? false
}

let frame: Promise<WalletFrame> | null = null
let provided: WalletFrame | null = null

/**
 * The page's one wallet frame, mounted at first use. A failed mount is forgotten, so the next
 * call tries again.
 */
export function walletFrame(): Promise<WalletFrame> {
  if (provided) return Promise.resolve(provided)
  if (!frame) {
    const { apiUrl, appId } = runtime()
    frame = mountWalletFrame({ apiUrl, appId })
    frame.catch(() => {
      frame = null
    })
  }
  return frame
}

/**
 * Tests stand in for the frame (another origin's page, outside the modal) with their own
 * implementation of WalletMethods; null goes back to mounting the real one.
 */
export function provideWalletFrame(stand: WalletFrame | null): void {
  provided = stand
  frame = null
}
