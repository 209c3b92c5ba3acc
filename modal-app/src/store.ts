/**
 * The modal's one store (vanilla zustand): the current screen and the flow state. Actions are
 * the module-level functions in actions.ts, so penpal handlers move the UI without hooks.
 */
import type { LatchError, LoginResult, OAuthProvider, User } from '@latch/shared'
import { createStore } from 'zustand/vanilla'
import type { AppView } from './config.ts'
import type { ScreenId } from './screens/ids.ts'

export type Status = 'loading' | 'ready' | 'error'
export type Channel = 'email' | 'sms'
export type CodeStatus = 'idle' | 'submitting' | 'success' | 'error'

/** What the visitor is doing: signing in, or linking an account to the signed-in user. */
export type Flow = { kind: 'login' } | { kind: 'link'; account: 'email' | 'phone' | OAuthProvider }

/**
 * Social sign-in on AWAITING_OAUTH_SCREEN: asking the API for the provider's URL
 * (redirecting), completing the return (verifying), done, or failed with the shown text.
 */
export interface OAuthState {
  provider: OAuthProvider
  status: 'redirecting' | 'verifying' | 'success' | 'error'
  /** The detail under 'Authentication failed.' (SPEC section 8's OAuth table). */
  error: string | null
  retryable: boolean
}

export interface PasswordlessState {
  channel: Channel
  /** The e-mail address or E.164 number the code was sent to. */
  destination: string
  status: CodeStatus
  error: string | null
}

export interface ModalState {
  status: Status
  screen: ScreenId
  open: boolean
  app: AppView | null
  user: User | null
  flow: Flow | null
  /** The submit of the landing or link screen: pending, and its error text. */
  submitting: boolean
  submitError: string | null
  passwordless: PasswordlessState | null
  oauth: OAuthState | null
  /** A finished sign-in or link, delivered when the modal closes. */
  result: LoginResult | null
  /** The cause behind the general error view. */
  error: LatchError | null
}

export const initialState: ModalState = {
  status: 'loading',
  screen: 'LANDING',
  open: false,
  app: null,
  user: null,
  flow: null,
  submitting: false,
  submitError: null,
  passwordless: null,
  oauth: null,
  result: null,
  error: null,
}

export const store = createStore<ModalState>()(() => initialState)

/** Back to the initial state (tests, and a fresh start). */
export function resetStore(): void {
  store.setState(initialState, true)
}
