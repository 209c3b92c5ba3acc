/**
 * Passkey ceremonies in the modal (loaded lazily: the landing holds only a button and the
 * conditional-UI trigger). The server's options arrive as JSON; the browser wants buffers, and
 * its answer goes back as JSON: both conversions are here, so no browser needs
 * `PublicKeyCredential.parse*FromJSON` or `toJSON()`. Every ceremony is bound to this browser
 * (a fresh secret whose hash goes with the options request, as OAuth's), and a link's to the
 * signed-in user (its options request carries the access token).
 */
import {
  type AuthResponse,
  embeddedWallet,
  LatchError,
  type LinkResponse,
  type PasskeyAccount,
  SUCCESS_CLOSE_DELAY_MS,
  type User,
} from '@latch/shared'
import { approvedInWallet } from '../flow/complete.ts'
import {
  addNextStep,
  type FlowHandle,
  type NextStepRule,
  navigate,
  onFlow,
  succeed,
} from '../flow/flow.ts'
import { browserSecret } from '../oauth/oauth.ts'
import { runtime } from '../runtime.ts'
import { setUser } from '../session/account.ts'
import type { AppView } from '../startup/config.ts'
import { store } from '../store.ts'
import {
  attachment,
  type CreatedCredential,
  closePasskeyWindow,
  createInWindow,
  openPasskeyWindow,
  type PasskeyWindow,
  registrationJson,
  toB64u,
  windowTexts,
} from './passkey-window.ts'

type Json = Record<string, unknown>

const fromB64u = (text: string): Uint8Array<ArrayBuffer> => {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/')
  const raw = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4))
  const out = new Uint8Array(raw.length)
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i)
  return out
}

interface CredentialRef {
  id: string
  type: 'public-key'
  transports?: AuthenticatorTransport[]
}

const refs = (list: unknown): PublicKeyCredentialDescriptor[] =>
  ((list as CredentialRef[] | undefined) ?? []).map((c) => ({
    ...c,
    id: fromB64u(c.id),
  }))

/** Whether this browser can run a passkey ceremony at all. */
export function passkeysSupported(): boolean {
  return typeof PublicKeyCredential !== 'undefined' && !!navigator.credentials
}

/**
 * Whether the browser's refusal is the visitor's own cancel (or a timeout, or a newer ceremony
 * taking over): the screen then says nothing, its buttons are there again.
 */
export function isCancel(e: unknown): boolean {
  const name = (e as { name?: unknown } | null)?.name
  return name === 'NotAllowedError' || name === 'AbortError'
}

/** A browser's refusal other than a cancel, as the catalogue's error. */
function ceremonyError(e: unknown): unknown {
  if (e instanceof LatchError || isCancel(e)) return e
  const name = (e as { name?: unknown } | null)?.name
  if (name === 'NotSupportedError') return LatchError.of('method_not_available', { cause: e })
  return LatchError.of('passkey_verification_failed', { cause: e })
}

function assertionJson(credential: PublicKeyCredential): Json {
  const response = credential.response as AuthenticatorAssertionResponse
  return {
    id: credential.id,
    rawId: toB64u(credential.rawId),
    type: 'public-key',
    response: {
      clientDataJSON: toB64u(response.clientDataJSON),
      authenticatorData: toB64u(response.authenticatorData),
      signature: toB64u(response.signature),
      ...(response.userHandle ? { userHandle: toB64u(response.userHandle) } : {}),
    },
    clientExtensionResults: {},
    ...attachment(credential),
  }
}

/** The one ceremony under way (a browser runs one at a time). */
let running: { controller: AbortController; settled: Promise<unknown> } | null = null

/**
 * Runs a browser ceremony after the one under way (the field's conditional request) has been
 * aborted and has settled: a browser refuses a second request while one is pending. `until`
 * aborts it too (the landing that asked for it is gone).
 */
async function ceremony<T>(
  run: (signal: AbortSignal) => Promise<T>,
  until?: AbortSignal,
): Promise<T> {
  const previous = running
  previous?.controller.abort()
  await previous?.settled
  const controller = new AbortController()
  if (until?.aborted) controller.abort()
  until?.addEventListener('abort', () => controller.abort(), { once: true })
  const work = run(controller.signal)
  const entry = { controller, settled: work.catch(() => {}) }
  running = entry
  try {
    return await work
  } finally {
    if (running === entry) running = null
  }
}

/** Refuses to go on once `signal` is aborted: the landing that asked for the request is gone. */
function goOn(signal: AbortSignal | undefined) {
  if (signal?.aborted) throw new DOMException('The landing is gone', 'AbortError')
}

/**
 * Asks the authenticator for an assertion with the server's options; answers its JSON. `until`
 * ends the request, and refuses its answer, once aborted (the conditional request's landing).
 */
