/**
 * The visitor back from a social provider (oauth.ts says the whole round trip): loaded by init
 * only when it brings return parameters, so the landing's chunk does not carry their checks.
 */
import {
  LatchError,
  type OAuthReturnParams,
  oauthReturnParamsSchema,
  type PendingOAuthFlow,
  pendingOAuthFlowSchema,
} from '@latch/shared'
import { completeFlow } from '../flow/complete.ts'
import { startFlow } from '../flow/flow.ts'
import { callHost } from '../runtime.ts'
import { type Flow, store } from '../store.ts'
import { setOAuth, showError } from './oauth.ts'

/** Why a return with no saved flow of its own is refused (oauth_not_initialized). */
export const UNSTARTED_RETURN_WARNING = `Ignored an OAuth return this browser did not start (${
  LatchError.of('oauth_not_initialized').message
})`

/**
 * The visitor is back from the provider (init's return parameters and the flow the host page
 * saved for them): opens on AWAITING_OAUTH_SCREEN and completes the sign-in or link.
 * Parameters that do not parse are ignored; a return without its saved flow is refused; each
 * state is completed once per page.
 */
export function resumeOAuth(
  raw: OAuthReturnParams | null | undefined,
  saved?: PendingOAuthFlow | null,
): void {
  const parsed = oauthReturnParamsSchema.safeParse(raw)
  if (!parsed.success) {
    if (raw) callHost('emit', 'warning', 'Ignored malformed OAuth return parameters')
    return
  }
  const params = parsed.data
  const pending = pendingOAuthFlowSchema.safeParse(saved)
  if (
    !pending.success ||
    pending.data.state !== params.state ||
    pending.data.provider !== params.provider
  ) {
    callHost('emit', 'warning', UNSTARTED_RETURN_WARNING)
    return
  }
  const { oauthCompleted } = store.getState()
  if (oauthCompleted.includes(params.state)) return
  store.setState({ oauthCompleted: [...oauthCompleted, params.state] })
  const { intent, secret } = pending.data
  const flow: Flow =
    intent === 'link' ? { kind: 'link', account: params.provider } : { kind: 'login' }
  // Nobody may be waiting on this flow yet: a host call joins it (startFlow).
  startFlow(flow, 'AWAITING_OAUTH_SCREEN').promise.catch(() => {})
  setOAuth({ provider: params.provider, status: 'verifying', error: null, retryable: false })
  const { provider } = params
  const body = { authorization_code: params.code, state_code: params.state, browser_secret: secret }
  // The code is single use: the sign-in holds even if the visitor closed the modal meanwhile.
  completeFlow('/oauth', body, 'oauth', () =>
    setOAuth({ provider, status: 'success', error: null, retryable: false }),
  ).catch((e: unknown) => showError(provider, e))
}
