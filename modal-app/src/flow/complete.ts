/**
 * The end of a sign-in or link with a verified proof (a code, an OAuth return, a wallet's
 * signature, a passkey): only the flows that reach one, all loaded apart from the landing,
 * import it, so it is not the landing's code.
 */
import {
  type AuthResponse,
  embeddedWallet,
  type LinkResponse,
  type LoginResult,
} from '@latch/shared'
import { runtime } from '../runtime.ts'
import { setUser } from '../session/account.ts'
import { store } from '../store.ts'
import { type FlowHandle, onFlow, succeed, type Verified } from './flow.ts'

/**
 * Presents a verified proof to `{path}/authenticate` (a sign-in: starts the session) or
 * `{path}/link` (adds the account to the signed-in user).
 */
async function signInOrLink(
  intent: 'login' | 'link',
  path: string,
  body: Record<string, string>,
  headers?: Record<string, string>,
): Promise<LoginResult> {
  const { api, session } = runtime()
  if (intent === 'link') {
    await approvedInWallet(path, body)
    const user = await api.request<LinkResponse>(`${path}/link`, body, { headers })
    setUser(user)
    return { user, isNewUser: false }
  }
  // A sign-in goes without the token: it proves who the visitor is by itself.
  const res = await api.request<AuthResponse>(`${path}/authenticate`, body, {
    auth: false,
    headers,
  })
  session.start(res, res.user)
  return { user: res.user, isNewUser: res.is_new_user }
}

/**
 * For a user whose wallet recovers automatically, the visitor's approval of the new method in
 * the wallet frame, which the server checks on the link (loaded only for such a user).
 */
export async function approvedInWallet(path: string, body: Record<string, string>): Promise<void> {
  const { user } = store.getState()
  if (!user || embeddedWallet(user.linkedAccounts)?.recoveryMethod !== 'latch') return
  await (await import('../wallet/link-approval.tsx')).approveLinkOf(path, body)
}

/**
 * Completes the flow on screen with a verified proof: POST `{path}/authenticate` for a sign-in
 * or `{path}/link` for a link, then `showSuccess` and the success pause. An answer (or failure)
 * arriving after the flow changed changes nothing; other failures are thrown to the caller.
 */
export const completeFlow = onFlow(async function completeFlow(
  flow: FlowHandle,
  path: string,
  body: Record<string, string>,
  verified: Verified,
  showSuccess: () => void,
  /** Headers of the proof's request (the SIWE browser binding). */
  headers?: Record<string, string>,
): Promise<void> {
  // Signed in even if the visitor closed the modal meanwhile: the host hears of it by 'user'.
  const result = await flow.guard(signInOrLink(flow.intent, path, body, headers))
  showSuccess()
  succeed(result, verified)
})
