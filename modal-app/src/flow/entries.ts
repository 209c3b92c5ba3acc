/**
 * The host's entries that open a screen of their own rather than the landing: link() for the
 * account kinds with a screen here, and connectWallet(). A chunk of their own, loaded at the
 * first such call: the landing's JavaScript (size.test.ts) does not carry them.
 */
import { type ConnectedWallet, LatchError, type LinkKind, type User } from '@latch/shared'
import { signedOutError } from '../runtime.ts'
import type { ScreenId } from '../screens/ids.ts'
import { store } from '../store.ts'
import { startFlow } from './flow.ts'

const LINK_SCREENS = {
  email: 'LINK_EMAIL_SCREEN',
  phone: 'LINK_PHONE_SCREEN',
  wallet: 'LINK_WALLET_SCREEN',
  passkey: 'PASSKEY_SCREEN',
} as const satisfies Record<string, ScreenId>

/**
 * link(kind) for an e-mail address, a phone number, an external wallet or a passkey (social:
 * oauth.ts). A passkey's screen is also where the user's passkeys are named and removed.
 */
export function link(kind: LinkKind): Promise<User> {
  const { app, user } = store.getState()
  if (!app) return Promise.reject(LatchError.of('something_went_wrong'))
  if (!Object.hasOwn(LINK_SCREENS, kind))
    return Promise.reject(LatchError.of('method_not_available'))
  if (!user) return Promise.reject(signedOutError())
  const account = kind as keyof typeof LINK_SCREENS
  return startFlow<User>({ kind: 'link', account }, LINK_SCREENS[account]).promise
}

/** connectWallet(): the wallet list of a visitor or of a signed-in user (connectors/connect-only.ts). */
export function connectWallet(): Promise<ConnectedWallet> {
  return startFlow<ConnectedWallet>(
    { kind: 'connect-wallet' },
    store.getState().user ? 'CONNECT_ONLY_AUTHENTICATED_SCREEN' : 'CONNECT_ONLY_LANDING_SCREEN',
  ).promise
}
