import { CodeInput } from '../components/CodeInput.tsx'
import { useModal } from '../hooks.ts'
import { resendCode } from '../passwordless.ts'

/** Code entry for an e-mail or SMS code. */
export function AwaitingPasswordlessCode() {
  const code = useModal((s) => s.passwordless)
  if (!code) return null
  const email = code.channel === 'email'
  return (
    <div className="latch-screen latch-center" data-testid="screen-AWAITING_PASSWORDLESS_CODE">
      <h1 className="latch-title">Enter confirmation code</h1>
      <p className="latch-description">
        Please check <strong data-testid="code-destination">{code.destination}</strong> for{' '}
        {email ? 'an email' : 'a text message'} with your code and enter it below.
      </p>
      <CodeInput />
      <p className="latch-muted latch-small">
        {email ? 'Didn’t get an email?' : 'Didn’t get a message?'}{' '}
        <button
          type="button"
          className="latch-link-button"
          data-testid="resend-code"
          disabled={code.status === 'submitting' || code.status === 'success'}
          onClick={() => void resendCode()}
        >
          Resend code
        </button>
      </p>
    </div>
  )
}