async function assert(
  mediation: CredentialMediationRequirement | undefined,
  secretHash: string,
  until?: AbortSignal,
) {
  const { api } = runtime()
  const { options } = await api.request<{ options: Json }>(
    '/passkeys/authenticate/options',
    { browser_hash: secretHash },
    { auth: false },
  )
  goOn(until)
  const credential = (await ceremony(
    (signal) =>
      navigator.credentials.get({
        ...(mediation ? { mediation } : {}),
        signal,
        publicKey: {
          challenge: fromB64u(options.challenge as string),
          rpId: options.rpId as string,
          timeout: options.timeout as number,
          userVerification: 'required',
          allowCredentials: refs(options.allowCredentials),
        },
      }),
    until,
  )) as PublicKeyCredential | null
  goOn(until)
  if (!credential) throw new DOMException('No passkey chosen', 'NotAllowedError')
  return assertionJson(credential)
}

/**
 * Signs in with a passkey: the modal's button (mediation unset) or the e-mail field's autofill
 * (`until`: its landing, see startConditional).
 */
export const signInWithPasskey = onFlow(async function signInWithPasskey(
  flow: FlowHandle,
  mediation?: 'conditional',
  until?: AbortSignal,
): Promise<void> {
  const { secret, hash } = await browserSecret()
  let credential: Json
  try {
    goOn(until)
    credential = await assert(mediation, hash, until)
  } catch (e) {
    throw ceremonyError(e)
  }
  const { api, session } = runtime()
  const res = await flow.guard(
    api.request<AuthResponse>(
      '/passkeys/authenticate',
      { credential, browser_secret: secret },
      { auth: false },
    ),
  )
  session.start(res, res.user)
  succeed({ user: res.user, isNewUser: res.is_new_user }, 'passkey')
})

/** Whether the landing that shows the e-mail field is on screen. */
const onLanding = (s: { open: boolean; screen: string }) => s.open && s.screen === 'LANDING'

/**
 * Starts the e-mail field's conditional request where the browser offers it: the browser then
 * lists this site's passkeys in the field's autofill, and a choice signs in. Errors are quiet
 * (the visitor did not ask for anything); a click on the passkey button replaces it.
 * The request belongs to the landing: once the visitor has gone on (a code screen, another
 * method) or closed the modal, it is aborted, and an answer that comes anyway (an authenticator
 * that answers a request nobody sees) signs nobody in. A request set up meanwhile (the server's
 * options on their way) is never made.
 */
export function startConditional(): void {
  // One at a time: the field takes the focus again and again, the request waits on. One that
  // was aborted (the modal closed and opened again at once) is ending: a new landing needs its
  // own (ceremony() waits for the old one to settle).
  if (conditional && !conditional.signal.aborted) return
  const landing = new AbortController()
  conditional = landing
  const unsubscribe = store.subscribe((s) => {
    if (!onLanding(s)) landing.abort()
  })
  void (async () => {
    if (!passkeysSupported() || !onLanding(store.getState())) return
    const available = await PublicKeyCredential.isConditionalMediationAvailable?.().catch(
      () => false,
    )
    if (available) await signInWithPasskey('conditional', landing.signal)
  })()
    .catch(() => {})
    .finally(() => {
      unsubscribe()
      if (conditional === landing) conditional = null
    })
}

/** The field's conditional request under way (or being set up): aborted, it ends. */
let conditional: AbortController | null = null

/**
 * Creates a credential in this frame, or in the window opened for it (`target`): its JSON for
 * the server, and whether the authenticator has PRF. After the ceremony under way is stopped.
 */
async function createCredential(
  publicKey: PublicKeyCredentialCreationOptions,
  target: PasskeyWindow | null,
): Promise<CreatedCredential> {
  if (target) {
    return ceremony((signal) => createInWindow(target, publicKey, windowTexts(), signal))
  }
  const created = (await ceremony((signal) =>
    navigator.credentials.create({ signal, publicKey }),
  )) as PublicKeyCredential | null
  if (!created) throw new DOMException('No passkey created', 'NotAllowedError')
  return registrationJson(created)
}

/**
 * Creates a passkey: a sign-up in a sign-in flow, or a link to the signed-in user in a
 * link('passkey') flow (the flow's intent says which). PRF is asked for on the same credential,
 * so the wallet frame can later derive a recovery key from it.
 */
