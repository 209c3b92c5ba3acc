/**
 * The in-app wallet's flows (docs/behaviour.md, "EMBEDDED_WALLET_SCREEN",
 * "EMBEDDED_WALLET_CONNECTING_SCREEN" and "EMBEDDED_WALLET_RECOVERY_SCREEN"): create, the
 * connecting gate, recovery. Loaded lazily (index.ts, the wallet screens). Every call to the frame
 * carries the session's access token; key material never reaches this code, only addresses and
 * errors.
 */
import {
  ERRORS,
  embeddedWallet,
  isLatchError,
  LatchError,
  type SessionUserResponse,
  type User,
  type WalletAccount,
  type WalletCreateParams,
  type WalletRecoveryFailure,
} from '@latch/shared'
import { type FlowHandle, navigate, onFlow, startFlow } from '../flow/flow.ts'
import { openPasskeyWindow, type PasskeyWindow } from '../passkeys/passkey-window.ts'
import { callHost, runtime } from '../runtime.ts'
import type { ScreenId } from '../screens/ids.ts'
import { setUser } from '../session/account.ts'
import { track } from '../session/analytics.ts'
import { freshWalletState, store, type WalletState } from '../store.ts'
import { walletFrame } from './frame.ts'

function setWallet(patch: Partial<WalletState>): void {
  const wallet = store.getState().wallet ?? freshWalletState()
  store.setState({ wallet: { ...wallet, ...patch } })
}

const toError = (e: unknown): LatchError =>
  isLatchError(e) ? e : LatchError.of('something_went_wrong', { cause: e })

/**
 * The failure's own text where it names what the visitor can do about it (sign in again on
 * this device, ask the app's support), else null: a retry text fits the rest.
 */
export function ownFailureText(e: unknown): string | null {
  const error = toError(e)
  return error.is('wallet_sign_in_required') || error.is('wallet_record_invalid')
    ? error.message
    : null
}

/**
 * A wallet step failed on screen: the flow keeps the failure (closing now rejects with it, not
 * as if the visitor declined or left), and the screen shows its own text or `fallback`. What the
 * visitor typed or turned down (a wrong passcode, and so the lock wrong passcodes bring, a passkey
 * prompt closed) and what the request itself asks (more than the balance) are not kept: leaving
 * after them is leaving, as SPEC has it.
 */
export function walletStepFailed(flow: FlowHandle, e: unknown, fallback: string): string {
  const error = toError(e)
  const visitors =
    error.is('invalid_recovery_pin') ||
    error.is('recovery_locked') ||
    error.is('passkey_failed') ||
    error.is('insufficient_funds') ||
    error.type === 'validation_error'
  // A handle that is no longer the flow on screen is never read again: no check needed.
  flow.failure = visitors ? null : error
  // No retry or passcode brings the credential back: the caller hears it now, the visitor sees
  // what to do.
  if (error.is('wallet_sign_in_required')) flow.refuse(error)
  return ownFailureText(error) ?? fallback
}

/** A valid access token, or the error the calling flow names for a visitor signed out. */
async function accessToken(signedOut: 'create_not_authenticated' | 'recovery_not_allowed') {
  const token = await runtime().session.getAccessToken()
  if (!token) throw LatchError.of(signedOut)
  return token
}

/** The signed-in user and their in-app wallet, or recovery_not_allowed. */
function ownWallet(): { user: User; wallet: WalletAccount } {
  const { user } = store.getState()
  const wallet = user ? embeddedWallet(user.linkedAccounts) : undefined
  if (!user || !wallet || !runtime().session.isAuthenticated()) {
    throw LatchError.of('recovery_not_allowed')
  }
  return { user, wallet }
}

// ---- Create ------------------------------------------------------------------------------

/**
 * createWallet(): the create screen for a signed-in user without an in-app wallet. Resolves with
 * the new wallet account; rejects with the create errors (create_not_authenticated,
 * wallet_already_exists, create_exited).
 */
export function createWallet(): Promise<WalletAccount> {
  const { app, user } = store.getState()
  if (!app) return Promise.reject(LatchError.of('something_went_wrong'))
  if (!user || !runtime().session.isAuthenticated()) {
    return Promise.reject(LatchError.of('create_not_authenticated'))
  }
  if (embeddedWallet(user.linkedAccounts)) {
    return Promise.reject(LatchError.of('wallet_already_exists'))
  }
  const { promise } = startFlow<WalletAccount>({ kind: 'create-wallet' }, 'EMBEDDED_WALLET_SCREEN')
  store.setState({ wallet: freshWalletState() })
  return promise
}

