/**
 * Creating a passkey in a small window of the modal's own origin, where the browser refuses to
 * create one inside the modal's cross-origin frame (Safari does; so does any browser whose
 * frame lacks the `publickey-credentials-create` permission). The window runs the same ceremony
 * the frame would (same origin, so the same RP ID and the same server checks) on a click of its
 * own, and hands the new credential's public parts back.
 *
 * Both ends are here: `openPasskeyWindow` and `createInWindow` in the modal's frame, and
 * `runPasskeyWindow` in the window (main.tsx starts it for `/?latch-passkey-window`).
 *
 * Who can take part: every message names the ceremony's nonce (made by the frame, given to the
 * window in its address's fragment, which no server sees) and goes to the modal's origin only
 * (`postMessage(…, location.origin)`); each end reads only messages from that origin and from
 * the one window it expects (the frame its opener, the window it opened). A page of another
 * origin that opens the window, or that the window's opener navigates to, hears nothing and
 * cannot speak to it. What comes back is public: the credential's id, public key and attestation
 * for the server to verify against the challenge bound to this browser (passkey.ts); the PRF
 * outputs are never asked for here.
 */
import { LatchError } from '@latch/shared'
import { t } from '../i18n/i18n.ts'
import {
  type JobWindow,
  jobWindowSide,
  openJobWindow,
  watchJobWindow,
} from '../shell/job-window.ts'
import { PASSKEY_WINDOW_QUERY } from '../startup/early.ts'

const TAG = 'latch:passkey-window'
/** The longest the frame waits for the window: the ceremony's own timeout and the visitor's click. */
const WINDOW_MS = 120_000

/** What the window shows, in the modal's language (it loads no message table of its own). */
export interface WindowTexts {
  title: string
  button: string
  waiting: string
  lang: string
  dir: string
}

/** The window's texts, in the modal's language. */
export function windowTexts(): WindowTexts {
  const { lang, dir } = document.documentElement
  return { title: t('pkCreate'), button: t('pkTitle'), waiting: t('pkWaiting'), lang, dir }
}

/** The new credential as the frame would have it: registration JSON, and whether PRF is on. */
export interface CreatedCredential {
  json: Record<string, unknown>
  prfEnabled: boolean | undefined
}

type Message =
  | { tag: typeof TAG; nonce: string; type: 'ready' }
  | {
      tag: typeof TAG
      nonce: string
      type: 'create'
      publicKey: PublicKeyCredentialCreationOptions
      texts: WindowTexts
    }
  | { tag: typeof TAG; nonce: string; type: 'created'; created: CreatedCredential }
  | { tag: typeof TAG; nonce: string; type: 'failed'; name: string; message: string }

const isMessage = (data: unknown, nonce: string): data is Message =>
  typeof data === 'object' &&
  data !== null &&
  (data as { tag?: unknown }).tag === TAG &&
  (data as { nonce?: unknown }).nonce === nonce

/**
 * Whether this frame must create passkeys in a window: it is framed by another origin and the
 * browser does not say it may create here. Chromium answers through `document.featurePolicy`
 * (the SDK's iframe delegates the permission); a browser without that API gets the window, which
 * works everywhere.
 */
export function createNeedsWindow(): boolean {
  let framed: boolean
  try {
    framed = window.top !== window && window.top?.location.origin !== location.origin
  } catch {
    framed = true
  }
  if (!framed) return false
  const policy = (document as { featurePolicy?: { allowsFeature(name: string): boolean } })
    .featurePolicy
  return !policy?.allowsFeature('publickey-credentials-create')
}

/** A window opened for one ceremony, with the nonce its messages carry. */
export type PasskeyWindow = JobWindow

/**
 * Opens the window on the visitor's click, before anything is awaited (a browser lets a page
 * open a window only while the click's activation lasts). Null where the window is not needed;
 * a LatchError when the browser blocked it.
 */
export function openPasskeyWindow(): PasskeyWindow | null {
  if (!createNeedsWindow()) return null
  const opened = openJobWindow(PASSKEY_WINDOW_QUERY, 'latch-passkey', 420)
  if (!opened) throw LatchError.of('passkey_failed')
  return opened
}

/** Closes the window of a ceremony that ended before it did (an error on the frame's side). */
export function closePasskeyWindow(target: PasskeyWindow | null): void {
  if (target && !target.window.closed) target.window.close()
}

/**
 * Runs the creation in the window: waits for it to be ready, sends the options and texts, and
 * answers what it created. Rejects with the browser's error (a cancel stays a NotAllowedError),
 * with a NotAllowedError when the visitor closed the window, on `signal`, or after WINDOW_MS.
 */
