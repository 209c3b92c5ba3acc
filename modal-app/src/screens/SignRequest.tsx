/**
 * EMBEDDED_WALLET_SIGN_REQUEST_SCREEN (SPEC sections 2 and 8, "Sign"): what will be signed, in a
 * box of at most 310px that scrolls (read-only text: it takes keyboard focus, so it scrolls
 * without a pointer), 'Sign and continue', then 'Success' until the modal closes.
 */
import { useModal } from '../hooks.ts'
import type { SignPayload } from '../wallet/requests.ts'
import { confirmSign } from '../wallet/sign.ts'

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
  if (!request) return null
  const { options, status } = request
  const done = status === 'success'
  return (
    <div className="latch-screen" data-testid="screen-EMBEDDED_WALLET_SIGN_REQUEST_SCREEN">
      <h1 className="latch-title latch-center">{options.title ?? 'Sign message'}</h1>
      {options.description ? <p className="latch-description">{options.description}</p> : null}
      {/* Read-only text takes focus and scrolls by keyboard too (WCAG 2.1.1), and is labelled. */}
      <textarea
        readOnly
        className="latch-sign-message"
        data-testid="sign-message"
        aria-label={request.payload.kind === 'message' ? 'Message' : 'Typed data'}
        value={signText(request.payload)}
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
        disabled={status === 'signing' || done}
        aria-busy={status === 'signing'}
        onClick={() => void confirmSign()}
      >
        {options.buttonText ?? 'Sign and continue'}
      </button>
    </div>
  )
}