export const createPasskey = onFlow(async function createPasskey(
  flow: FlowHandle,
  name?: string,
): Promise<User> {
  const { intent } = flow
  const { api, session } = runtime()
  // Where the frame may not create (Safari), a window of the modal's origin does; opened now,
  // on the click, before anything is awaited.
  let target: PasskeyWindow | null
  try {
    target = openPasskeyWindow()
  } catch (e) {
    throw ceremonyError(e)
  }
  let credential: Json
  let secret: string
  try {
    const browser = await browserSecret()
    secret = browser.secret
    const hash = browser.hash
    const { options } = await api.request<{ options: Json }>(
      '/passkeys/register/options',
      { browser_hash: hash },
      { auth: intent === 'link' },
    )
    const user = options.user as { id: string; name: string; displayName: string }
    const publicKey: PublicKeyCredentialCreationOptions = {
      challenge: fromB64u(options.challenge as string),
      rp: options.rp as PublicKeyCredentialRpEntity,
      user: { ...user, id: fromB64u(user.id) },
      pubKeyCredParams: options.pubKeyCredParams as PublicKeyCredentialParameters[],
      timeout: options.timeout as number,
      attestation: 'none',
      excludeCredentials: refs(options.excludeCredentials),
      authenticatorSelection: options.authenticatorSelection as AuthenticatorSelectionCriteria,
      extensions: { credProps: true, prf: {} } as AuthenticationExtensionsClientInputs,
    }
    credential = (await createCredential(publicKey, target)).json
  } catch (e) {
    closePasskeyWindow(target)
    throw ceremonyError(e)
  }
  const body = { credential, browser_secret: secret, ...(name ? { name } : {}) }
  if (intent === 'link') {
    await flow.guard(approvedInWallet('/passkeys', {}))
    const user = await flow.guard(api.request<LinkResponse>('/passkeys/link', body))
    setUser(user)
    rememberLinked(credential.id as string)
    return user
  }
  const res = await flow.guard(
    api.request<AuthResponse>('/passkeys/register', body, { auth: false }),
  )
  session.start(res, res.user)
  succeed({ user: res.user, isNewUser: res.is_new_user }, 'passkey')
  return res.user
})

/** The user's passkeys, oldest first. */
export function userPasskeys(user: User | null): PasskeyAccount[] {
  return (user?.linkedAccounts ?? []).filter((a): a is PasskeyAccount => a.type === 'passkey')
}

export async function renamePasskey(credentialId: string, name: string): Promise<void> {
  setUser(
    await runtime().api.request<User>('/passkeys/rename', { credential_id: credentialId, name }),
  )
}

export async function removePasskey(credentialId: string): Promise<void> {
  setUser(await runtime().api.request<User>('/passkeys/unlink', { credential_id: credentialId }))
}

/** link('passkey') ends with the user as the screen leaves them. */
export function finishManaging(): void {
  const { user } = store.getState()
  if (user) succeed({ user, isNewUser: false }, 'passkey')
}

// ---- Passkey recovery for a wallet that exists -------------------------------------------

/**
 * Notes the passkey the flow on screen just linked, in the store's flow state: what the recovery
 * offer seals under. A later flow starts without it (the offer is this flow's).
 */
export function rememberLinked(credentialId: string): void {
  store.setState({ linkedPasskey: credentialId })
}

/** The passkey the flow on screen linked, if it linked one. */
export function linkedPasskey(): string | null {
  return store.getState().linkedPasskey
}

/**
 * PASSKEY_RECOVERY_SCREEN's 'Use passkey': the wallet's share sealed under the passkey this flow
 * linked, then the flow ends after the success pause. Resolves once sealed; with no such
 * passkey, the flow ends at once and it never resolves.
 */
export const sealUnderLinkedPasskey = onFlow(async (flow): Promise<void> => {
  const credentialId = linkedPasskey()
  if (!credentialId) {
    flow.finish()
    return new Promise<void>(() => {})
  }
  const { addRecoveryPasskey } = await import('../wallet/flows.ts')
  await flow.guard(addRecoveryPasskey(credentialId))
  setTimeout(() => flow.finish(), SUCCESS_CLOSE_DELAY_MS)
})

/**
 * Whether linking `credentialId` offers passkey recovery: the app has passkeys on, the user has
 * an in-app wallet recovered by passcode, and the passkey is still theirs. A passcode wallet's
 * new device then recovers with the passkey instead of the passcode. An automatic wallet is not
 * offered: its new device recovers without asking anything, so a passkey would never be used.
 * (A passcode wallet that had a passkey added says nothing of it in the user: it is offered
 * again, and accepting seals the share under this passkey too.)
 */
export function offersPasskeyRecovery(
  app: AppView,
  user: User,
  credentialId: string | null,
): boolean {
  const wallet = embeddedWallet(user.linkedAccounts)
  return (
    app.methods.passkey &&
    !!wallet &&
    wallet.recoveryMethod === 'user-passcode' &&
    // Still the user's: one removed again before 'Done' is offered for nothing.
    userPasskeys(user).some((p) => p.credentialId === credentialId)
  )
}

/**
 * link('passkey') ends ('Done') after a passkey was added: the offer to recover the wallet with
 * it comes next (PASSKEY_RECOVERY_SCREEN), at once, as the visitor just clicked.
 */
export const offerPasskeyRecovery: NextStepRule = ({ flow, result, app }) =>
  flow.kind === 'link' &&
  flow.account === 'passkey' &&
  offersPasskeyRecovery(app, result.user, linkedPasskey())
    ? { pauseMs: 0, start: () => navigate('PASSKEY_RECOVERY_SCREEN') }
    : null

// Hung when this chunk loads (with PASSKEY_SCREEN): the landing carries none of it.
addNextStep(offerPasskeyRecovery)
