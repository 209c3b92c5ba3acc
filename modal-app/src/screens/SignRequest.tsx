/**
 * EMBEDDED_WALLET_SIGN_REQUEST_SCREEN (docs/behaviour.md, "EMBEDDED_WALLET_SIGN_REQUEST_SCREEN"):
 * what will be signed, in a box of at most 310px that scrolls (read-only text: it takes keyboard
 * focus, so it scrolls without a pointer), 'Sign and continue', then 'Success' until the modal
 * closes.
 */
import { useRef } from 'react'
import { useModal } from '../hooks.ts'
import { shownError, t, tf } from '../i18n/i18n.ts'
import type { SignPayload } from '../wallet/requests.ts'
import { useArmed } from '../wallet/review.ts'
import { confirmSign } from '../wallet/sign.ts'
import { AppLabel, AppText, SignParties, TypedDataDomain } from './review-parts.tsx'

/** Hex bytes, as the wallet frame reads a message that matches (it signs those bytes). */
const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})+$/
/**
 * Text a person reads as it is: no control characters but tab and line breaks, and no bidi
 * overrides or isolates (they would reorder what is shown against what is signed).
 */
function readable(text: string): boolean {
  for (const char of text) {
    const c = char.codePointAt(0) ?? 0
    if (c === 0x09 || c === 0x0a || c === 0x0d) continue
    if (c < 0x20 || (c >= 0x7f && c < 0xa0)) return false
    if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) return false
  }
  return true
}

/**
 * A hex message's bytes as UTF-8 text, when they are readable text (ethers and viem send
 * personal_sign's text that way); null for other bytes, which are shown as the hex they are.
 */
export function hexMessageText(message: string): string | null {
  if (!HEX_BYTES.test(message)) return null
  const bytes = new Uint8Array(message.length / 2 - 1)
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = Number.parseInt(message.slice(2 + 2 * i, 4 + 2 * i), 16)
  }
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return readable(text) ? text : null
  } catch {
    return null
  }
}

/**
 * The text in the box: the message as given (hex bytes that are UTF-8 text as that text, since
 * those bytes are what is signed), typed data as indented JSON.
 */
export function signText(payload: SignPayload): string {
  if (payload.kind === 'message') return hexMessageText(payload.message) ?? payload.message
  const data = payload.typedData
  if (typeof data !== 'string') return JSON.stringify(data, null, 2)
  try {
    return JSON.stringify(JSON.parse(data), null, 2)
  } catch {
    return data
  }
}

export function SignRequest() {
  const request = useModal((s) => s.signRequest)
  // The whole screen is watched, not the button: a disabled button is drawn translucent, and
  // IntersectionObserver v2 counts any opacity as not visible.
  const root = useRef<HTMLDivElement>(null)
  // The frozen payload on screen: the button arms once it has been visible, unchanged, for
  // REVIEW_ARM_DELAY_MS, and its click signs that payload.
  const shown = request?.payload ?? null
  const armed = useArmed(shown, root)
  if (!request || !shown) return null
  const { options, status } = request
  const done = status === 'success'
  return (
    <div
      ref={root}
      className="latch-screen"
      data-testid="screen-EMBEDDED_WALLET_SIGN_REQUEST_SCREEN"
    >
      {/* The host's texts are marked as the app's: they must not pass as Latch's own words. */}
      {options.title ? <AppLabel /> : null}
      <h1 className="latch-title latch-center">{options.title ?? t('signTitle')}</h1>
      <AppText show={Boolean(options.description)}>
        <p className="latch-description">{options.description}</p>
      </AppText>
      <SignParties />
      {shown.kind === 'typedData' ? <TypedDataDomain typedData={shown.typedData} /> : null}
      {shown.kind === 'message' && HEX_BYTES.test(shown.message) ? (
        <p className="latch-small latch-muted" data-testid="sign-message-encoding">
          {hexMessageText(shown.message) === null
            ? t('signHex')
            : tf('signBytes', { n: shown.message.length / 2 - 1 })}
        </p>
      ) : null}
      {/* Read-only text takes focus and scrolls by keyboard too (WCAG 2.1.1), and is labelled. */}
      <textarea
        readOnly
        className="latch-sign-message"
        data-testid="sign-message"
        aria-label={t(shown.kind === 'message' ? 'signMessage' : 'signTyped')}
        value={signText(shown)}
      />
      <p aria-live="polite" className="latch-tx-status">
        {status === 'error' ? (
          <span className="latch-error" role="alert" data-testid="sign-error">
            {request.error && shownError(request.error)}
          </span>
        ) : done ? (
          <span className="latch-success" data-testid="sign-success">
            {t('signDone')}
          </span>
        ) : null}
      </p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="sign-submit"
        data-armed={armed}
        disabled={!armed || status === 'signing' || done}
        aria-busy={status === 'signing'}
        aria-describedby={options.buttonText ? 'latch-sign-button-from' : undefined}
        onClick={() => armed && void confirmSign(shown)}
      >
        {options.buttonText ?? t('signButton')}
      </button>
      {options.buttonText ? <AppLabel id="latch-sign-button-from" /> : null}
    </div>
  )
}
