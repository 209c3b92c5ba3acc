/**
 * The key export page: /apps/{appId}/embedded-wallets/export on the API origin, framed by the
 * modal's EMBEDDED_WALLET_KEY_EXPORT_SCREEN. It answers only the modal origin the API wrote into
 * the page (never one read from the URL), over penpal: `latch:export:show` with the access token
 * rebuilds the key here, shows it, and answers the address only. The key never leaves this
 * document except through the visitor's own Copy.
 */
import './export.css'
import {
  COPIED_LABEL_MS,
  EXPORT_MESSAGES,
  type ExportFrameMethods,
  exposeMethods,
  LatchError,
} from '@latch/shared'
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
const copy = element('copy') as HTMLButtonElement

function showError(message: string): void {
  status.textContent = message
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
    showError(parsed.error.message)
    return
  }
  const params = parsed.value
  applyTheme(params)
  const store = shareStore(appId, () => window.localStorage)
  const core = walletCore({ api: fetchApi(location.origin, appId), store })
  let shown = false
  let copiedTimer: ReturnType<typeof setTimeout> | undefined

  copy.addEventListener('click', () => {
    const key = keyBox.textContent ?? ''
    if (!key) return
    navigator.clipboard.writeText(key).then(
      () => {
        copy.textContent = 'Copied'
        clearTimeout(copiedTimer)
        copiedTimer = setTimeout(() => {
          copy.textContent = 'Copy'
        }, COPIED_LABEL_MS)
      },
      () => showError('Could not copy: select the key and copy it by hand'),
    )
  })
  // What the page can clear when it goes away: the key's text in the document.
  addEventListener('pagehide', () => {
    keyBox.textContent = ''
  })

  const methods: ExportFrameMethods = {
    async [EXPORT_MESSAGES.show](p) {
      if (!window.isSecureContext || !globalThis.crypto?.subtle) {
        throw LatchError.of('embedded_wallet_error', {
          message: 'The wallet frame must be served over HTTPS',
        })
      }
      const accessToken = (p as { accessToken?: unknown } | null)?.accessToken
      const address = (p as { address?: unknown } | null)?.address
      // The address the modal asks for must be the one this page was loaded for.
      if (typeof accessToken !== 'string' || !accessToken || address !== params.address) {
        throw LatchError.of('invalid_request_arguments')
      }
      if (shown) return { address: params.address }
      try {
        keyBox.textContent = await exportPrivateKey(
          { core, store, askDeviceShare: (a) => askDeviceShare(a) },
          { address: params.address, accessToken },
        )
      } catch (e) {
        showError('Your key could not be loaded, please try again.')
        throw e
      }
      shown = true
      status.textContent = 'Your private key is below. Keep it secret.'
      keyBox.hidden = false
      copy.hidden = false
      return { address: params.address }
    },
  }
  const connection = connect({
    messenger: new WindowMessenger({ remoteWindow: window.parent, allowedOrigins: [origin] }),
    methods: exposeMethods(methods) as unknown as Record<string, (...args: never[]) => unknown>,
    timeout: 30_000,
  })
  connection.promise.catch((e: unknown) => {
    console.error('Latch key export: the modal did not connect', e)
  })
}

if (!modalOrigin || modalOrigin.startsWith('%') || !appId) {
  showError('This page was served without its configuration')
} else if (window.parent === window) {
  showError('This page only works inside the Latch modal')
} else {
  start(modalOrigin)
}
