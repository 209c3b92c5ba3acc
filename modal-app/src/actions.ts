/**
 * Module-level actions over the store: the flows of SPEC sections 2 and 4 for e-mail and SMS
 * codes, and the pending login()/link() promises the host is waiting on.
 */
import {
  type AuthResponse,
  ERRORS,
  type HostAppConfig,
  isLatchError,
  LatchError,
  type LinkKind,
  type LoginResult,
  type ServerAppConfig,
  SUCCESS_CLOSE_DELAY_MS,
  type UnlinkTarget,
  type User,
  validateCode,
  validateEmail,
} from '@latch/shared'
import { track } from './analytics.ts'
import { mergeConfig } from './config.ts'
import { checkUnlinkTarget } from './config-check.ts'
import { loadPhoneCheck } from './phone.ts'
import { callHost, runtime } from './runtime.ts'
import type { ScreenId } from './screens/ids.ts'
import { type Channel, type Flow, initialState, store } from './store.ts'

interface Pending {
  flow: Flow
  promise: Promise<LoginResult | User>
  resolve(value: LoginResult | User): void
  reject(error: LatchError): void
}

let pending: Pending | null = null
let closeTimer: ReturnType<typeof setTimeout> | null = null
/** Bumped whenever a flow starts or ends: an answer arriving after that changes nothing. */
let generation = 0

const CHANNEL_PATH: Record<Channel, string> = {
  email: '/passwordless',
  sms: '/passwordless_sms',
}

/** Applies the merged configuration: the modal is ready. */
export function initialize(server: ServerAppConfig, host: HostAppConfig): void {
  store.setState({ app: mergeConfig(server, host), status: 'ready', error: null })
}

/** Shows the general error view. */
export function fail(error: unknown): void {
  store.setState({
    status: 'error',
    error: isLatchError(error) ? error : LatchError.of('something_went_wrong', { cause: error }),
  })
}

export function setUser(user: User | null): void {
  const previous = store.getState().user
  store.setState({ user })
  if (previous && !user) callHost('emit', 'logout', undefined)
  callHost('emit', 'user', user)
}

export function navigate(screen: ScreenId): void {
  store.setState({ screen, submitError: null, submitting: false })
}

/** The back target of the code screen depends on the flow that led to it. */
export function codeScreenBack(): ScreenId {
  const flow = store.getState().flow
  if (flow?.kind === 'link')
    return flow.account === 'email' ? 'LINK_EMAIL_SCREEN' : 'LINK_PHONE_SCREEN'
  return 'LANDING'
}

/**
 * Starts a flow the host waits on (login or link), or joins the same flow already pending: the
 * host's promise then settles with it. Exported for the OAuth flow (oauth.ts).
 */
export function startFlow<T extends LoginResult | User>(flow: Flow, screen: ScreenId): Promise<T> {
  if (pending) {
    if (pending.flow.kind === flow.kind && JSON.stringify(pending.flow) === JSON.stringify(flow)) {
      return pending.promise as Promise<T>
    }
    rejectPending()
  }
  let resolve!: (value: LoginResult | User) => void
  let reject!: (error: LatchError) => void
  const promise = new Promise<LoginResult | User>((res, rej) => {
    resolve = res
    reject = rej
  })
  pending = { flow, promise, resolve, reject }
  generation += 1
  const wasOpen = store.getState().open
  store.setState({
    ...flowReset(),
    flow,
    screen,
    open: true,
  })
  if (!wasOpen) {
    callHost('setOpen', true)
    track('modal_open')
  }
  return promise as Promise<T>
}

function flowReset() {
  return {
    submitting: false,
    submitError: null,
    passwordless: null,
    oauth: null,
    result: null,
  }
}

/** The current flow's generation: an answer arriving after it changed must change nothing. */
export function flowGeneration(): number {
  return generation
}

/** The pending flow the host may be waiting on, if any. */
export function pendingFlow(): Flow | null {
  return pending?.flow ?? null
}

/** Closes the modal and delivers the finished flow's result after `ms`. */
export function scheduleFinish(ms: number): void {
  if (closeTimer) clearTimeout(closeTimer)
  closeTimer = setTimeout(finishFlow, ms)
}

