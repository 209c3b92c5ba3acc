/**
 * The flow engine: where a flow starts, pauses and ends, and the one place that says how. Every
 * flow the host waits on (login(), link(), the wallet requests, an OAuth return) goes through
 * here; what its screens render lives in the store, and its life in its handle (FlowHandle).
 *
 * - Starts: `startFlow` opens the modal on the flow's first screen and answers the flow's
 *   handle, whose `promise` is the host's (or joins the same flow already running). `login()`
 *   and `link()` are the host's entries; the other flows start the same way.
 * - Pauses: an answer awaited through `flow.guard()` reaches the flow only while it is the one
 *   on screen. `completeFlow` signs in or links with a verified proof and `succeed` keeps the
 *   success screen for the pause; a wallet request's value goes through `deliver()`
 *   (deliver.ts, loaded with the wallet requests).
 * - Ends: after the pause, the first next step that claims the finished flow takes the modal
 *   over (`addNextStep`); otherwise `finishFlow` closes the modal and settles the host's
 *   promise with the result. `exitFlow` is the visitor leaving: a finished flow still delivers,
 *   an unfinished one rejects with login_exited, link_exited and the like. `flow.fail()` ends
 *   it with an error.
 *
 * One handle per generation: every start and every end opens a new one (a closed modal has an
 * empty one), so "is this answer still for the flow that asked?" is `alive()`, asked here and in
 * deliver.ts only. Flow code never holds another life token: a step a screen calls is declared
 * with `onFlow` and gets the handle of the flow on screen; a sub-step that a later one replaces
 * on the same screen (a connector attempt) guards its answers with `flow.step(screen)`.
 */
import {
  type ConnectedWallet,
  type ErrorCode,
  embeddedWallet,
  type Hex,
  type HostAppConfig,
  isLatchError,
  LatchError,
  type LoginResult,
  type ServerAppConfig,
  SUCCESS_CLOSE_DELAY_MS,
  type TransactionReceipt,
  type User,
  type WalletAccount,
} from '@latch/shared'
import { t, tf } from '../i18n/i18n.ts'
import { callHost, runtime, signedOutError } from '../runtime.ts'
import type { ScreenId } from '../screens/ids.ts'
import { track } from '../session/analytics.ts'
import { type AppView, mergeConfig } from '../startup/config.ts'
import { FLOW_STATE_RESET, type Flow, initialState, store } from '../store.ts'

/** Applies the merged configuration: the modal is ready. */
export function initialize(server: ServerAppConfig, host: HostAppConfig): void {
  store.setState({ app: mergeConfig(server, host), status: 'ready', error: null })
}

