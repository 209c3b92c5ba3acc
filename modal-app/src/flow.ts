/**
 * The flow engine: where a flow starts, pauses and ends. Every flow the host waits on (login(),
 * link(), an OAuth return) goes through these functions; its state lives in the store.
 *
 * - Starts: `startFlow` opens the modal on the flow's first screen and hands the host a promise
 *   (or joins the same flow already running). `login()` and `link()` are the host's entries;
 *   oauth.ts starts social links and OAuth returns the same way.
 * - Pauses: `completeFlow` signs in or links with the verified proof (a code, an OAuth return),
 *   shows success, and `succeed` keeps it on screen for the success pause.
 * - Ends: after the pause, the first next step that claims the finished flow takes the modal
 *   over (`addNextStep`); otherwise `finishFlow` closes the modal and settles the host's
 *   promise with the result. `exitFlow` is the visitor leaving: a finished flow still delivers,
 *   an unfinished one rejects with login_exited or link_exited.
 */
import {
  type ErrorCode,
  embeddedWallet,
  type HostAppConfig,
  isLatchError,
  LatchError,
  type LinkKind,
  type LoginResult,
  type ServerAppConfig,
  SUCCESS_CLOSE_DELAY_MS,
  type User,
} from '@latch/shared'
import { signInOrLink } from './account.ts'
import { track } from './analytics.ts'
import { type AppView, mergeConfig } from './config.ts'
import { callHost, runtime } from './runtime.ts'
import type { ScreenId } from './screens/ids.ts'
import {
  FLOW_STATE_RESET,
  type Flow,
  type FlowValue,
  initialState,
  store,
  type Waiting,
} from './store.ts'

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

export function navigate(screen: ScreenId): void {
  store.setState({ screen, submitError: null, submitting: false })
}

// ---- Start -------------------------------------------------------------------------------

/** Two flows are the same when they do the same thing (a host call then joins the running one). */
export function sameFlow(a: Flow | null, b: Flow): boolean {
  // Each signature, transaction or export is its own request: never joined.
  if (WALLET_REQUESTS.has(b.kind)) return false
  return a?.kind === b.kind && (a.kind !== 'link' || a.account === (b as typeof a).account)
}

/**
 * The host's requests of the in-app wallet: each puts a decision in front of the visitor (what
 * to sign, what to send, whether to show the key), so none may replace another on screen.
 */
const WALLET_REQUESTS: ReadonlySet<Flow['kind']> = new Set([
  'sign',
  'send-transaction',
  'export-wallet',
])

/**
 * Whether `next` must be refused with 'Request already pending' (-32002) now: a wallet request
 * awaits the visitor's answer, or `next` is one and another flow awaits theirs, or the modal may
 * not be left (a transaction being submitted). Refused rather than queued: what the visitor
 * looks at never changes under their cursor, the request on screen keeps its own promise, and
 * the caller hears at once (a queue would keep a dapp's retry or double click waiting unseen
 * behind a screen it does not know about). A request that already settled (the 'Success'
 * pause after a signature) is not pending: the next one takes the modal over.
 */
export function requestPending(next: Flow): boolean {
  const { flow, waiting, closeBlocked } = store.getState()
  if (closeBlocked) return true
  if (!waiting || !flow) return false
  return WALLET_REQUESTS.has(flow.kind) || WALLET_REQUESTS.has(next.kind)
}

/**
 * Starts a flow the host waits on (login or link) on its first screen, or joins the same flow
 * already running: the host's promise then settles with it. Another running flow is left
 * (its caller's promise rejects), unless one of the two is a wallet request: then `flow` is
 * refused (requestPending).
 */
export function startFlow<T extends FlowValue>(flow: Flow, screen: ScreenId): Promise<T> {
  const { flow: running, waiting } = store.getState()
  if (requestPending(flow)) return Promise.reject(LatchError.of('rpc_request_pending'))
  if (waiting && sameFlow(running, flow)) return waiting.promise as Promise<T>
  rejectWaiting()
  let resolve!: Waiting['resolve']
  let reject!: Waiting['reject']
  const promise = new Promise<FlowValue>((res, rej) => {
    resolve = res
    reject = rej
  })
  const wasOpen = store.getState().open
  store.setState({
    ...flowReset(),
    flow,
    waiting: { promise, resolve, reject },
    screen,
    open: true,
  })
  // Told even when the modal thinks it is open: a host that closed its dialog meanwhile (a
  // failed call closes it) shows it again, so no request waits on a hidden screen.
  callHost('setOpen', true)
  if (!wasOpen) track('modal_open')
  return promise as Promise<T>
}