/**
 * Before the create screen asks for a passcode or passkey: whether this browser kept the
 * session's wallet credential, asked through a wallet route that reads nothing secret (the
 * passkey options the frame fetches for a creation anyway). A refused credential refuses the
 * flow at once (the caller hears wallet_sign_in_required, the modal says what to do) instead
 * of after the visitor chose a passcode no creation could use. Any other failure is left to
 * the creation itself.
 */
export const checkWalletCredential = onFlow(async function checkWalletCredential(
  flow: FlowHandle,
): Promise<void> {
  try {
    const token = await accessToken('create_not_authenticated')
    const frame = await walletFrame()
    await flow.guard(frame['latch:wallet:passkey-options']({ accessToken: token }))
  } catch (e) {
    if (isLatchError(e) && e.is('wallet_sign_in_required')) flow.refuse(e)
  }
})

/**
 * The create screen's text for a failure (the catalogue's own text for the errors it names, else
 * create_failed's).
 */
export function createErrorText(e: unknown): string {
  const error = toError(e)
  if (
    error.is('wallet_already_exists') ||
    error.is('create_not_authenticated') ||
    error.is('unable_to_create_wallet') ||
    error.is('passkey_prf_unsupported') ||
    error.is('passkey_failed') ||
    error.type === 'validation_error'
  ) {
    return error.message
  }
  return ownFailureText(error) ?? ERRORS.create_failed.message
}

/**
 * Creates the wallet in the frame, with the passcode as its recovery (or automatic recovery
 * without one), then asks the server for the user, who now has it ('user' goes to the host).
 * What follows: with a passcode, the created screen after a short pause (the screen's timer);
 * without one, the created screen for a user new this session, else the flow ends.
 */
export const createInAppWallet = onFlow(async function createInAppWallet(
  flow: FlowHandle,
  passcode?: string | { passkey: true },
): Promise<void> {
  const state = store.getState()
  if (state.wallet?.status === 'submitting' || state.wallet?.status === 'success') return
  // A passkey made in a window (passkey-window.ts) opens it now, on the click.
  let target: PasskeyWindow | null = null
  if (typeof passcode === 'object') {
    try {
      target = openPasskeyWindow()
    } catch (e) {
      setWallet({ status: 'error', error: createErrorText(e) })
      return
    }
  }
  setWallet({ status: 'submitting', error: null })
  flow.failure = null
  track('embedded_wallet_creation_started')
  let user: User
  try {
    user = await flow.guard(create(passcode, target))
  } catch (e) {
    // Signed out meanwhile: the caller hears why, the visitor sees the landing.
    if (isLatchError(e) && e.is('create_not_authenticated')) return flow.fail(e, 'LANDING')
    console.error('Latch: the in-app wallet could not be created', e)
    setWallet({ status: 'error', error: walletStepFailed(flow, e, createErrorText(e)) })
    return
  }
  // The flow delivers the user with their wallet (a login keeps whether they are new).
  flow.result = { user, isNewUser: flow.result?.isNewUser ?? false }
  setWallet({ status: 'success' })
  if (passcode !== undefined) return
  if (store.getState().newUserId === user.id) navigate('EMBEDDED_WALLET_CREATED_SCREEN')
  else flow.finish()
})

/**
 * The frame creates the wallet; the server's user then has it ('user' goes to the host). With a
 * passkey, the modal registers it first (passkey.ts) and the frame seals the share under it.
 */
async function create(
  passcode: string | { passkey: true } | undefined,
  target: PasskeyWindow | null,
): Promise<User> {
  const token = await accessToken('create_not_authenticated')
  const frame = await walletFrame()
  let params: WalletCreateParams
  if (typeof passcode === 'object') {
    const { registerRecoveryPasskey } = await import('../passkeys/recovery-passkey.ts')
    const name = store.getState().user?.email?.address ?? 'Wallet'
    const credentialId = await registerRecoveryPasskey(
      frame,
      token,
      `${name} (wallet recovery)`,
      target,
    )
    params = { accessToken: token, recoveryMethod: 'passkey', credentialId }
  } else {
    params =
      passcode === undefined
        ? { accessToken: token }
        : { accessToken: token, recoveryPin: passcode }
  }
  const { address } = await frame['latch:wallet:create'](params)
  // The user as stored now, read by the access token: a refresh would rotate the refresh
  // cookie, which a browser that refuses the API's cookies in this frame (WebKit after the
  // credential window) drops, leaving it a spent token (POST /sessions/user says more).
  const { user } = await runtime().api.request<SessionUserResponse>('/sessions/user', {})
  setUser(user)
  if (embeddedWallet(user.linkedAccounts)?.address !== address) {
    throw LatchError.of('unable_to_create_wallet')
  }
  // Counted even should the flow have changed meanwhile: the wallet exists.
  track('embedded_wallet_creation_completed')
  return user
}

