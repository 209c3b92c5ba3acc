/**
 * The wallet frame's approval surface: what opens a new way to an automatic wallet's key (a fork
 * paired with this wallet, a new sign-in method) is approved here, on text and a button this
 * origin draws, never by a message.
 *
 * The modal may only ask the frame to SHOW an approval (its kind; for a link, the method) and
 * make the frame's iframe visible where its screen's buttons would be. The frame then
 *
 * - draws its own text and button (plain DOM; the modal's script cannot reach this document);
 *   a link's prompt names the very method the request approves, spelled as the server binds it
 *   (linkShown), never a caption the modal picks: a request the frame cannot name is refused;
 * - arms the button only once it has been visible, unobscured where the browser can tell
 *   (IntersectionObserver v2's `isVisible`), for ARM_MS without a change: a button just shown or
 *   uncovered, faded, or under something that hides it, does not take the click (arm.ts says
 *   what the arming does not see);
 * - acts only on a trusted click (`event.isTrusted`: the visitor's pointer, or Enter/Space on the
 *   focused button), by its own same-origin fetch, which alone carries the session's wallet
 *   credential and `Sec-Fetch-Site: same-origin` (server/src/wallets/credential.ts).
 *
 * The approval's promise settles with `{ done: true }` once that fetch succeeded; the modal learns
 * nothing more (a pairing code is shown here, never answered).
 */
import {
  LatchError,
  type LinkApprovalMethod,
  type OAuthProvider,
  type WalletApprovalKind,
  type WalletApprovalParams,
} from '@latch/shared'
import { fill } from '@latch/shared/i18n'
import type { enApproval } from '@latch/shared/i18n/approval'
import { armWhenVisible, onTrustedClick } from './arm.ts'
import { css, dressDocument, surfaceLocale, surfaceTexts } from './surface.ts'
import type { WalletApi } from './wallet.ts'

interface Pending {
  reject(e: unknown): void
  teardown(): void
}

export interface ApprovalSurface {
  show(params: WalletApprovalParams): Promise<{ done: true }>
  dismiss(): void
}

/** The server calls an approval makes, all on this origin. */
const PATHS: Record<WalletApprovalKind, string> = {
  'fork-show-code': '/wallets/fork/pair/start',
  'fork-enter-code': '/wallets/fork/pair/finish',
  link: '/wallets/approvals',
}

/**
 * What a link approval names and sends: `identifier` spelled as the server binds it
 * (server/src/accounts/link-approval.ts, approvalIdentifier), `shown` what the prompt says of it.
 */
interface LinkShown {
  type: LinkApprovalMethod
  identifier: string
  shown: string
}

/**
 * The providers a link may name, as the frame names them (as the modal's buttons do,
 * OAUTH_PROVIDER_NAMES; kept here so that the frame's page carries this table alone).
 */
const PROVIDER_NAMES: Record<OAuthProvider, string> = {
  google: 'Google',
  twitter: 'Twitter',
  discord: 'Discord',
  github: 'GitHub',
  apple: 'Apple',
}

/**
 * The method of a link approval as the frame names it, from the request's own `method` (the
 * identifier the server binds), or null when the frame cannot name it: an e-mail address as the
 * server keeps it (trimmed, lower case), in printable ASCII only (no bidi override, zero-width
 * space or look-alike letter); a number in E.164, as the link route verifies it; an Ethereum
 * address in full (a shortened one lets a look-alike pass); an OAuth provider by its name in the
 * frame's own table; a passkey in the frame's words (`passkey`).
 */
export function linkShown(
  method: WalletApprovalParams['method'],
  passkey: string,
): LinkShown | null {
  if (!method) return null
  const { type } = method
  let identifier = method.identifier.trim()
  let shown: string | undefined
  if (type === 'phone') {
    identifier = identifier.replace(/[\s().-]/g, '')
    if (/^\+[1-9][0-9]{6,14}$/.test(identifier)) shown = identifier
  } else {
    identifier = identifier.toLowerCase()
    if (type === 'email' && /^[!-?A-~]+@[a-z0-9.-]+\.[a-z]{2,}$/.test(identifier))
      shown = identifier
    if (type === 'siwe' && /^0x[0-9a-f]{40}$/.test(identifier)) shown = identifier
    if (type === 'oauth' && Object.hasOwn(PROVIDER_NAMES, identifier)) {
      shown = PROVIDER_NAMES[identifier as OAuthProvider]
    }
    if (type === 'passkey' && identifier === 'passkey') shown = passkey
  }
  return shown === undefined ? null : { type, identifier, shown }
}

