/** The signed-in user and their accounts: who the host hears of, sign-in, link, unlink, logout. */
import {
  CODE_ROUTE_PATHS,
  LatchError,
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
