/**
 * Sign-in and linking with a code sent by e-mail or SMS (docs/behaviour.md,
 * "AWAITING_PASSWORDLESS_CODE"): the destination, the code entry, resending. The flow around it is
 * flow.ts's.
 */
import {
  CODE_ROUTE_PATHS,
  type CodeChannel,
  ERRORS,
  isLatchError,
  LatchError,
  validateCode,
  validateEmail,
} from '@latch/shared'
import { completeFlow } from '../flow/complete.ts'
import { type FlowHandle, navigate, onFlow } from '../flow/flow.ts'
import { locale } from '../i18n/i18n.ts'
import { runtime } from '../runtime.ts'
import { type PasswordlessState, store } from '../store.ts'
import { loadPhoneCheck } from './phone.ts'

/** The body naming the destination, as every code route of the channel reads it. */
function destinationBody(channel: CodeChannel, destination: string): Record<string, string> {
  return channel === 'email' ? { email: destination } : { phoneNumber: destination }
}

/** Init's body: the destination, and the visitor's language for the code's e-mail or SMS. */
const initBody = (channel: CodeChannel, destination: string): Record<string, string> => ({
  ...destinationBody(channel, destination),
  locale: locale(),
})

/** Sends a code to an e-mail address or phone number, then shows the code entry. */
export const submitDestination = onFlow(async function submitDestination(
  flow: FlowHandle,
  channel: CodeChannel,
  input: string,
): Promise<void> {
  const checked = channel === 'email' ? validateEmail(input) : (await loadPhoneCheck())(input)
  if (!checked.ok) {
    store.setState({ submitError: checked.error.message })
    return
  }
  if (store.getState().submitting) return
  store.setState({ submitting: true, submitError: null })
  try {
    await flow.guard(
      runtime().api.request(`${CODE_ROUTE_PATHS[channel]}/init`, initBody(channel, checked.value)),
    )
    store.setState({
      submitting: false,
      passwordless: { channel, destination: checked.value, status: 'idle', error: null },
      screen: 'AWAITING_PASSWORDLESS_CODE',
    })
  } catch (e) {
    const err = toError(e)
    if (err.is('allowlist_rejected')) return navigate('ALLOWLIST_REJECTION_SCREEN')
    const fallback = channel === 'email' ? ERRORS.email_submit_failed : ERRORS.phone_submit_failed
    store.setState({
      submitting: false,
      submitError: err.status === 422 ? err.message : fallback.message,
    })
  }
})

function setCode(patch: Partial<PasswordlessState>): void {
  const current = store.getState().passwordless
  if (current) store.setState({ passwordless: { ...current, ...patch } })
}

/** Clears the code error (the visitor edits the boxes again). */
export function clearCodeError(): void {
  const current = store.getState().passwordless
  if (current?.status === 'error') setCode({ status: 'idle', error: null })
}

/** Shows a code error before submitting (non-numeric input). */
export function setCodeError(message: string): void {
  setCode({ status: 'error', error: message })
}

/**
 * Checks and submits the six-digit code. Success shows 'Success!' and the flow's success
 * pause; a 422 reads 'Invalid or expired verification code', anything else 'Issue verifying
 * code'.
 */
export async function submitCode(input: string): Promise<void> {
  const { passwordless } = store.getState()
  if (!passwordless || passwordless.status === 'submitting' || passwordless.status === 'success') {
    return
  }
  const checked = validateCode(input)
  if (!checked.ok) {
    setCode({ status: 'error', error: checked.error.message })
    return
  }
  setCode({ status: 'submitting', error: null })
  const { channel, destination } = passwordless
  const body = { ...destinationBody(channel, destination), code: checked.value }
  try {
    await completeFlow(CODE_ROUTE_PATHS[channel], body, 'code', () =>
      setCode({ status: 'success', error: null }),
    )
  } catch (e) {
    const err = toError(e)
    if (err.is('allowlist_rejected')) return navigate('ALLOWLIST_REJECTION_SCREEN')
    setCode({
      status: 'error',
      error:
        err.status === 422
          ? ERRORS.invalid_verification_code.message
          : ERRORS.code_verification_failed.message,
      // The code entry empties its boxes: digits typed next are a new code, not edits of this one.
      refusals: (passwordless.refusals ?? 0) + 1,
    })
  }
}

/** Whole seconds left of a refused resend's wait at `now` (0: 'Resend code' works again). */
export function resendSecondsLeft(wait: PasswordlessState['resendWait'], now: number): number {
  if (!wait) return 0
  return Math.max(0, wait.seconds - Math.floor((now - wait.at) / 1000))
}

/** Sends the code again to the same destination; nothing while the server's wait runs. */
export async function resendCode(): Promise<void> {
  const passwordless = store.getState().passwordless
  if (!passwordless || resendSecondsLeft(passwordless.resendWait, Date.now()) > 0) return
  try {
    await runtime().api.request(
      `${CODE_ROUTE_PATHS[passwordless.channel]}/init`,
      initBody(passwordless.channel, passwordless.destination),
    )
    setCode({ status: 'idle', error: null, resendWait: null })
  } catch (e) {
    // Inside the server's wait between two codes the refusal is a 429 with the seconds left:
    // the button counts them down, rather than a verification failure the visitor did not have.
    const wait = isLatchError(e) && e.is('too_many_requests')
    if (wait && e.retryAfter) {
      setCode({ resendWait: { seconds: Math.ceil(e.retryAfter), at: Date.now() } })
      return
    }
    setCode({
      status: 'error',
      error: (wait ? ERRORS.too_many_requests : ERRORS.code_verification_failed).message,
    })
  }
}

function toError(e: unknown): LatchError {
  return isLatchError(e) ? e : LatchError.of('internal_error', { cause: e })
}