export function approvalSurface(doc: Document, api: WalletApi): ApprovalSurface {
  let pending: Pending | null = null

  function dismiss(): void {
    const was = pending
    pending = null
    was?.teardown()
    was?.reject(LatchError.of('embedded_wallet_error', { message: 'The approval was closed' }))
  }

  async function show(params: WalletApprovalParams): Promise<{ done: true }> {
    dismiss()
    const locale = surfaceLocale(params.locale)
    const texts = await surfaceTexts(locale)
    const text = (key: keyof typeof enApproval) => texts[key] ?? key
    // A link names the method it approves from the request's own `method`; any `label` the
    // modal sends is not read. One the frame cannot name is refused before anything is drawn.
    const link = params.kind === 'link' ? linkShown(params.method, text('apPasskey')) : null
    if (params.kind === 'link' && !link) throw LatchError.of('invalid_request_arguments')
    const colors = params.colors ?? {}
    dressDocument(doc, locale, colors)

    const root = doc.createElement('div')
    root.setAttribute('role', 'group')
    root.dataset.testid = 'wallet-approval'
    css(root, { padding: '4px', display: 'grid', gap: '8px' })
    const prompt = doc.createElement('p')
    prompt.id = 'approval-prompt'
    css(prompt, { margin: '0', 'text-align': 'center', 'overflow-wrap': 'anywhere' })
    const status = doc.createElement('p')
    status.setAttribute('role', 'status')
    status.dataset.testid = 'wallet-approval-status'
    css(status, { margin: '0', 'min-height': '1.4em', 'text-align': 'center' })
    const button = doc.createElement('button')
    button.type = 'button'
    button.dataset.testid = 'wallet-approval-button'
    css(button, {
      padding: '12px',
      border: '0',
      'border-radius': '12px',
      background: colors.accent ?? '#5f66eb',
      color: colors.accentForeground ?? '#ffffff',
      font: 'inherit',
      'font-weight': '600',
      cursor: 'pointer',
    })
    root.setAttribute('aria-labelledby', prompt.id)
    let input: HTMLInputElement | null = null
    if (params.kind === 'fork-show-code') {
      prompt.textContent = text('apPairBody')
      button.textContent = text('apPairShow')
    } else if (params.kind === 'fork-enter-code') {
      prompt.textContent = text('apEnterLabel')
      input = doc.createElement('input')
      input.id = 'approval-code'
      input.inputMode = 'numeric'
      input.autocomplete = 'one-time-code'
      input.maxLength = 6
      input.dataset.testid = 'wallet-approval-code'
      input.setAttribute('aria-labelledby', prompt.id)
      css(input, {
        padding: '10px',
        border: '1px solid currentColor',
        'border-radius': '12px',
        background: 'transparent',
        color: 'inherit',
        font: '20px/1.2 ui-monospace, Menlo, Consolas, monospace',
        'letter-spacing': '0.3em',
        'text-align': 'center',
      })
      button.textContent = text('apEnterButton')
    } else if (link) {
      prompt.textContent = fill(text('apLink'), { method: link.shown })
      button.textContent = text('apAllow')
    }
    root.append(prompt, ...(input ? [input] : []), button, status)
    doc.body.replaceChildren(root)

    // Armed only while the button and what it approves (the prompt, the code's field) are
    // visible and unchanged for ARM_MS; any change of visibility disarms.
    const arming = armWhenVisible(doc, button, input ? [prompt, input] : [prompt])

    return new Promise<{ done: true }>((resolve, reject) => {
      const mine: Pending = {
        reject,
        teardown() {
          arming.stop()
          root.remove()
        },
      }
      pending = mine
      const act = async () => {
        status.textContent = ''
        try {
          if (params.kind === 'fork-show-code') {
            const { code } = await api<{ code: string }>(PATHS[params.kind], {}, params.accessToken)
            if (pending !== mine) return
            const shown = doc.createElement('p')
            shown.dataset.testid = 'wallet-approval-pairing-code'
            shown.textContent = `${code.slice(0, 3)} ${code.slice(3)}`
            shown.setAttribute('aria-label', code.split('').join(' '))
            css(shown, {
              margin: '0',
              font: '600 28px/1.2 ui-monospace, Menlo, Consolas, monospace',
              'letter-spacing': '0.15em',
              'text-align': 'center',
            })
            prompt.textContent = text('apPairCode')
            button.replaceWith(shown)
            arming.stop()
          } else if (params.kind === 'fork-enter-code') {
            const code = (input?.value ?? '').replace(/\s+/g, '')
            await api(PATHS[params.kind], { code }, params.accessToken)
            if (pending !== mine) return
            button.disabled = true
          } else {
            // What the prompt named, and nothing else (a link it could not name was refused).
            await api(
              PATHS[params.kind],
              { type: link?.type, identifier: link?.identifier },
              params.accessToken,
            )
            if (pending !== mine) return
            button.disabled = true
          }
          // A shown code stays on screen until the modal takes the approval away.
          pending =
            params.kind === 'fork-show-code' ? { reject: () => {}, teardown: mine.teardown } : null
          if (params.kind !== 'fork-show-code') mine.teardown()
          resolve({ done: true })
        } catch (e) {
          if (pending !== mine) return
          const refused = e instanceof LatchError && e.code === 'invalid_verification_code'
          status.setAttribute('role', 'alert')
          status.textContent = refused
            ? text('apBadCode')
            : e instanceof Error
              ? e.message
              : String(e)
        }
      }
      onTrustedClick(button, arming, act)
    })
  }

  return { show, dismiss }
}
