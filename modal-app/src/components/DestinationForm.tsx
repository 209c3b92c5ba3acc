import { type CodeChannel, ERRORS, validateEmail } from '@latch/shared'
import { useEffect, useId, useLayoutEffect, useRef, useState } from 'react'
import { useModal } from '../hooks.ts'
import { shownError, t } from '../i18n/i18n.ts'
import { loadPhoneTools, phoneCountries, phoneTools } from '../passwordless/phone.ts'
import { store } from '../store.ts'

export const EMAIL_PLACEHOLDER = 'your@email.com'

/** The field's passkey autofill (conditional UI); its code loads only then. */
const startAutofill = () => import('../screens/Passkeys.tsx').then((m) => m.startConditional())
export const PHONE_PLACEHOLDER = '555 555 5555'

/**
 * The submit and what follows it (passwordless.ts): a chunk of its own, out of the landing's,
 * asked for as the form shows so it is there by the first submit.
 */
const loadSubmit = () => import('../passwordless/passwordless.ts')

/** Sends the code (passwordless.ts); a chunk that cannot load fails as the request would. */
function submit(channel: CodeChannel, destination: string): void {
  loadSubmit().then(
    (m) => m.submitDestination(channel, destination),
    () => {
      const failed = channel === 'email' ? ERRORS.email_submit_failed : ERRORS.phone_submit_failed
      store.setState({ submitError: failed.message })
    },
  )
}

/** How long the visitor pauses typing before a malformed value says why it is refused. */
export const INPUT_CHECK_PAUSE_MS = 1000

/**
 * The e-mail or phone input with its Submit button. Enter submits; the button is disabled
 * while submitting or while the value fails the check. A value that fails says why (the
 * check's own message) once the visitor pauses typing for INPUT_CHECK_PAUSE_MS or presses Enter,
 * and stops saying it as soon as the value passes.
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
  const field = useRef<HTMLInputElement>(null)
  // A field the modal server rendered keeps what the visitor typed before the JavaScript ran
  // (React hydrates it with the text on screen and an empty state): taken as typed.
  useLayoutEffect(() => {
    const typed = field.current?.value
    if (typed) setValue(typed)
  }, [])
  const submitting = useModal((s) => s.submitting)
  const error = useModal((s) => s.submitError)
  const id = useId()
  const email = channel === 'email'
  const [, setPhoneReady] = useState(() => phoneTools() !== null)
  useEffect(() => {
    if (!email) void loadPhoneTools().then(() => setPhoneReady(true))
  }, [email])
  useEffect(() => {
    loadSubmit().catch(() => {})
  }, [])
  // The app's SMS countries (the server refuses a number of any other), the first by default.
  const countries = phoneCountries(useModal((s) => s.app?.config.smsCountries))
  const [picked, setCountry] = useState<string | null>(null)
  const country = picked && countries.includes(picked) ? picked : (countries[0] ?? 'US')
  const tools = phoneTools()
  // A number in E.164, a national one read as one of the chosen country. One of a country the
  // app does not list goes to the server, whose refusal names the reason.
  const check = email ? validateEmail(value) : tools ? tools.validatePhone(value, country) : null
  const valid = check?.ok === true
  // Said once the visitor paused or pressed Enter: not at every keystroke of a half-typed value.
  const [paused, setPaused] = useState(false)
  useEffect(() => {
    setPaused(false)
    if (!value.trim()) return
    const timer = setTimeout(() => setPaused(true), INPUT_CHECK_PAUSE_MS)
    return () => clearTimeout(timer)
  }, [value])
  const problem = paused && check && !check.ok ? shownError(check.error.message) : null
  const name = email ? 'email' : 'phone'
  return (
    <form
      className="latch-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        if (!valid || submitting) return
        submit(channel, !email && check?.ok ? check.value : value)
      }}
    >
      <label htmlFor={id} className="latch-visually-hidden">
        {t(email ? 'emailLabel' : 'phoneLabel')}
      </label>
      <div className="latch-input-row">
        {email ? null : countries.length > 1 && tools ? (
          <tools.CountrySelect countries={countries} value={country} onChange={setCountry} />
        ) : (
          <span className="latch-prefix" aria-hidden="true">
            {tools?.dialCode(country) ?? (country === 'US' ? '+1' : country)}
          </span>
        )}
        <input
          ref={field}
          id={id}
          className="latch-input"
          type={email ? 'email' : 'tel'}
          inputMode={email ? 'email' : 'tel'}
          autoComplete={passkeys ? 'username webauthn' : email ? 'email' : 'tel-national'}
          // SPEC's US example; another country's own format is not guessed at.
          placeholder={email ? EMAIL_PLACEHOLDER : country === 'US' ? PHONE_PLACEHOLDER : ''}
          value={value}
          aria-invalid={error || problem ? true : undefined}
          aria-describedby={`${id}-problem ${id}-helper`}
          data-testid={`${name}-input`}
          data-autofocus
          onChange={(e) => setValue(e.target.value)}
          // Enter with Submit disabled submits nothing (HTML's implicit submission): it says why.
          onKeyDown={(e) => {
            if (e.key === 'Enter' && value.trim()) setPaused(true)
          }}
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
      {/* A live region from the first render, so the message is spoken when it appears. */}
      <p
        id={`${id}-problem`}
        className="latch-error"
        aria-live="polite"
        data-testid={`${name}-problem`}
      >
        {problem}
      </p>
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