/** login(): opens the landing; resolves when the modal closes after a sign-in. */
export function login(): Promise<LoginResult> {
  const { app, user, flow } = store.getState()
  if (!app) return Promise.reject(LatchError.of('something_went_wrong'))
  // A sign-in in progress (an OAuth return) is joined, so its result keeps isNewUser.
  if (user && runtime().session.isAuthenticated() && flow?.kind !== 'login')
    return Promise.resolve({ user, isNewUser: false })
  return startFlow<LoginResult>({ kind: 'login' }, 'LANDING')
}

const LINK_SCREENS = {
  email: 'LINK_EMAIL_SCREEN',
  phone: 'LINK_PHONE_SCREEN',
  wallet: 'LINK_WALLET_SCREEN',
} as const satisfies Record<string, ScreenId>

/** link(kind) for an e-mail address, a phone number or an external wallet (social: oauth.ts). */
export function link(kind: LinkKind): Promise<User> {
  const { app, user } = store.getState()
  if (!app) return Promise.reject(LatchError.of('something_went_wrong'))
  if (kind !== 'email' && kind !== 'phone' && kind !== 'wallet') {
    return Promise.reject(LatchError.of('method_not_available'))
  }
  if (!user) return Promise.reject(LatchError.of('not_authenticated'))
  return startFlow<User>({ kind: 'link', account: kind }, LINK_SCREENS[kind])
}

/** The current flow's generation: an answer arriving after it changed must change nothing. */
export function flowGeneration(): number {
  return store.getState().generation
}

// ---- Pause -------------------------------------------------------------------------------

/** How the flow was verified: the pause differs (SPEC section 4: OAuth does not pause inline). */
export type Verified = 'code' | 'oauth' | 'wallet'

/**
 * What takes the modal over after a successful flow instead of closing it (e.g. creating the
 * in-app wallet at login). `start` runs after `pauseMs` of success screen, the modal open and
 * the host still waiting; the step ends the flow with `finishFlow()` or `exitFlow()`.
 */
export interface NextStep {
  /** The success pause before the step, in a dialog (e.g. 500 ms before wallet creation). */
  pauseMs: number
  start(): void
}

/** Decides whether a finished flow has a next step; null lets the modal close. */
export type NextStepRule = (finished: {
  flow: Flow
  result: LoginResult
  app: AppView
}) => NextStep | null

/**
 * The rules, asked in order. They are configuration a feature adds when its module loads, not
 * flow state, so they are kept apart from the store and outlive its reset.
 */
const nextStepRules: NextStepRule[] = []

/**
 * Hangs a next step on every successful flow; answers its removal.
 * @example addNextStep(({ flow }) => flow.kind === 'login' ? { pauseMs: 500, start } : null)
 */
export function addNextStep(rule: NextStepRule): () => void {
  nextStepRules.push(rule)
  return () => {
    const at = nextStepRules.indexOf(rule)
    if (at >= 0) nextStepRules.splice(at, 1)
  }
}

/**
 * Completes the flow on screen with a verified proof: POST `{path}/authenticate` for a sign-in
 * or `{path}/link` for a link, then `showSuccess` and the success pause. An answer (or failure)
 * arriving after the flow changed changes nothing; other failures are thrown to the caller.
 */
export async function completeFlow(
  path: string,
  body: Record<string, string>,
  verified: Verified,
  showSuccess: () => void,
  /** Headers of the proof's request (the SIWE browser binding). */
  headers?: Record<string, string>,
): Promise<void> {
  const started = flowGeneration()
  const intent = store.getState().flow?.kind === 'link' ? 'link' : 'login'
  let result: LoginResult
  try {
    // Signed in even if the visitor closed the modal meanwhile: the host hears of it by 'user'.
    result = await signInOrLink(intent, path, body, headers)
  } catch (e) {
    if (started === flowGeneration()) throw e
    return
  }
  if (started !== flowGeneration()) return
  showSuccess()
  succeed(result, verified)
}

/**
 * The flow succeeded: keep the success screen for the pause (1400 ms; 0 for OAuth when the
 * modal is inline; the next step's own pause), then hand over to the next step or end.
 */
export function succeed(result: LoginResult, verified: Verified): void {
  const { flow, app } = store.getState()
  if (result.isNewUser) store.setState({ newUserId: result.user.id })
  let step: NextStep | null = null
  if (flow && app) {
    for (const rule of nextStepRules) {
      step = rule({ flow, result, app })
      if (step) break
    }
  }
  const pauseMs =
    verified === 'oauth' && app?.inDialog === false ? 0 : (step?.pauseMs ?? SUCCESS_CLOSE_DELAY_MS)
  const started = flowGeneration()
  const then = step ? step.start : finishFlow
  stopPause()
  store.setState({
    result,
    // The generation guard keeps a pause from reaching a flow started since.
    pauseTimer: setTimeout(() => started === flowGeneration() && then(), pauseMs),
  })
}

