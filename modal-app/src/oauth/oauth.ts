/**
 * Social sign-in and linking (docs/behaviour.md, "AWAITING_OAUTH_SCREEN"), on the modal's side.
 *
 * Out: a social button (or `link(provider)`) asks the API for the provider's authorization URL
 * (`POST /oauth/init`, `redirect_to` = the host page's URL without latch_ parameters; with the
 * access token for a link) and the host SDK navigates the top page there.
 *
 * Each flow is bound to this browser: the modal makes a random secret per flow, sends only its
 * SHA-256 to `/oauth/init`, and has the host SDK keep the secret, the state and the intent in
 * the host page's sessionStorage as it navigates (this cross-site frame's own storage is
 * partitioned or refused, and would not be there on the return).
 *
 * Back: the API's callback sends the visitor to the host page with latch_oauth_code, _state and
 * _provider; the host SDK takes them off the address bar and hands them to `init` together with
 * the flow it saved for that state, and the modal opens on AWAITING_OAUTH_SCREEN and completes
 * with `/oauth/authenticate` or `/oauth/link` (the saved intent) presenting the secret. A return
 * without a saved flow of its state and provider (a link someone sent, cleared storage) is
 * refused with a warning, never guessed: the server would refuse it too.
 *
 * The return is oauth-return.ts, loaded only when init brings one.
 *
 * The host's login() or link() promise cannot survive the page navigation. After the return the
 * modal holds the flow as pending: a login() (or the same link()) the host calls while it is in
 * progress joins it and settles with its result, and the 'login' event (so onSuccess) fires
 * when the modal closes after a sign-in.
 */
import {
  fillTemplate,
  isLatchError,
  LatchError,
  OAUTH_ERROR_DISPLAY,
  OAUTH_PROVIDER_NAMES,
  OAUTH_RETURN_PARAM_NAMES,
  type OAuthInitResponse,
  type OAuthProvider,
  type User,
} from '@latch/shared'
import { type FlowHandle, navigate, onFlow, sameFlow, startFlow } from '../flow/flow.ts'
import { runtime, signedOutError } from '../runtime.ts'
import { type Flow, type OAuthState, store } from '../store.ts'

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')

/** A fresh per-flow browser secret (32 random bytes) and its SHA-256, both base64url. */
export async function browserSecret(): Promise<{ secret: string; hash: string }> {
  const secret = base64url(crypto.getRandomValues(new Uint8Array(32)))
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(secret))
  return { secret, hash: base64url(new Uint8Array(digest)) }
}

/** The host page URL as `redirect_to`: any latch_ return parameter removed. */
export function redirectTarget(pageUrl: string): string {
  const url = new URL(pageUrl)
  for (const name of Object.values(OAUTH_RETURN_PARAM_NAMES)) url.searchParams.delete(name)
  return url.href
}

/** What the OAuth screen shows for a failure (the detail under 'Authentication failed.'). */
export function oauthErrorView(
  error: unknown,
  provider: OAuthProvider,
): { message: string; retryable: boolean } {
  const code = isLatchError(error) ? error.code : ''
  const display =
    code in OAUTH_ERROR_DISPLAY
      ? OAUTH_ERROR_DISPLAY[code as keyof typeof OAUTH_ERROR_DISPLAY]
      : // Anything else (network, timeout, a refused redirect) reads as the generic retryable failure.
        OAUTH_ERROR_DISPLAY.oauth_invalid_code
  return {
    message: fillTemplate(display.message, { providerName: OAUTH_PROVIDER_NAMES[provider] }),
    retryable: display.retryable,
  }
}

export function setOAuth(state: OAuthState): void {
  store.setState({ oauth: state })
}

export function showError(provider: OAuthProvider, error: unknown): void {
  if (isLatchError(error) && error.is('allowlist_rejected')) {
    navigate('ALLOWLIST_REJECTION_SCREEN')
    return
  }
  const view = oauthErrorView(error, provider)
  store.setState({ screen: 'AWAITING_OAUTH_SCREEN', submitting: false, submitError: null })
  setOAuth({ provider, status: 'error', error: view.message, retryable: view.retryable })
}

/**
 * Leaves for the provider: asks the API for its URL and has the host navigate there. Used by
 * the social buttons, link(provider) and Retry; the open flow says whether it is a link.
 */
export const startOAuth = onFlow(async function startOAuth(
  handle: FlowHandle,
  provider: OAuthProvider,
): Promise<void> {
  const { oauth } = store.getState()
  if (oauth?.status === 'redirecting') return
  const { intent } = handle
  setOAuth({ provider, status: 'redirecting', error: null, retryable: false })
  try {
    const { api, host } = runtime()
    if (!host) throw LatchError.of('modal_unreachable')
    const redirectTo = redirectTarget(await handle.guard(host.pageUrl()))
    const { secret, hash } = await handle.guard(browserSecret())
    const { url } = await handle.guard(
      api.request<OAuthInitResponse>(
        '/oauth/init',
        { provider, redirect_to: redirectTo, browser_hash: hash },
        // A sign-in goes without the token: with one, the server would bind the flow to a user.
        { auth: intent === 'link' },
      ),
    )
    const state = new URL(url).searchParams.get('state')
    if (!state) throw LatchError.of('oauth_invalid_code')
    // The host keeps the flow for the return and navigates only to http(s), only while a flow
    // is pending or the modal is open.
    await handle.guard(host.navigate(url, { state, provider, intent, secret }))
  } catch (e) {
    // Reached only while the flow is the one on screen: every await above is guarded.
    showError(provider, e)
  }
})

/** Retry on the error state: the same provider again. */
export function retryOAuth(): void {
  const oauth = store.getState().oauth
  if (oauth) void startOAuth(oauth.provider)
}

/** link(provider): the provider must be one the app offers; the visitor must be signed in. */
export function linkOAuth(provider: OAuthProvider): Promise<User> {
  const { app, user } = store.getState()
  if (!app) return Promise.reject(LatchError.of('something_went_wrong'))
  if (!app.methods.social.includes(provider)) {
    return Promise.reject(LatchError.of('method_not_available'))
  }
  if (!user) return Promise.reject(signedOutError())
  const flow: Flow = { kind: 'link', account: provider }
  const joining = sameFlow(store.getState().flow, flow)
  const { promise } = startFlow<User>(flow, 'AWAITING_OAUTH_SCREEN')
  if (!joining) void startOAuth(provider)
  return promise
}
