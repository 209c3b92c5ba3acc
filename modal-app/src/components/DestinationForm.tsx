import { type CodeChannel, validateEmail } from '@latch/shared'
import { useEffect, useId, useState } from 'react'
import { useModal } from '../hooks.ts'
import { shownError, t } from '../i18n.ts'
import { submitDestination } from '../passwordless.ts'
import { loadPhoneCheck, phoneCheck } from '../phone.ts'

export const EMAIL_PLACEHOLDER = 'your@email.com'

/** The field's passkey autofill (conditional UI); its code loads only then. */
const startAutofill = () => import('../screens/Passkeys.tsx').then((m) => m.startConditional())
export const PHONE_PLACEHOLDER = '555 555 5555'

/**
 * The e-mail or phone input with its Submit button. Enter submits; the button is disabled
 * while submitting or while the value fails the check.
 */
export function DestinationForm({
  channel,
  helper,
  passkeys,
}: {
  channel: CodeChannel
  helper: string
  /** An e-mail field that also offers this site's passkeys (conditional UI) where it can. */
  passkeys?: boolean
}) {
  const [value, setValue] = useState('')
  const submitting = useModal((s) => s.submitting)
  const error = useModal((s) => s.submitError)
  const id = useId()
  const email = channel === 'email'
  const [, setPhoneReady] = useState(() => phoneCheck() !== null)
  useEffect(() => {
    if (!email) void loadPhoneCheck().then(() => setPhoneReady(true))
  }, [email])
  const checkPhone = phoneCheck()
  const valid = email ? validateEmail(value).ok : checkPhone ? checkPhone(value).ok : false
  const name = email ? 'email' : 'phone'
  return (
    <form
      className="latch-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        if (valid && !submitting) void submitDestination(channel, value)
      }}
    >
      <label htmlFor={id} className="latch-visually-hidden">
        {t(email ? 'emailLabel' : 'phoneLabel')}
      </label>
      <div className="latch-input-row">
        {email ? null : (
          <span className="latch-prefix" aria-hidden="true">
            +1
          </span>
        )}
        <input
          id={id}
          className="latch-input"
          type={email ? 'email' : 'tel'}
          inputMode={email ? 'email' : 'tel'}
          autoComplete={passkeys ? 'username webauthn' : email ? 'email' : 'tel-national'}
          placeholder={email ? EMAIL_PLACEHOLDER : PHONE_PLACEHOLDER}
          value={value}
          aria-invalid={error ? true : undefined}
          aria-describedby={`${id}-helper`}
          data-testid={`${name}-input`}
          data-autofocus
          onChange={(e) => setValue(e.target.value)}
          // The field's passkey autofill (conditional UI) starts when it takes the focus, which
          // the landing gives it as the modal opens; its code loads only then.
          onFocus={passkeys ? startAutofill : undefined}
        />
        <button
          type="submit"
          className="latch-button latch-button-primary latch-submit"
          disabled={submitting || !valid}
          aria-busy={submitting || undefined}
          data-testid={`${name}-submit`}
        >
          {t('submit')}
        </button>
      </div>
      <p id={`${id}-helper`} className="latch-helper" data-testid={`${name}-helper`}>
        {helper}
      </p>
      {error ? (
        <p className="latch-error" role="alert" data-testid="submit-error">
          {shownError(error)}
        </p>
      ) : null}
    </form>
  )
}