/** login(): opens the landing; resolves when the modal closes after a sign-in. */
export function login(): Promise<LoginResult> {
  const { app, user } = store.getState()
  if (!app) return Promise.reject(LatchError.of('something_went_wrong'))
  // A sign-in in progress (an OAuth return) is joined, so its result keeps isNewUser.
  if (user && runtime().session.isAuthenticated() && pending?.flow.kind !== 'login')
    return Promise.resolve({ user, isNewUser: false })
  return startFlow<LoginResult>({ kind: 'login' }, 'LANDING')
}

/** link(kind): e-mail and phone for now; the other kinds arrive with their issues. */
export function link(kind: LinkKind): Promise<User> {
  const { app, user } = store.getState()
  if (!app) return Promise.reject(LatchError.of('something_went_wrong'))
  if (kind !== 'email' && kind !== 'phone') {
    return Promise.reject(LatchError.of('method_not_available'))
  }
  if (!user) return Promise.reject(LatchError.of('not_authenticated'))
  return startFlow<User>(
    { kind: 'link', account: kind },
    kind === 'email' ? 'LINK_EMAIL_SCREEN' : 'LINK_PHONE_SCREEN',
  )
}

/** Sends a code to an e-mail address or phone number, then shows the code entry. */
export async function submitDestination(channel: Channel, input: string): Promise<void> {
  const checked = channel === 'email' ? validateEmail(input) : (await loadPhoneCheck())(input)
  if (!checked.ok) {
    store.setState({ submitError: checked.error.message })
    return
  }
  if (store.getState().submitting) return
  store.setState({ submitting: true, submitError: null })
  const body = channel === 'email' ? { email: checked.value } : { phoneNumber: checked.value }
  const started = generation
  try {
    await runtime().api.request(`${CHANNEL_PATH[channel]}/init`, body)
    if (started !== generation) return
    store.setState({
      submitting: false,
      passwordless: { channel, destination: checked.value, status: 'idle', error: null },
      screen: 'AWAITING_PASSWORDLESS_CODE',
    })
  } catch (e) {
    if (started !== generation) return
    const err = toError(e)
    if (err.is('allowlist_rejected')) return navigate('ALLOWLIST_REJECTION_SCREEN')
    const fallback = channel === 'email' ? ERRORS.email_submit_failed : ERRORS.phone_submit_failed
    store.setState({
      submitting: false,
      submitError: err.status === 422 ? err.message : fallback.message,
    })
  }
}

function setCode(patch: Partial<NonNullable<ReturnType<typeof store.getState>['passwordless']>>) {
  const current = store.getState().passwordless
  if (current) store.setState({ passwordless: { ...current, ...patch } })
}

/** Clears the code error (the visitor edits the boxes again). */
export function clearCodeError(): void {
  const current = store.getState().passwordless
  if (current?.status === 'error') setCode({ status: 'idle', error: null })
}

/**
 * Checks and submits the six-digit code. Success shows 'Success!' and closes after 1400 ms;
 * a 422 reads 'Invalid or expired verification code', anything else 'Issue verifying code'.
 */
export async function submitCode(input: string): Promise<void> {
  const { passwordless, flow } = store.getState()
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
  const body =
    channel === 'email'
      ? { email: destination, code: checked.value }
      : { phoneNumber: destination, code: checked.value }
  const { api, session } = runtime()
  const started = generation
  try {
    let result: LoginResult
    if (flow?.kind === 'link') {
      const res = await api.request<User | { user: User }>(`${CHANNEL_PATH[channel]}/link`, body)
      const user = 'user' in res ? res.user : res
      setUser(user)
      result = { user, isNewUser: false }
    } else {
      const res = await api.request<AuthResponse>(`${CHANNEL_PATH[channel]}/authenticate`, body)
      // Signed in even if the visitor closed the modal meanwhile: the host hears of it by 'user'.
      session.start(res, res.user)
      result = { user: res.user, isNewUser: res.is_new_user }
    }
    if (started !== generation) return
    store.setState({ result })
    setCode({ status: 'success', error: null })
    closeTimer = setTimeout(finishFlow, SUCCESS_CLOSE_DELAY_MS)
  } catch (e) {
    if (started !== generation) return
    const err = toError(e)
    if (err.is('allowlist_rejected')) return navigate('ALLOWLIST_REJECTION_SCREEN')
    setCode({
      status: 'error',
      error:
        err.status === 422
          ? ERRORS.invalid_verification_code.message
          : ERRORS.code_verification_failed.message,
    })
  }
}

