import type { ReactNode } from 'react'
import { CodeInput } from '../components/CodeInput.tsx'
import { useModal } from '../hooks.ts'
import { t } from '../i18n.ts'
import { resendCode } from '../passwordless.ts'

/** The text with the destination's element where its `{destination}` placeholder is. */
function withDestination(text: string, destination: ReactNode): ReactNode {
  const [before, after] = text.split('{destination}')
  return (
    <>
      {before}
      {destination}
      {after}
    </>
  )
}

/** Code entry for an e-mail or SMS code. */
export function AwaitingPasswordlessCode() {
  const code = useModal((s) => s.passwordless)
  if (!code) return null
  const email = code.channel === 'email'
  return (
    <div className="latch-screen latch-center" data-testid="screen-AWAITING_PASSWORDLESS_CODE">
      <h1 className="latch-title">{t('codeTitle')}</h1>
      <p className="latch-description">
        {withDestination(
          t(email ? 'codeEmail' : 'codeSms'),
          <strong data-testid="code-destination">{code.destination}</strong>,
        )}
      </p>
      <CodeInput />
      <p className="latch-muted latch-small">
        {t(email ? 'noEmail' : 'noSms')}{' '}
        <button
          type="button"
          className="latch-link-button"
          data-testid="resend-code"
          disabled={code.status === 'submitting' || code.status === 'success'}
          onClick={() => void resendCode()}
        >
          {t('resend')}
        </button>
      </p>
    </div>
  )
}
