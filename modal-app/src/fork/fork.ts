/**
 * The session fork. forkSession(): the API forks this session, the modal offers the
 * wallet apps whose in-app browser link keeps the page's fragment out of every request
 * (SESSION_FORK_SCREEN) and opens the chosen one on the host page, whose address carries the
 * fork token in its fragment (`#latch_fork=…`). On that page the host SDK takes it off the
 * address bar and hands it to init, which redeems it here. The session the link opens is
 * signed in but never holds the wallet by itself (the host page can read the link): for an
 * automatic-recovery wallet the screen then offers a pairing code, shown by the wallet frame on
 * the visitor's own click there, which the wallet app's page takes into its wallet frame
 * (wallet-frame/src/approval.ts); a passcode wallet recovers there with its passcode.
 */
import {
  embeddedWallet,
  LatchError,
  type RefreshResponse,
  toLatchError,
  type User,
  withForkToken,
} from '@latch/shared'
import { deliver } from '../flow/deliver.ts'
import { type FlowHandle, onFlow, startFlow } from '../flow/flow.ts'
import { redirectTarget } from '../oauth/oauth.ts'
import { callHost, runtime } from '../runtime.ts'
import { isVerifiedHostPage, verifiedHostOrigin } from '../startup/origin.ts'
import { store } from '../store.ts'

/** Why a fork token in the address was not used, as the host's 'warning' event says it. */
export const FORK_SIGNED_IN_WARNING = 'Ignored a session link: this browser is already signed in'

/**
 * Why a fork token in the address query was not used: the host SDK removed it unused (a query
 * reaches the page's server and link services' logs) and tells init so (`forkInQuery`).
 */
export const FORK_QUERY_WARNING = 'Ignored a session link: its token was in the address query'

/**
 * forkSession(): resolves with the deep link the visitor opened; rejects with
 * 'not_authenticated' when signed out, 'session_cookie_refused' at once when the session ended
 * because this browser refuses its cookie in the frame (the modal says why), and 'fork_exited'
 * when the modal closes first.
 */
export function forkSession(): Promise<string> {
  const { user } = store.getState()
  const { session } = runtime()
  if (!user || !session.isAuthenticated()) {
    if (!session.cookieRefused()) return Promise.reject(LatchError.of('not_authenticated'))
    const flow = startFlow<string>({ kind: 'fork-session' }, 'SESSION_FORK_SCREEN')
    flow.refuse(LatchError.of('session_cookie_refused'))
    return flow.promise
  }
  const flow = startFlow<string>({ kind: 'fork-session' }, 'SESSION_FORK_SCREEN')
  store.setState({ sessionFork: { page: null, error: null } })
  void prepareFork(flow)
  return flow.promise
}

/** Forks the session and builds the host page's address with the token (before any click:
 * the app must open synchronously in the click, or the browser blocks it). */
async function prepareFork(flow: FlowHandle): Promise<void> {
  try {
    const { page, token } = await flow.guard(forkedPage())
    store.setState({ sessionFork: { page: withForkToken(page, token), error: null } })
  } catch (e) {
    const error = toLatchError(e)
    // Nothing on this screen brings a refused cookie back: the caller hears why at once and the
    // visitor reads what to do (WalletRefused).
    if (error.is('session_cookie_refused')) return flow.refuse(error)
    store.setState({ sessionFork: { page: null, error: error.message } })
  }
}

/** The host page's address, checked, and a fork of this session for it. */
async function forkedPage(): Promise<{ page: string; token: string }> {
  const { host, session } = runtime()
  if (!host) throw LatchError.of('modal_unreachable')
  const page = redirectTarget(await host.pageUrl())
  // The link opens only on the page penpal verified, an origin registered for the app. The
  // host answers pageUrl() itself, so it is checked before any token exists.
  if (!isVerifiedHostPage(page)) throw LatchError.of('origin_not_allowed')
  return { page, token: await session.fork() }
}

/**
 * Opens `link` (a wallet app's in-app browser link) from the click that chose it, and answers
 * forkSession() with it. The modal frame's own window opens it: a phone hands the universal link
 * to the app. The flow then ends, or, for an automatic wallet, stays on screen for the pairing
 * code until the visitor is done.
 */
export const openForkLink = onFlow(function openForkLink(flow: FlowHandle, link: string): void {
  window.open(link, '_blank', 'noopener,noreferrer')
  if (forkPairs(store.getState().user)) {
    deliver(flow, link, { now: true })
    const fork = store.getState().sessionFork
    store.setState({ sessionFork: { page: fork?.page ?? null, error: null, opened: true } })
    return
  }
  deliver(flow, link)
  flow.finish()
})

/**
 * Whether the forked session needs this device's pairing code to open the wallet: an automatic
 * wallet (a passcode or passkey one recovers there with its own secret).
 */
export function forkPairs(user: User | null): boolean {
  return !!user && embeddedWallet(user.linkedAccounts)?.recoveryMethod === 'latch'
}

/** Why a fork token was not redeemed on a page of an origin the modal did not verify. */
export const FORK_UNVERIFIED_WARNING =
  'Session link refused: this page is not an allowed origin of the app'

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
  // Init is answered only to a verified host page (penpal's allowed origin, startup.ts): the
  // token is redeemed only there, and this holds should that ever change.
  if (!isVerifiedHostPage(verifiedHostOrigin())) {
    callHost('emit', 'warning', FORK_UNVERIFIED_WARNING)
    return null
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