// ---- The connecting gate -----------------------------------------------------------------

/**
 * Makes the signed-in user's in-app wallet usable in the frame without showing anything:
 * `connect`; when the wallet is not on this device and its recovery is automatic ('latch'),
 * recovery with no prompt. Rejects with wallet_not_on_device when the passcode is needed.
 */
export async function connectWallet(): Promise<WalletAccount> {
  const { wallet } = ownWallet()
  const frame = await walletFrame()
  const token = await accessToken('recovery_not_allowed')
  try {
    await frame['latch:wallet:connect']({ address: wallet.address, accessToken: token })
    return wallet
  } catch (e) {
    if (!(isLatchError(e) && e.is('wallet_not_on_device')) || wallet.recoveryMethod !== 'latch') {
      throw unpaired(e)
    }
  }
  track('recovery_started')
  try {
    await frame['latch:wallet:recover']({ address: wallet.address, accessToken: token })
  } catch (e) {
    throw unpaired(e)
  }
  track('recovery_completed')
  return wallet
}

/**
 * A session opened by a fork link that was not paired gets no share: for the modal that is a
 * wallet not on this device, whose recovery screen pairs it (an automatic wallet) or asks for
 * the passcode or passkey.
 */
function unpaired(e: unknown): unknown {
  return isLatchError(e) && e.is('fork_wallet_not_confirmed')
    ? LatchError.of('wallet_not_on_device', { cause: e })
    : e
}

/**
 * The recovery screen's pairing (an automatic wallet on a forked session): the visitor typed the
 * other device's code into the wallet frame, which paired this session; the wallet now recovers.
 */
export const recoverAfterPairing = onFlow(async function recoverAfterPairing(
  flow: FlowHandle,
): Promise<void> {
  setWallet({ status: 'submitting', error: null })
  try {
    await flow.guard(connectWallet())
  } catch (e) {
    setWallet({ status: 'error', error: recoveryErrorText(e) })
    return
  }
  setWallet({ status: 'success', lockedUntil: null })
  proceed(flow, store.getState().wallet?.target ?? null)
})

/**
 * Seals this device's share under a passkey the user just linked (PASSKEY_RECOVERY_SCREEN): an
 * automatic wallet not yet on this device is recovered first (connectWallet); a passcode one
 * must have been used here (wallet_not_on_device). The frame asks the passkey for its PRF
 * output itself (passkey_prf_unsupported without one: nothing is stored, the method stays).
 * The server takes it only from the browser that signed in (the wallet routes' credential).
 */
export async function addRecoveryPasskey(credentialId: string): Promise<void> {
  const wallet = await connectWallet()
  const token = await accessToken('recovery_not_allowed')
  const frame = await walletFrame()
  await frame['latch:wallet:add-passkey']({
    address: wallet.address,
    accessToken: token,
    credentialId,
  })
}

/** The wallet is usable: on to the target screen, or the flow ends with its result. */
function proceed(flow: FlowHandle, target: ScreenId | null): void {
  if (target) {
    navigate(target)
    return
  }
  const { user } = store.getState()
  if (!flow.result && user) flow.result = { user, isNewUser: false }
  flow.finish()
}

/**
 * The gate in front of every use of the in-app wallet (recovery now, signing, sending and
 * export later), for a flow already on screen: EMBEDDED_WALLET_CONNECTING_SCREEN while the
 * wallet connects (or recovers automatically), then `target`, or the recovery screen when the
 * passcode is needed. `target` null ends the flow once the wallet is usable.
 */
export const ensureWalletReady = onFlow(async function ensureWalletReady(
  flow: FlowHandle,
  target: ScreenId | null,
): Promise<void> {
  store.setState({ wallet: freshWalletState(target) })
  navigate('EMBEDDED_WALLET_CONNECTING_SCREEN')
  flow.failure = null
  try {
    await flow.guard(connectWallet())
  } catch (e) {
    if (isLatchError(e) && e.is('wallet_not_on_device')) {
      navigate('EMBEDDED_WALLET_RECOVERY_SCREEN')
      return
    }
    console.error('Latch: the in-app wallet could not be connected', e)
    setWallet({
      status: 'error',
      error: walletStepFailed(flow, e, ERRORS.recovery_failed.message),
    })
    return
  }
  proceed(flow, target)
})

