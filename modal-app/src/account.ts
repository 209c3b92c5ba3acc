/** The signed-in user and their accounts: who the host hears of, sign-in, link, unlink, logout. */
import {
  type AuthResponse,
  CODE_ROUTE_PATHS,
  embeddedWallet,
  LatchError,
  type LinkResponse,
  type LoginResult,
  type UnlinkResponse,
  type UnlinkTarget,
  type User,
} from '@latch/shared'
import { checkUnlinkTarget } from './config-check.ts'
import { forgetStoredWalletConnect } from './connectors/walletconnect-storage.ts'
import { callHost, runtime } from './runtime.ts'
import { store } from './store.ts'
import { withTimeout } from './timeout.ts'

/** The user changed: the host hears of it ('user', and 'logout' when a user went away). */
export function setUser(user: User | null): void {
  const previous = store.getState().user
  store.setState({ user })
  if (previous && !user) callHost('emit', 'logout', undefined)
  callHost('emit', 'user', user)
}

/**
 * Presents a verified proof to `{path}/authenticate` (a sign-in: starts the session) or
 * `{path}/link` (adds the account to the signed-in user).
 */
export async function signInOrLink(
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
  await (await import('./wallet/link-approval.tsx')).approveLinkOf(path, body)
}

/** What ends with the session besides it: hooks of lazily loaded parts (walletconnect.ts). */
const logoutHooks = new Set<() => Promise<void>>()

/** Adds a hook logout runs (each settles or is given up on: logout never waits long). */
export function onLogout(hook: () => Promise<void>): () => void {
  logoutHooks.add(hook)
  return () => logoutHooks.delete(hook)
}

/** A hook may take this long before logout goes on without it. */
export const LOGOUT_HOOK_TIMEOUT_MS = 3000

/**
 * Ends the session, then what an external wallet left behind for the next visitor of this
 * browser: a WalletConnect session (disconnected where this page built it; its storage removed
 * either way, even if this page never loaded WalletConnect).
 */
export async function logout(): Promise<void> {
  await runtime().session.logout()
  // A hook that fails or is late is given up on: logout goes on.
  await Promise.allSettled(
    [...logoutHooks].map((hook) =>
      withTimeout(hook(), LOGOUT_HOOK_TIMEOUT_MS, () => new Error('logout hook too late')),
    ),
  )
  forgetStoredWalletConnect()
}

/** Removes a linked account; answers the updated user. */
export async function unlink(target: UnlinkTarget): Promise<User> {
  const account = checkUnlinkTarget(target)
  if (!store.getState().user) throw LatchError.of('not_authenticated')
  let path: string
  let body: Record<string, string>
  if (account.type === 'email') {
    path = `${CODE_ROUTE_PATHS.email}/unlink`
    body = { address: account.address }
  } else if (account.type === 'phone') {
    path = `${CODE_ROUTE_PATHS.sms}/unlink`
    body = { phoneNumber: account.number }
  } else if (account.type === 'wallet') {
    // The server refuses the in-app wallet itself (embedded_wallet_unlink_forbidden).
    path = '/siwe/unlink'
    body = { address: account.address }
  } else {
    path = '/oauth/unlink'
    body = { provider: account.type.replace(/_oauth$/, ''), subject: account.subject }
  }
  const user = await runtime().api.request<UnlinkResponse>(path, body)
  setUser(user)
  return user
}