/** The modal's name as a dialog: 'Log in to {app}', in the visitor's language. */
export function dialogLabel(): string {
  const name = store.getState().app?.name
  return name ? tf('dialog', { app: name }) : t('dialogPlain')
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

// ---- The handle --------------------------------------------------------------------------

/** What a flow delivers to the host: a sign-in, a user, a wallet, a signature or a receipt. */
export type FlowValue =
  | LoginResult
  | User
  | WalletAccount
  | Hex
  | TransactionReceipt
  | ConnectedWallet
  | string

/** A wallet request's value: reached before the modal closes, delivered when it does. */
export type Delivered = Hex | TransactionReceipt | ConnectedWallet | string

/** The host's call waiting on the flow; settled once, when the flow ends. */
interface Waiting {
  promise: Promise<FlowValue>
  resolve(value: FlowValue): void
  reject(error: LatchError): void
}

/** What a proof does for the flow on screen: sign the visitor in, or add it to their user. */
export type Intent = 'login' | 'link'

/** A part of a flow that a later part may replace on the same screen (a connector attempt). */
export interface FlowStep {
  /**
   * As the handle's guard, and also never settles once the screen changed or a later step of
   * the flow began.
   */
  guard<V>(work: Promise<V>): Promise<V>
}

/**
 * A flow's life, from its start to its end. Flow code takes it from `startFlow` or, for a step
 * that a screen calls (a click), as the first argument of an action declared with `onFlow`,
 * and never asks the store whether the flow changed.
 */
export interface FlowHandle<T extends FlowValue = FlowValue> {
  /** The host's promise: settles when the flow ends. */
  readonly promise: Promise<T>
  /** Whether a proof verified now links it to the signed-in user or signs the visitor in. */
  readonly intent: Intent
  /** Whether this is still the flow on screen (none started or ended since). */
  alive(): boolean
  /**
   * `work`'s outcome while this flow is alive; once the flow has changed, a promise that never
   * settles. The step awaiting it ends there: what follows the await runs for the current flow
   * only, and no caller has to tell a stale answer from a real one (a sentinel would have each
   * of them check again). Nothing waits on a step (screens fire them and read the store), and
   * the dropped continuation is collected with `work`. What must happen even for a flow that
   * changed (a count the server made, a wallet proven on this device) happens inside `work`.
   */
  guard<V>(work: Promise<V>): Promise<V>
  /**
   * A sub-step on `screen` (a connector attempt, begun again by Retry): its guard lets an answer
   * through only while this flow is alive, the screen is still `screen` and no later step began.
   */
  step(screen: ScreenId): FlowStep
  /**
   * A finished sign-in or link (or the user with a new wallet), delivered when the modal closes.
   */
  result: LoginResult | null
  /**
   * The last failure of a step the visitor may retry (a wallet call the API refused, the network
   * down). Leaving then rejects with it: the caller hears the cause, not a decline or an exit
   * the visitor did not choose. A step that starts again clears it.
   */
  failure: LatchError | null
  /** The landing's section the visitor opened last in this flow (Landing.tsx); Back shows it. */
  section?: string
  /** Closes the modal and settles the caller with what the flow has. */
  finish(): void
  /**
   * The flow cannot go on: its caller rejects with `error`. With `screen`, the modal stays
   * there on a sign-in nobody waits on yet (a visitor can start again); without, it closes.
   */
  fail(error: LatchError, screen?: ScreenId): void
  /**
   * The wallet refused this browser (its credential cookie missing: refused by the browser, or
   * older than the server's secrets): nothing the visitor does in this flow helps, so the caller
   * rejects with `error` at once and the modal shows why, and what to do, in place of the screen
   * until the visitor closes it. A sign-in that finished first (a wallet created at login) is
   * still delivered on close.
   */
  refuse(error: LatchError): void
}

/**
 * The handle with what only the engine reads (flow.ts, and deliver.ts for the wallet requests):
 * its generation, its caller, its delivered value.
 */
export interface RunningFlow extends FlowHandle {
  readonly generation: number
  waiting: Waiting | null
  delivery: { value: Delivered } | null
  /** The host's promise; a flow that ran without a caller takes one on (startFlow). */
  promise: Promise<FlowValue>
  /** `then` after `ms`, unless the flow has changed by then; replaces a pause running. */
  pause(ms: number, then: () => void): void
  /** Its timers stop: another flow took over. */
  end(): void
}

/**
 * A flow's handle. A closure rather than a class: its timers stay local names the minifier
 * shortens, which the landing's budget (size.test.ts) counts.
 */
function runningFlow(
  generation: number,
  waiting: Waiting | null,
  promise: Promise<FlowValue> = waiting?.promise ?? new Promise<FlowValue>(() => {}),
): RunningFlow {
  let pauseTimer: ReturnType<typeof setTimeout> | undefined
  let steps = 0
  const alive = () => current === flow && store.getState().generation === generation
  const guardWhile =
    (live: () => boolean) =>
    <V>(work: Promise<V>) =>
      new Promise<V>((resolve, reject) => {
        work.then(
          (value) => live() && resolve(value),
          (error: unknown) => live() && reject(error),
        )
      })
  const flow: RunningFlow = {
    generation,
    waiting,
    promise,
    result: null,
    failure: null,
    delivery: null,
    get intent() {
      return store.getState().flow?.kind === 'link' ? 'link' : 'login'
    },
    alive,
    guard: guardWhile(alive),
    step(screen) {
      const at = ++steps
      return {
        guard: guardWhile(() => alive() && steps === at && store.getState().screen === screen),
      }
    },
    pause(ms, then) {
      clearTimeout(pauseTimer)
      pauseTimer = setTimeout(() => alive() && then(), ms)
    },
    finish: () => alive() && finishFlow(),
    fail(error, screen) {
      if (!alive()) return
      const caller = flow.waiting
      flow.waiting = null
      if (screen) store.setState({ ...flowReset(), flow: { kind: 'login' }, screen })
      else closeModal(true)
      caller?.reject(error)
    },
    refuse(error) {
      if (!alive()) return
      flow.failure = null
      store.setState({ walletRefused: true, closeBlocked: false })
      if (flow.result || flow.delivery) return
      const caller = flow.waiting
      flow.waiting = null
      caller?.reject(error)
      // The host closes its dialog on a failed call; told once the rejection's answer has gone
      // out (a task later; messages keep their order), it shows the view again: the visitor
      // still has to read what to do.
      setTimeout(() => alive() && callHost('setOpen', true, dialogLabel()), 0)
    },
    end: () => clearTimeout(pauseTimer),
  }
  return flow
}

/** The flow of the current generation (an empty one while the modal is closed). */
let current = runningFlow(store.getState().generation, null)

/**
 * The flow on screen, taken at the start of a step a screen calls (a click): its `guard` and
 * `alive` then tell whether an answer is still for it. Flow code gets it through `onFlow`.
 */
export function currentFlow(): FlowHandle {
  return current
}

/**
 * Declares an action a screen calls (a click) as a step of the flow on screen: `body` gets that
 * flow's handle first, taken when the action is called.
 * @example export const submitCode = onFlow(async (flow, code: string) => { await flow.guard(…) })
 */
export function onFlow<A extends unknown[], R>(
  body: (flow: FlowHandle, ...args: A) => R,
): (...args: A) => R {
  return (...args) => body(current, ...args)
}

/** The visitor is done with the flow on screen ('Done', 'Not now'): it ends with what it has. */
export const finishOnScreen = (): void => current.finish()

/** The flow on screen's finished sign-in or link, if it has one (the user it delivers). */
export const flowResult = (): LoginResult | null => current.result

/**
 * Everything a flow leaves behind, and a new generation with its flow (the previous one's timers
 * stop): spread into the one store update that shows what comes next.
 */
function flowReset(waiting: Waiting | null = null) {
  current.end()
  current = runningFlow(store.getState().generation + 1, waiting)
  return { ...FLOW_STATE_RESET, generation: current.generation }
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
  const { flow, closeBlocked } = store.getState()
  if (closeBlocked) return true
  if (!current.waiting || !flow) return false
  return WALLET_REQUESTS.has(flow.kind) || WALLET_REQUESTS.has(next.kind)
}

/**
 * Starts a flow the host waits on on its first screen, or joins the same flow already running:
 * the handle's promise then settles with it. Another running flow is left (its caller's
 * promise rejects), unless one of the two is a wallet request: then `flow` is refused
 * (requestPending) and the handle's promise rejects with rpc_request_pending.
 */
export function startFlow<T extends FlowValue>(flow: Flow, screen: ScreenId): FlowHandle<T> {
  const before = store.getState()
  // The first flow of this page, a sign-in: the landing on screen may be the server's, which
  // the host shows at login() before that call gets here (host-sdk create-latch.ts). What the
  // visitor did on it meanwhile (a section opened, 'Use a passkey', an address sent) is kept:
  // the flow takes over the landing's own, and a close ends the sign-in as it would have.
  const onLanding = !started && !before.flow && screen === 'LANDING'
  started = true
  const refused =
    onLanding && closedUnasked ? 'login_exited' : requestPending(flow) && 'rpc_request_pending'
  if (refused) {
    return runningFlow(
      -1,
      null,
      Promise.reject(LatchError.of(refused)),
    ) as FlowHandle as FlowHandle<T>
  }
  if (current.waiting && sameFlow(store.getState().flow, flow)) {
    return current as FlowHandle as FlowHandle<T>
  }
  rejectWaiting()
  let resolve!: Waiting['resolve']
  let reject!: Waiting['reject']
  const promise = new Promise<FlowValue>((res, rej) => {
    resolve = res
    reject = rej
  })
  if (onLanding) {
    current.waiting = { promise, resolve, reject }
    current.promise = promise
    store.setState({ flow, open: true })
  } else store.setState({ ...flowReset({ promise, resolve, reject }), flow, screen, open: true })
  // Told even when the modal thinks it is open: a host that closed its dialog meanwhile (a
  // failed call closes it) shows it again, so no request waits on a hidden screen. The host's
  // dialog and frame take the modal's own label, in the visitor's language.
  callHost('setOpen', true, dialogLabel())
  if (!before.open) track('modal_open')
  return current as FlowHandle as FlowHandle<T>
}

/** Whether a flow has started in this page (or since the store was reset): see startFlow. */
let started = false
/** The visitor closed the landing before the first flow started: see startFlow. */
let closedUnasked = false

/** login(): opens the landing; resolves when the modal closes after a sign-in. */
export function login(): Promise<LoginResult> {
  const { app, user, flow } = store.getState()
  if (!app) return Promise.reject(LatchError.of('something_went_wrong'))
  // A sign-in in progress (an OAuth return) is joined, so its result keeps isNewUser.
  if (user && runtime().session.isAuthenticated() && flow?.kind !== 'login') {
    // The host may have shown the frame over a server-rendered landing before this answer
    // (host-sdk create-latch.ts): a modal with no screen open hides it again.
    if (!store.getState().open) callHost('setOpen', false)
    return Promise.resolve({ user, isNewUser: false })
  }
  return startFlow<LoginResult>({ kind: 'login' }, 'LANDING').promise
}

// ---- Pause -------------------------------------------------------------------------------

/**
 * How the flow was verified: the pause differs (an OAuth return does not pause when the modal is
 * inline).
 */
export type Verified = 'code' | 'oauth' | 'wallet' | 'passkey'

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
  current.result = result
  current.pause(pauseMs, step ? step.start : finishFlow)
}