export function createInWindow(
  target: PasskeyWindow,
  publicKey: PublicKeyCredentialCreationOptions,
  texts: WindowTexts,
  signal?: AbortSignal,
): Promise<CreatedCredential> {
  const { nonce } = target
  return new Promise<CreatedCredential>((resolve, reject) => {
    const end = (settle: () => void) => {
      stop()
      signal?.removeEventListener('abort', onAbort)
      settle()
    }
    const cancel = (why: string) => end(() => reject(new DOMException(why, 'NotAllowedError')))
    const job: Message = { tag: TAG, nonce, type: 'create', publicKey, texts }
    const stop = watchJobWindow(
      target,
      WINDOW_MS,
      job,
      (data) => isMessage(data, nonce),
      (data) => {
        const message = data as Message
        if (message.type === 'created') end(() => resolve(message.created))
        else if (message.type === 'failed')
          end(() => reject(new DOMException(message.message, message.name)))
      },
      (why) =>
        cancel(why === 'closed' ? 'The passkey window was closed' : 'The passkey window timed out'),
    )
    const onAbort = () => cancel('The passkey window was replaced')
    signal?.addEventListener('abort', onAbort)
  })
}

export const toB64u = (buffer: ArrayBuffer | ArrayBufferView): string => {
  const bytes =
    buffer instanceof ArrayBuffer
      ? new Uint8Array(buffer)
      : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  let text = ''
  for (const b of bytes) text += String.fromCharCode(b)
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

export function attachment(credential: PublicKeyCredential): Record<string, unknown> {
  return credential.authenticatorAttachment
    ? { authenticatorAttachment: credential.authenticatorAttachment }
    : {}
}

/**
 * A new credential as the server reads it (PublicKeyCredential.toJSON()), and whether its
 * authenticator has PRF. The PRF outputs (if any) are the wallet's business, never the server's.
 */
export function registrationJson(credential: PublicKeyCredential): CreatedCredential {
  const response = credential.response as AuthenticatorAttestationResponse
  const prf = (credential.getClientExtensionResults() as { prf?: { enabled?: boolean } }).prf
  return {
    json: {
      id: credential.id,
      rawId: toB64u(credential.rawId),
      type: 'public-key',
      response: {
        clientDataJSON: toB64u(response.clientDataJSON),
        attestationObject: toB64u(response.attestationObject),
        transports: response.getTransports?.() ?? [],
      },
      clientExtensionResults: {},
      ...attachment(credential),
    },
    prfEnabled: prf?.enabled,
  }
}

/** The window's side: one ceremony for the frame that opened it, which then closes it. */
export function runPasskeyWindow(): void {
  const side = jobWindowSide()
  if (!side) return
  const { nonce, root } = side
  let shown = false
  side.listen({ tag: TAG, nonce, type: 'ready' } satisfies Message, (data) => {
    if (shown || !isMessage(data, nonce) || data.type !== 'create') return
    shown = true
    const { publicKey, texts } = data
    show(root, texts, () => create(publicKey), nonce, side.finish)
  })
}

/** The ceremony, as the frame would run it; the registration's public parts as JSON. */
async function create(publicKey: PublicKeyCredentialCreationOptions): Promise<CreatedCredential> {
  const credential = await navigator.credentials.create({ publicKey })
  if (!(credential instanceof PublicKeyCredential)) {
    throw new DOMException('No passkey created', 'NotAllowedError')
  }
  return registrationJson(credential)
}

/** The window's one view: a title and the button whose click runs the ceremony. */
function show(
  root: HTMLElement,
  texts: WindowTexts,
  run: () => Promise<CreatedCredential>,
  nonce: string,
  finish: (message: Message) => void,
): void {
  document.documentElement.lang = texts.lang
  document.documentElement.dir = texts.dir
  document.title = texts.title
  const screen = document.createElement('main')
  screen.className = 'latch-screen latch-center'
  const title = document.createElement('h1')
  title.className = 'latch-title'
  title.textContent = texts.title
  const status = document.createElement('p')
  status.className = 'latch-description'
  status.setAttribute('role', 'status')
  const button = document.createElement('button')
  button.type = 'button'
  button.className = 'latch-button latch-button-primary'
  button.textContent = texts.button
  button.addEventListener('click', () => {
    button.disabled = true
    status.textContent = texts.waiting
    run().then(
      (created) => {
        finish({ tag: TAG, nonce, type: 'created', created })
      },
      (e: unknown) => {
        const error = e as { name?: unknown; message?: unknown }
        finish({
          tag: TAG,
          nonce,
          type: 'failed',
          name: typeof error.name === 'string' ? error.name : 'Error',
          message: typeof error.message === 'string' ? error.message : String(e),
        })
      },
    )
  })
  screen.append(title, button, status)
  root.replaceChildren(screen)
  button.focus()
}
