import { type ReactNode, useEffect, useState } from 'react'
import { CodeInput } from '../components/CodeInput.tsx'
import { useModal } from '../hooks.ts'
import { t, tf } from '../i18n/i18n.ts'
import { resendCode, resendSecondsLeft } from '../passwordless/passwordless.ts'

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
  const wait = code?.resendWait ?? null
  const [now, setNow] = useState(Date.now)
  // Ticks while the server's wait between two codes runs, so the button counts down to zero.
  useEffect(() => {
    if (!wait) return
    const timer = setInterval(() => {
      const at = Date.now()
      setNow(at)
      if (resendSecondsLeft(wait, at) === 0) clearInterval(timer)
    }, 1000)
    setNow(Date.now())
    return () => clearInterval(timer)
  }, [wait])
  if (!code) return null
  const email = code.channel === 'email'
  const left = resendSecondsLeft(wait, now)
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
        {/* Waiting, the button stays focusable (aria-disabled) so its countdown can be read. */}
        <button
          type="button"
          className="latch-link-button"
          data-testid="resend-code"
          disabled={code.status === 'submitting' || code.status === 'success'}
          aria-disabled={left > 0 || undefined}
          onClick={() => {
            if (left === 0) void resendCode()
          }}
        >
          {left > 0 ? tf('resendIn', { seconds: left }) : t('resend')}
        </button>
      </p>
      {/* Says the wait once, when the refusal comes; the button's countdown is not re-spoken. */}
      <p className="latch-visually-hidden" aria-live="polite" data-testid="resend-wait">
        {wait && left > 0 ? tf('resendIn', { seconds: wait.seconds }) : ''}
      </p>
    </div>
  )
}