// ---- End ---------------------------------------------------------------------------------

/** Closes the modal and hands the result to whoever is waiting (and the 'login' event). */
export function finishFlow(tellHost = true): void {
  const { result, delivery, waiting } = current
  const { flow } = store.getState()
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
 * rejects with the failure the visitor saw last (flow.failure), else login_exited, link_exited
 * and the like.
 */
export function exitFlow(tellHost: boolean): void {
  // A transaction being submitted cannot be left: its outcome must reach the caller.
  if (store.getState().closeBlocked) return
  if (current.result || current.delivery) {
    finishFlow(tellHost)
    return
  }
  if (!started) closedUnasked = true
  rejectWaiting()
  closeModal(tellHost)
}

/**
 * The visitor was signed out (logout(), a revoked session, a failed refresh) or another user
 * signed in under a wallet request: it cannot be answered for them any more. One already
 * answered (a receipt, a key shown) is delivered; any other rejects with 'User is not
 * authenticated.' (session_cookie_refused when this browser refused the session's cookie) at
 * once, and the modal closes, so the next request starts clean.
 */
function endWalletRequest(): void {
  const { flow } = store.getState()
  if (!flow || !WALLET_REQUESTS.has(flow.kind)) return
  if (current.delivery) finishFlow()
  else current.fail(signedOutError())
}

store.subscribe((state, previous) => {
  // resetStore (tests) started a generation of its own: the flow of the last one is over.
  if (state.generation !== current.generation) {
    current.end()
    current = runningFlow(state.generation, null)
    started = false
    closedUnasked = false
  }
  if (previous.user && state.user?.id !== previous.user.id) endWalletRequest()
})

function rejectWaiting(): void {
  const { waiting } = current
  if (!waiting) return
  current.waiting = null
  waiting.reject(current.failure ?? LatchError.of(EXITED[store.getState().flow?.kind ?? 'login']))
}

/** What a caller hears when the visitor leaves an unfinished flow (the catalogue's texts). */
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

function closeModal(tellHost: boolean): void {
  const wasOpen = store.getState().open
  store.setState({ ...flowReset(), open: false, flow: null, screen: initialState.screen })
  if (tellHost) callHost('setOpen', false)
  if (wasOpen) track('modal_closed')
}
