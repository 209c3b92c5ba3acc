import {
  FORK_RETURN_PARAM,
  OAUTH_RETURN_PARAM_NAMES,
  type OAuthReturnParams,
  type PendingOAuthFlow,
} from '@latch/shared'

/** Where this tab keeps the OAuth flow it left for (one at a time: a new one replaces it). */
export const PENDING_FLOW_KEY = 'latch:oauth-flow'

/**
 * An OAuth return this tab started and the flow it saved on leaving, a session fork's token the
 * page was opened with, a wallet app's client, and whether a fork token came in the query (and
 * was dropped): init's arguments.
 */
export type OAuthReturn = [
  params?: OAuthReturnParams,
  flow?: PendingOAuthFlow,
  fork?: string,
  walletClient?: string,
  forkInQuery?: boolean,
]

/**
 * Keeps the flow the modal is leaving for in this tab's sessionStorage, for the return. Throws
 * where storage is refused: the modal then stays (it shows the failure) rather than leaving
 * for a return this tab could not accept.
 */
export function savePendingFlow(flow: PendingOAuthFlow): void {
  sessionStorage.setItem(PENDING_FLOW_KEY, JSON.stringify(flow))
}

/**
 * Takes the OAuth return parameters off the host URL's query and a session fork's token off its
 * fragment (`#…&latch_fork=…`), always removing every one of ours from the address bar (the fork
 * token before anything else can read or log the address: whoever holds it becomes the user).
 * A fork token in the query is refused as leaked (a query reaches the page's server and link
 * services' logs): removed too and not handed on; init only hears that there was one, and the
 * modal warns the page. OAuth parameters are
 * handed on only with the flow this tab saved for their state as it left (each saved flow is
 * read once): parameters anyone could put in a link must not sign this visitor in or link an
 * account to them. The modal validates them, and redeems a fork token only where nobody is
 * signed in. A wallet client without an OAuth return (a wallet app's link to this page, e.g.
 * Phantom's) is handed on alone: it only tells the modal which wallet the visitor came to sign
 * in with.
 */
export function takeOAuthReturn(): OAuthReturn {
  const url = new URL(location.href)
  const found: Record<string, string> = {}
  for (const [key, name] of Object.entries(OAUTH_RETURN_PARAM_NAMES)) {
    const value = url.searchParams.get(name)
    if (value === null) continue
    found[key] = value
    url.searchParams.delete(name)
  }
  const leaked = url.searchParams.has(FORK_RETURN_PARAM)
  url.searchParams.delete(FORK_RETURN_PARAM)
  // The fragment's parts: the page's own (kept) and the token (taken; the last one wins).
  let fork: string | undefined
  const own = `&${url.hash.slice(1)}`
    .replace(new RegExp(`&${FORK_RETURN_PARAM}=([^&]*)`, 'g'), (_, token: string) => {
      fork = token
      return ''
    })
    .slice(1)
  if (fork !== undefined) url.hash = own
  else if (!Object.keys(found).length && !leaked) return []
  history.replaceState(history.state, '', url.href)
  let flow: PendingOAuthFlow | undefined
  try {
    // Read once, and only for a return's state: each saved flow is tried by one return.
    if (found.state) {
      flow = JSON.parse(sessionStorage.getItem(PENDING_FLOW_KEY) as string)
      sessionStorage.removeItem(PENDING_FLOW_KEY)
    }
  } catch {}
  return flow && flow.state === found.state
    ? [found as unknown as OAuthReturnParams, flow, fork, undefined, leaked]
    : [undefined, undefined, fork, found.walletClient, leaked]
}
