/**
 * EMBEDDED_WALLET_SIGN_REQUEST_SCREEN (SPEC sections 2 and 8, "Sign"): what will be signed, in a
 * box of at most 310px that scrolls (read-only text: it takes keyboard focus, so it scrolls
 * without a pointer), 'Sign and continue', then 'Success' until the modal closes.
 */
import { useRef } from 'react'
import { useModal } from '../hooks.ts'
import type { SignPayload } from '../wallet/requests.ts'
import { useArmed } from '../wallet/review.ts'
import { confirmSign } from '../wallet/sign.ts'
import { AppLabel, AppText, TypedDataDomain } from './review-parts.tsx'

/** The text in the box: the message as given, typed data as indented JSON. */
export function signText(payload: SignPayload): string {
  if (payload.kind === 'message') return payload.message
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
      <h1 className="latch-title latch-center">{options.title ?? 'Sign message'}</h1>
      <AppText show={Boolean(options.description)}>
        <p className="latch-description">{options.description}</p>
      </AppText>
      {shown.kind === 'typedData' ? <TypedDataDomain typedData={shown.typedData} /> : null}
      {/* Read-only text takes focus and scrolls by keyboard too (WCAG 2.1.1), and is labelled. */}
      <textarea
        readOnly
        className="latch-sign-message"
        data-testid="sign-message"
        aria-label={shown.kind === 'message' ? 'Message' : 'Typed data'}
        value={signText(shown)}
      />
      <p aria-live="polite" className="latch-tx-status">
        {status === 'error' ? (
          <span className="latch-error" role="alert" data-testid="sign-error">
            {request.error}
          </span>
        ) : done ? (
          <span className="latch-success" data-testid="sign-success">
            Success
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
        {options.buttonText ?? 'Sign and continue'}
      </button>
      {options.buttonText ? <AppLabel id="latch-sign-button-from" /> : null}
    </div>
  )
}