/** Sends the code again to the same destination. */
export async function resendCode(): Promise<void> {
  const passwordless = store.getState().passwordless
  if (!passwordless) return
  const body =
    passwordless.channel === 'email'
      ? { email: passwordless.destination }
      : { phoneNumber: passwordless.destination }
  try {
    await runtime().api.request(`${CHANNEL_PATH[passwordless.channel]}/init`, body)
    setCode({ status: 'idle', error: null })
  } catch {
    setCode({ status: 'error', error: ERRORS.code_verification_failed.message })
  }
}

/** After success: close and hand the result to whoever is waiting. */
export function finishFlow(tellHost = true): void {
  if (closeTimer) clearTimeout(closeTimer)
  closeTimer = null
  const { result, flow } = store.getState()
  closeModal(tellHost)
  const waiting = pending
  pending = null
  if (!result) return
  if (flow?.kind === 'login') callHost('emit', 'login', result)
  if (waiting) waiting.resolve(waiting.flow.kind === 'login' ? result : result.user)
}

/**
 * The visitor left: the close button or Escape inside the modal (tellHost), or the host closed
 * its dialog. A finished flow still delivers its result; otherwise the caller's promise
 * rejects with login_exited or link_exited.
 */
export function exitFlow(tellHost: boolean): void {
  const state = store.getState()
  if (state.result) {
    finishFlow(tellHost)
    return
  }
  rejectPending()
  closeModal(tellHost)
}

function rejectPending(): void {
  const waiting = pending
  pending = null
  if (!waiting) return
  waiting.reject(LatchError.of(waiting.flow.kind === 'login' ? 'login_exited' : 'link_exited'))
}

function closeModal(tellHost: boolean): void {
  generation += 1
  const wasOpen = store.getState().open
  store.setState({
    ...flowReset(),
    open: false,
    flow: null,
    screen: initialState.screen,
  })
  if (tellHost) callHost('setOpen', false)
  if (wasOpen) track('modal_closed')
}

export async function logout(): Promise<void> {
  await runtime().session.logout()
}

const UNLINK_PATHS: Record<string, string> = {
  email: '/passwordless/unlink',
  phone: '/passwordless_sms/unlink',
  wallet: '/siwe/unlink',
}

/** Removes a linked account; answers the updated user. */
export async function unlink(target: UnlinkTarget): Promise<User> {
  const account = checkUnlinkTarget(target)
  if (!store.getState().user) throw LatchError.of('not_authenticated')
  let path: string
  let body: Record<string, string>
  if (account.type === 'email') {
    path = UNLINK_PATHS.email as string
    body = { address: account.address }
  } else if (account.type === 'phone') {
    path = UNLINK_PATHS.phone as string
    body = { phoneNumber: account.number }
  } else if (account.type === 'wallet') {
    path = UNLINK_PATHS.wallet as string
    body = { address: account.address }
  } else {
    path = '/oauth/unlink'
    body = { provider: account.type.replace(/_oauth$/, ''), subject: account.subject }
  }
  const res = await runtime().api.request<User | { user: User }>(path, body)
  const user = 'user' in res ? res.user : res
  setUser(user)
  return user
}

function toError(e: unknown): LatchError {
  return isLatchError(e) ? e : LatchError.of('internal_error', { cause: e })
}

/** For tests: forget the pending flow and timers. */
export function resetActions(): void {
  if (closeTimer) clearTimeout(closeTimer)
  closeTimer = null
  pending = null
}

/** Shows a code error before submitting (non-numeric input). */
export function setCodeError(message: string): void {
  setCode({ status: 'error', error: message })
}
