/**
 * The key export page: /apps/{appId}/embedded-wallets/export on the API origin, framed by the
 * modal's EMBEDDED_WALLET_KEY_EXPORT_SCREEN. It answers only the modal origin the API wrote into
 * the page (never one read from the URL), over penpal: `latch:export:show` with the access token
 * shows the page's Reveal button and answers the address only. The key is rebuilt and shown only
 * on a trusted click on that button (the visitor's own, by pointer or keyboard): nothing the
 * modal or the host page can send reveals it, and a script's synthetic click is not trusted.
 * Reveal and Copy take that click only once armed as the approvals are (arm.ts): visible,
 * unobscured where the browser can tell, and unchanged for ARM_MS. The host page places, crops
 * and fades the modal's frame, and with it this page: a button under its decoy, in a faded
 * frame, or just shown ignores the click. The page then tells the modal
 * `latch:export:revealed` (the address only). The key never leaves this document except through
 * the visitor's own Copy.
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
import { armWhenVisible, onTrustedClick } from './arm.ts'
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
const keyLabel = element('key-label')
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
  keyLabel.textContent = text('xLabel')
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
  let modal: ExportModalMethods | null = null
  let copiedTimer: ReturnType<typeof setTimeout> | undefined

  // Both buttons take only the visitor's own click (or Enter/Space on the focused button), and
  // only once armed: a script's click() or dispatchEvent is not trusted, and a button the host
  // page has made transparent, covered with a decoy, or just shown ignores even the visitor's
  // click (it says aria-disabled meanwhile, as the approvals do). The modal and the host cannot
  // reach this document's DOM at all (another origin).
  // Reveal arms only with the heading and the warning in view too, Copy with the key it copies.
  const revealArming = armWhenVisible(document, reveal, [keyLabel, element('warning')])
  const copyArming = armWhenVisible(document, copy, [keyBox])
  onTrustedClick(reveal, revealArming, async () => {
    if (!accessToken || shown) return
    await revealKey(accessToken)
  })

  async function revealKey(token: string): Promise<void> {
    reveal.disabled = true
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
      return
    }
    shown = true
    // The token is not needed any more: the key is on screen and Copy reads it from there.
    accessToken = null
    say('xShown')
    reveal.hidden = true
    revealArming.stop()
    keyBox.hidden = false
    copy.hidden = false
    // The focused button went away. The focus goes to the heading above the key, not to Copy: a
    // focused Copy would turn a key press the host page lures ("press Space") into a copy of the
    // key to a clipboard that page may then read. The status line (role="status") announces the
    // key is shown; Copy is the next Tab stop after the heading, a step the visitor takes.
    keyLabel.tabIndex = -1
    keyLabel.focus()
    // Only the address crosses; the modal counts the minimum display time from here.
    modal?.[EXPORT_MESSAGES.revealed]({ address: params.address }).catch((e: unknown) => {
      console.error('Latch key export: the modal did not hear of the reveal', e)
    })
  }

  onTrustedClick(copy, copyArming, async () => {
    const key = keyBox.textContent ?? ''
    if (!key) return
    await navigator.clipboard.writeText(key).then(
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
      // Offered: the button shows and waits for the visitor (it takes a click once arm.ts has
      // armed it). A later show (a refreshed token) replaces the token; once the key is shown
      // there is nothing more to offer.
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
