/**
 * The key export page: /apps/{appId}/embedded-wallets/export on the API origin, framed by the
 * modal's EMBEDDED_WALLET_KEY_EXPORT_SCREEN. It answers only the modal origin the API wrote into
 * the page (never one read from the URL), over penpal: `latch:export:show` with the access token
 * arms the page's Reveal button and answers the address only. The key is rebuilt and shown only
 * on a trusted click on that button (the visitor's own, by pointer or keyboard): nothing the
 * modal or the host page can send reveals it, and a script's synthetic click is not trusted.
 * The page then tells the modal `latch:export:revealed` (the address only). The key never
 * leaves this document except through the visitor's own Copy.
 */
import './export.css'
import {
  COPIED_LABEL_MS,
  EXPORT_MESSAGES,
  type ExportFrameMethods,
  type ExportModalMethods,
  exposeMethods,
  LatchError,
  remoteMethods,
} from '@latch/shared'
import { isRtl, loadLocale, type MessageKey } from '@latch/shared/i18n'
import { enScreens } from '@latch/shared/i18n/screens'
import { connect, WindowMessenger } from 'penpal'
import { type ExportParams, exportPrivateKey, parseExportQuery } from './export-key.ts'
import { askDeviceShare } from './share-channel.ts'
import { fetchApi, shareStore, walletCore } from './wallet.ts'

const modalOrigin = document
  .querySelector<HTMLMetaElement>('meta[name="latch-modal-origin"]')
  ?.getAttribute('content')
// The API serves this page at /apps/{appId}/embedded-wallets/export.
const appId = decodeURIComponent(location.pathname.split('/')[2] ?? '')

const element = (id: string) => document.getElementById(id) as HTMLElement
const status = element('status')
const keyBox = element('key')
const reveal = element('reveal') as HTMLButtonElement
const copy = element('copy') as HTMLButtonElement

/** The page's texts: the message table's, English until the visitor's locale is loaded. */
let texts: Record<string, string> = enScreens
const text = (key: MessageKey): string => texts[key] ?? key

/**
 * The visitor's language (the modal's, in the query): its table, `lang` and `dir`, and the
 * texts export.html writes in English. The status line keeps what it says until it changes.
 */
async function applyLocale(params: ExportParams): Promise<void> {
  if (!params.locale || params.locale === 'en') return
  try {
    texts = { ...enScreens, ...(await loadLocale(params.locale)).m }
  } catch (e) {
    console.error('Latch key export: the language could not be loaded; English stays', e)
    return
  }
  document.documentElement.lang = params.locale
  document.documentElement.dir = isRtl(params.locale) ? 'rtl' : 'ltr'
  element('key-label').textContent = text('xLabel')
  element('warning').textContent = text('xWarning')
  reveal.textContent = text('xReveal')
  copy.textContent = text('copy')
  if (statusKey) status.textContent = text(statusKey)
}

/** The status line's text by its key, said again in the visitor's language once loaded. */
let statusKey: MessageKey | null = 'xLoading'
function say(key: MessageKey): void {
  statusKey = key
  status.classList.remove('error')
  status.textContent = text(key)
}

/** An error on the status line: a table text by its key, or a message as it is. */
function showError(message: MessageKey | { raw: string }): void {
  statusKey = typeof message === 'string' ? message : null
  status.textContent = typeof message === 'string' ? text(message) : message.raw
  status.classList.add('error')
}

/** The theme from the query, through the CSSOM (the CSP allows no inline style). */
function applyTheme(params: ExportParams) {
  const style = document.documentElement.style
  style.setProperty('--width', `${params.width}px`)
  if (params.background) style.setProperty('--bg', params.background)
  if (params.foreground) style.setProperty('--fg', params.foreground)
  if (params.accent) style.setProperty('--accent', params.accent)
  if (params.accentForeground) style.setProperty('--accent-fg', params.accentForeground)
}