/**
 * recoverWallet(): resolves at once when the wallet is usable on this device (after automatic
 * recovery if needed, no screen); otherwise opens the recovery screen and resolves once the
 * passcode recovered it. Exiting rejects with 'User exited before their wallet could be
 * recovered'. A wallet credential this browser refused rejects at once with
 * wallet_sign_in_required, and the modal opens on the view saying what to do: no passcode or
 * retry brings the credential back.
 */
export async function recoverWallet(): Promise<WalletAccount> {
  if (!store.getState().app) throw LatchError.of('something_went_wrong')
  try {
    return await connectWallet()
  } catch (e) {
    if (isLatchError(e) && e.is('wallet_sign_in_required')) {
      const flow = startFlow<WalletAccount>(
        { kind: 'recover-wallet' },
        'EMBEDDED_WALLET_RECOVERY_SCREEN',
      )
      store.setState({ wallet: freshWalletState() })
      flow.refuse(e)
      return flow.promise
    }
    if (!(isLatchError(e) && e.is('wallet_not_on_device'))) throw e
  }
  const { promise } = startFlow<WalletAccount>(
    { kind: 'recover-wallet' },
    'EMBEDDED_WALLET_RECOVERY_SCREEN',
  )
  store.setState({ wallet: freshWalletState() })
  return promise
}

// ---- Recovery with the passcode ----------------------------------------------------------

/**
 * The recovery screen's text for a failure (the catalogue's own text for a passcode, lock or
 * permission error, else recovery_failed's).
 */
export function recoveryErrorText(e: unknown): string {
  const error = toError(e)
  if (error.is('invalid_recovery_pin') || error.is('recovery_locked')) return error.message
  if (error.is('recovery_not_allowed')) return error.message
  if (error.is('passkey_prf_unsupported') || error.is('passkey_failed')) return error.message
  return ownFailureText(error) ?? ERRORS.recovery_failed.message
}

/**
 * Tells the host of a refused recovery passcode ('wallet_recovery_failed'), even when the flow
 * has moved on meanwhile: the server counted the try either way, and the host may want to warn
 * its user that someone is guessing. Other failures (network, signed out) are not about the
 * passcode and are not reported here.
 */
function reportRecoveryFailure(e: unknown): void {
  if (!isLatchError(e)) return
  const reason = e.is('invalid_recovery_pin')
    ? 'invalid_passcode'
    : e.is('recovery_locked')
      ? 'locked'
      : null
  if (!reason) return
  const wallet = embeddedWallet(store.getState().user?.linkedAccounts ?? [])
  if (!wallet) return
  const failure: WalletRecoveryFailure = { address: wallet.address, reason }
  if (reason === 'locked' && e.retryAfter !== undefined) failure.retryAfter = e.retryAfter
  callHost('emit', 'wallet_recovery_failed', failure)
}

/**
 * The recovery screen's submit: recovers the wallet into the frame with the passcode, then
 * goes on (the gate's target, or the flow ends). A locked recovery keeps the screen locked
 * for the server's Retry-After.
 */
export const recoverWithPasscode = onFlow(async function recoverWithPasscode(
  flow: FlowHandle,
  passcode: string | { passkey: true },
  now: () => number = Date.now,
): Promise<void> {
  const state = store.getState()
  if (state.wallet?.status === 'submitting') return
  setWallet({ status: 'submitting', error: null })
  flow.failure = null
  track('recovery_started')
  try {
    await flow.guard(recover(passcode))
  } catch (e) {
    const locked = isLatchError(e) && e.is('recovery_locked')
    const wait = isLatchError(e) ? e.retryAfter : undefined
    setWallet({
      status: 'error',
      error: walletStepFailed(flow, e, recoveryErrorText(e)),
      lockedUntil: locked && wait ? now() + wait * 1000 : null,
    })
    return
  }
  setWallet({ status: 'success', lockedUntil: null })
  proceed(flow, store.getState().wallet?.target ?? null)
})

/**
 * The frame recovers the wallet with `passcode`. A refused passcode is told to the host even
 * should the flow have changed meanwhile (reportRecoveryFailure), and a recovery is counted.
 */
async function recover(passcode: string | { passkey: true }): Promise<void> {
  try {
    const { wallet } = ownWallet()
    const token = await accessToken('recovery_not_allowed')
    const frame = await walletFrame()
    // With a passkey the frame runs the ceremony itself (get needs no click of its own).
    await frame['latch:wallet:recover'](
      typeof passcode === 'object'
        ? { address: wallet.address, accessToken: token, recoveryMethod: 'passkey' }
        : { address: wallet.address, accessToken: token, recoveryPin: passcode },
    )
  } catch (e) {
    reportRecoveryFailure(e)
    throw e
  }
  track('recovery_completed')
}