function stopPause(): void {
  const timer = store.getState().pauseTimer
  if (timer) clearTimeout(timer)
}

// ---- End ---------------------------------------------------------------------------------

/** Closes the modal and hands the result to whoever is waiting (and the 'login' event). */
export function finishFlow(tellHost = true): void {
  const { result, flow, waiting, delivery } = store.getState()
  closeModal(tellHost)
  if (delivery) {
    waiting?.resolve(delivery.value)
    return
  }
  if (!result) return
  if (flow?.kind === 'login') callHost('emit', 'login', result)
  if (!waiting) return
  if (flow?.kind === 'link') waiting.resolve(result.user)
  else if (flow?.kind === 'create-wallet' || flow?.kind === 'recover-wallet') {
    // A wallet flow's result is the user the server answered after the wallet was made usable.
    const wallet = embeddedWallet(result.user.linkedAccounts)
    if (wallet) waiting.resolve(wallet)
    else waiting.reject(LatchError.of('something_went_wrong'))
  } else waiting.resolve(result)
}

/**
 * The visitor left: the close button or Escape inside the modal (tellHost), or the host closed
 * its dialog. A finished flow still delivers its result; otherwise the caller's promise
 * rejects with login_exited or link_exited.
 */
export function exitFlow(tellHost: boolean): void {
  // A transaction being submitted cannot be left: its outcome must reach the caller.
  if (store.getState().closeBlocked) return
  if (store.getState().result || store.getState().delivery) {
    finishFlow(tellHost)
    return
  }
  rejectWaiting()
  closeModal(tellHost)
}

/**
 * The flow cannot go on (e.g. the session ended under a wallet screen): its caller rejects with
 * `error` and the modal shows `screen`, where a visitor can start again (LANDING: a new sign-in
 * that nobody waits on yet, as after an OAuth return).
 */
export function abandonFlow(error: LatchError, screen: ScreenId): void {
  const { waiting } = store.getState()
  store.setState({ ...flowReset(), flow: { kind: 'login' }, waiting: null, screen })
  waiting?.reject(error)
}

/**
 * The visitor was signed out (logout(), a revoked session, a failed refresh) or another user
 * signed in under a wallet request: it cannot be answered for them any more. One already
 * answered (a receipt, a key shown) is delivered; any other rejects with 'User is not
 * authenticated.' at once, and the modal closes, so the next request starts clean.
 */
function endWalletRequest(): void {
  const { flow, waiting, delivery } = store.getState()
  if (!flow || !WALLET_REQUESTS.has(flow.kind)) return
  if (delivery) {
    finishFlow()
    return
  }
  store.setState({ waiting: null })
  closeModal(true)
  waiting?.reject(LatchError.of('not_authenticated'))
}

store.subscribe((state, previous) => {
  if (previous.user && state.user?.id !== previous.user.id) endWalletRequest()
})

function rejectWaiting(): void {
  const { flow, waiting } = store.getState()
  if (!waiting) return
  store.setState({ waiting: null })
  waiting.reject(LatchError.of(EXITED[flow?.kind ?? 'login']))
}

/** What a caller hears when the visitor leaves an unfinished flow (SPEC section 8). */
const EXITED = {
  login: 'login_exited',
  link: 'link_exited',
  'create-wallet': 'create_exited',
  'recover-wallet': 'recovery_exited',
  // Closing the sign screen declines the signature (EIP-1193's 4001 for a provider).
  sign: 'signature_rejected',
  'send-transaction': 'transaction_exited',
  // Closing before the key was shown (after, exportWallet() resolves).
  'export-wallet': 'export_exited',
  // Closing before a wallet connected (after, the connection is delivered).
  'connect-wallet': 'connect_exited',
  // Closing before a wallet app was chosen (its fork token then opens nothing: unused).
  'fork-session': 'fork_exited',
} as const satisfies Record<Flow['kind'], ErrorCode>

/** Everything a flow leaves behind, and a new generation. */
function flowReset() {
  stopPause()
  return { ...FLOW_STATE_RESET, generation: store.getState().generation + 1 }
}

function closeModal(tellHost: boolean): void {
  const wasOpen = store.getState().open
  store.setState({
    ...flowReset(),
    open: false,
    flow: null,
    waiting: null,
    screen: initialState.screen,
  })
  if (tellHost) callHost('setOpen', false)
  if (wasOpen) track('modal_closed')
}