function start(origin: string): void {
  const parsed = parseExportQuery(new URLSearchParams(location.search))
  if (!parsed.ok) {
    showError({ raw: parsed.error.message })
    return
  }
  const params = parsed.value
  applyTheme(params)
  void applyLocale(params)
  const store = shareStore(appId, () => window.localStorage)
  const core = walletCore({ api: fetchApi(location.origin, appId), store })
  /** The token the modal handed over; the key is rebuilt with it only on the visitor's click. */
  let accessToken: string | null = null
  let shown = false
  let revealing = false
  let modal: ExportModalMethods | null = null
  let copiedTimer: ReturnType<typeof setTimeout> | undefined

  reveal.addEventListener('click', (event) => {
    // Only the visitor's own click (or Enter/Space on the focused button) is trusted; a script's
    // reveal.click() or dispatchEvent is not. The modal and the host cannot reach this document's
    // DOM at all (another origin); this guards against anything that could.
    if (!event.isTrusted || !accessToken || shown || revealing) return
    void revealKey(accessToken)
  })

  async function revealKey(token: string): Promise<void> {
    revealing = true
    reveal.disabled = true
    reveal.setAttribute('aria-busy', 'true')
    say('xLoading')
    try {
      keyBox.textContent = await exportPrivateKey(
        { core, store, askDeviceShare: (a) => askDeviceShare(a) },
        { address: params.address, accessToken: token },
      )
    } catch (e) {
      console.error('Latch key export: the key could not be rebuilt', e)
      showError('xFailed')
      reveal.disabled = false
      reveal.removeAttribute('aria-busy')
      revealing = false
      return
    }
    shown = true
    revealing = false
    // The token is not needed any more: the key is on screen and Copy reads it from there.
    accessToken = null
    say('xShown')
    reveal.hidden = true
    keyBox.hidden = false
    copy.hidden = false
    // The focused button went away: the focus moves to Copy, the next thing to do (the status
    // line announces the key is shown; the key is the text just before it).
    copy.focus()
    // Only the address crosses; the modal counts the minimum display time from here.
    modal?.[EXPORT_MESSAGES.revealed]({ address: params.address }).catch((e: unknown) => {
      console.error('Latch key export: the modal did not hear of the reveal', e)
    })
  }

  copy.addEventListener('click', () => {
    const key = keyBox.textContent ?? ''
    if (!key) return
    navigator.clipboard.writeText(key).then(
      () => {
        copy.textContent = text('copied')
        clearTimeout(copiedTimer)
        copiedTimer = setTimeout(() => {
          copy.textContent = text('copy')
        }, COPIED_LABEL_MS)
      },
      () => showError('xCopyFailed'),
    )
  })
  // What the page can clear when it goes away: the key's text in the document, and the token.
  addEventListener('pagehide', () => {
    keyBox.textContent = ''
    accessToken = null
  })

  const methods: ExportFrameMethods = {
    async [EXPORT_MESSAGES.show](p) {
      if (!window.isSecureContext || !globalThis.crypto?.subtle) {
        throw LatchError.of('embedded_wallet_error', {
          message: 'The wallet frame must be served over HTTPS',
        })
      }
      const token = (p as { accessToken?: unknown } | null)?.accessToken
      const address = (p as { address?: unknown } | null)?.address
      // The address the modal asks for must be the one this page was loaded for.
      if (typeof token !== 'string' || !token || address !== params.address) {
        throw LatchError.of('invalid_request_arguments')
      }
      // Armed: the button waits for the visitor. A later show (a refreshed token) replaces the
      // token; once the key is shown there is nothing more to arm.
      if (!shown) {
        accessToken = token
        say('xHidden')
        reveal.hidden = false
      }
      return { address: params.address }
    },
  }
  const connection = connect({
    messenger: new WindowMessenger({ remoteWindow: window.parent, allowedOrigins: [origin] }),
    methods: exposeMethods(methods) as unknown as Record<string, (...args: never[]) => unknown>,
    timeout: 30_000,
  })
  // The page has the focus: Escape here is the visitor's Escape in the modal, which would not
  // hear it otherwise.
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') modal?.[EXPORT_MESSAGES.escape]().catch(() => {})
  })
  connection.promise.then(
    (remote) => {
      modal = remoteMethods<ExportModalMethods>(remote)
    },
    (e: unknown) => {
      console.error('Latch key export: the modal did not connect', e)
    },
  )
}

if (!modalOrigin || modalOrigin.startsWith('%') || !appId) {
  showError({ raw: 'This page was served without its configuration' })
} else if (window.parent === window) {
  showError({ raw: 'This page only works inside the Latch modal' })
} else {
  start(modalOrigin)
}
