/**
 * The session fork (issue 13). forkSession(): the API forks this session, the modal offers the
 * wallet apps with an in-app browser (SESSION_FORK_SCREEN) and opens the chosen one on the
 * host page, whose address carries the fork token in `latch_fork`. On that page the host SDK
 * takes the parameter off the address bar and hands it to init, which redeems it here.
 */
import {
  FORK_RETURN_PARAM,
  LatchError,
  type RefreshResponse,
  toLatchError,
  type User,
} from '@latch/shared'
import { finishFlow, flowGeneration, startFlow } from './flow.ts'
import { redirectTarget } from './oauth.ts'
import { callHost, runtime } from './runtime.ts'
import { store } from './store.ts'

/** Why a fork token in the address was not used, as the host's 'warning' event says it. */
export const FORK_SIGNED_IN_WARNING = 'Ignored a session link: this browser is already signed in'

/**
 * forkSession(): resolves with the deep link the visitor opened; rejects with
 * 'not_authenticated' when signed out and 'fork_exited' when the modal closes first.
 */
export function forkSession(): Promise<string> {
  const { user } = store.getState()
  if (!user || !runtime().session.isAuthenticated()) {
    return Promise.reject(LatchError.of('not_authenticated'))
  }
  const done = startFlow<string>({ kind: 'fork-session' }, 'SESSION_FORK_SCREEN')
  const generation = flowGeneration()
  store.setState({ sessionFork: { page: null, error: null } })
  void prepareFork(generation)
  return done
}

/** Forks the session and builds the host page's address with the token (before any click:
 * the app must open synchronously in the click, or the browser blocks it). */
async function prepareFork(generation: number): Promise<void> {
  try {
    const { host, session } = runtime()
    if (!host) throw LatchError.of('modal_unreachable')
    const [page, token] = await Promise.all([host.pageUrl(), session.fork()])
    const url = new URL(redirectTarget(page))
    url.searchParams.set(FORK_RETURN_PARAM, token)
    if (generation === flowGeneration()) {
      store.setState({ sessionFork: { page: url.href, error: null } })
    }
  } catch (e) {
    if (generation !== flowGeneration()) return
    store.setState({ sessionFork: { page: null, error: toLatchError(e).message } })
  }
}

/**
 * Opens `link` (a wallet app's in-app browser link) from the click that chose it, then ends
 * the flow with it. The modal frame's own window opens it: a phone hands the universal link to
 * the app.
 */
export function openForkLink(link: string): void {
  window.open(link, '_blank', 'noopener,noreferrer')
  store.setState({ delivery: { value: link } })
  finishFlow()
}

/**
 * The page was opened with a fork token (init): redeems it into a session here, unless this
 * browser already has one (a link made by someone else must never replace it). Failures are
 * the host's 'warning' event; the page stays signed out.
 */
export async function redeemFork(token: string, restored: User | null): Promise<User | null> {
  if (restored) {
    callHost('emit', 'warning', FORK_SIGNED_IN_WARNING)
    return restored
  }
  const { api, session } = runtime()
  try {
    const res = await api.request<RefreshResponse>(
      '/sessions/fork/recover',
      { refresh_token: token },
      { auth: false },
    )
    // The session's onUser sets the store's user and tells the host ('user').
    session.start(res, res.user)
    callHost('emit', 'login', { user: res.user, isNewUser: false })
    return res.user
  } catch (e) {
    callHost('emit', 'warning', `Session link refused: ${toLatchError(e).message}`)
    return null
  }
}
