/**
 * exportWallet() (docs/behaviour.md, "EMBEDDED_WALLET_KEY_EXPORT_SCREEN"): the connecting gate,
 * then EMBEDDED_WALLET_KEY_EXPORT_SCREEN, which frames the export page of the API origin
 * (`/apps/{appId}/embedded-wallets/export?address=…&width=…&background=…`). The modal hands the
 * page the access token over penpal once it has shaken hands (never in the URL: a URL lands in
 * logs, history and Referer headers); the page shows its Reveal button and rebuilds and shows the
 * key only on the visitor's own click there. The modal never holds the key: the page answers and
 * reports the address only. Once revealed, the screen cannot be closed for
 * KEY_EXPORT_MIN_DISPLAY_MS. Loaded lazily (index.ts).
 */
import {
  EXPORT_MESSAGES,
  type ExportFrameMethods,
  type ExportModalMethods,
  embeddedWallet,
  type Hex,
  KEY_EXPORT_MIN_DISPLAY_MS,
  LatchError,
  MODAL_WIDTH_PX,
  remoteMethods,
  WALLET_FRAME_CALL_TIMEOUT_MS,
  WALLET_FRAME_CONNECT_TIMEOUT_MS,
} from '@latch/shared'
import { connect, WindowMessenger } from 'penpal'
import { blockClose, deliver } from '../flow/deliver.ts'
import { type FlowHandle, onFlow, requestPending, startFlow } from '../flow/flow.ts'
import { withTimeout } from '../flow/timeout.ts'
import { locale, t } from '../i18n/i18n.ts'
import { runtime } from '../runtime.ts'
import { themeTokens } from '../shell/theme.ts'
import { store } from '../store.ts'
import { ensureWalletReady, ownFailureText, walletStepFailed } from './flows.ts'
import { relayEscape, walletFrameUrl } from './frame.ts'

/**
 * exportWallet(): resolves when the visitor closes the screen after the key was shown; closing
 * before rejects with 'User exited before their wallet could be exported'. A visitor signed out
 * or without an in-app wallet is refused before anything opens.
 */
export function exportWallet(): Promise<void> {
  const { app, user } = store.getState()
  if (!app) return Promise.reject(LatchError.of('something_went_wrong'))
  // Another request on screen keeps it: this one is refused, that one is unchanged.
  if (requestPending({ kind: 'export-wallet' })) {
    return Promise.reject(LatchError.of('rpc_request_pending'))
  }
  if (!user || !runtime().session.isAuthenticated() || !embeddedWallet(user.linkedAccounts)) {
    return Promise.reject(LatchError.of('export_not_allowed'))
  }
  const { promise } = startFlow<Hex>({ kind: 'export-wallet' }, 'EMBEDDED_WALLET_CONNECTING_SCREEN')
  void ensureWalletReady('EMBEDDED_WALLET_KEY_EXPORT_SCREEN')
  return promise.then(() => undefined)
}

const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/

/**
 * The export page's URL for the signed-in user's wallet, in the modal's theme: the same tokens
 * the modal paints with (a palette colour that is not #hex is left to the page's default).
 */
export function exportFrameUrl(address: Hex): string {
  const { apiUrl, appId } = runtime()
  const query = new URLSearchParams({ address, width: String(MODAL_WIDTH_PX - 40) })
  for (const [name, value] of Object.entries(frameColors())) query.set(name, value)
  // The page speaks the modal's language.
  if (locale() !== 'en') query.set('locale', locale())
  return `${walletFrameUrl(apiUrl, appId)}/export?${query}`
}

/** The modal's theme colours that are #hex, for a wallet-origin page drawn inside a screen. */
export function frameColors(): Partial<
  Record<'background' | 'foreground' | 'accent' | 'accentForeground', string>
> {
  const app = store.getState().app
  const tokens = app
    ? themeTokens(app.theme, app.accentColor, app.palette)
    : themeTokens('light', '')
  const colors = {
    background: tokens['--latch-bg'],
    foreground: tokens['--latch-fg'],
    accent: tokens['--latch-accent-fill'],
    accentForeground: tokens['--latch-accent-fg'],
  }
  return Object.fromEntries(
    Object.entries(colors).filter(([, v]) => v && HEX_COLOR.test(v)),
  ) as Partial<Record<keyof typeof colors, string>>
}

/** The screen's error: the failure's own text where it names what to do, else 'try again'. */
const exportError = (cause?: unknown) =>
  LatchError.of('embedded_wallet_error', {
    message: (cause === undefined ? null : ownFailureText(cause)) ?? t('exportFailed'),
    cause,
  })

/**
 * Connects to the export page in `iframe` (the API origin only) and hands it the token: the page
 * then offers its Reveal button, and the key shows only when the visitor clicks it there (the
 * modal cannot reveal it). When the page says `revealed`, the screen is held open for
 * KEY_EXPORT_MIN_DISPLAY_MS from that moment, and closing it delivers (exportWallet()
 * resolves); closed before, the flow exits. Returns the disconnect function.
 */
export const showKey = onFlow(function showKey(
  flow: FlowHandle,
  iframe: HTMLIFrameElement,
  onError: (error: LatchError) => void,
): () => void {
  const { user } = store.getState()
  const wallet = user ? embeddedWallet(user.linkedAccounts) : undefined
  const window_ = iframe.contentWindow
  if (!wallet || !window_) {
    onError(exportError())
    return () => {}
  }
  const origin = new URL(iframe.src).origin
  let revealed = false
  const modalMethods: ExportModalMethods = {
    async [EXPORT_MESSAGES.revealed](p) {
      // Only the page of this origin can call (penpal's allowedOrigins); it names the address
      // it showed, which must be this wallet's. A second call changes nothing.
      if (revealed || p?.address !== wallet.address) return
      revealed = true
      // Shown: closing now delivers; not before the key's minimum display time, counted from
      // the reveal (nothing for a flow that has changed: deliver asks its handle).
      deliver(flow, wallet.address, { blockCloseMs: KEY_EXPORT_MIN_DISPLAY_MS })
    },
    // The page has the focus: Escape there does what it does here (closing, not before the
    // key's minimum display time, which blocks it).
    async [EXPORT_MESSAGES.escape]() {
      relayEscape(iframe.ownerDocument)
    },
  }
  const connection = connect<Record<string, (...args: never[]) => Promise<unknown>>>({
    messenger: new WindowMessenger({ remoteWindow: window_, allowedOrigins: [origin] }),
    methods: modalMethods as unknown as Record<string, (...args: never[]) => unknown>,
    timeout: WALLET_FRAME_CONNECT_TIMEOUT_MS,
  })
  void flow
    .guard(
      (async () => {
        const remote = remoteMethods<ExportFrameMethods>(await connection.promise)
        const accessToken = await runtime().session.getAccessToken()
        if (!accessToken) throw LatchError.of('export_not_allowed')
        await withTimeout(
          remote[EXPORT_MESSAGES.show]({ address: wallet.address, accessToken }),
          WALLET_FRAME_CALL_TIMEOUT_MS,
          exportError,
        )
      })(),
    )
    // Reached only while the flow is the one on screen: the arming is guarded.
    .catch((e: unknown) => {
      console.error('Latch: the key export page could not be armed', e)
      // Closing now is not leaving an export that worked: the caller hears the failure.
      walletStepFailed(flow, e, '')
      onError(exportError(e))
    })
  return () => {
    connection.destroy()
    if (store.getState().closeBlocked) blockClose(flow, false)
  }
})
