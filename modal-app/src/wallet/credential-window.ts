/**
 * Signing in again in a small window of the modal's own origin, for a browser that refused the
 * wallet credential in the cross-site frames (WebKit's default policy; Safari). The window is a
 * top-level page of Latch's site, so the answer to its sign-in sets the new session's wallet
 * credential and refresh cookie first-party, where the browser keeps them, and the cross-site
 * frames send them from then on (docs/architecture.md, "Cross-site in WebKit"). The window
 * hands the new session's access token and user back to the frame that opened it, which takes
 * the session over when it is the same user.
 *
 * The credential is still set only by the answer to a sign-in the visitor completed with the
 * code from their mailbox, received through a fetch of the modal origin, and no script reads it:
 * nothing the host page or the modal could hold (a token, a grant) mints it here either.
 *
 * Both ends are here: `openCredentialWindow` and `signInInWindow` in the modal's frame, and
 * `runCredentialWindow` in the window (main.tsx starts it for `/?latch-credential-window`).
 * Messages as every job window's (shell/job-window.ts): each names the nonce the frame made (in the window's
 * fragment, which no server sees), goes to the modal's origin only, and each end reads only
 * messages of that origin from the one window it expects. A page of another origin that opens
 * the window hears nothing and cannot start it.
 */
import {
  type AuthResponse,
  CODE_ROUTE_PATHS,
  createApiClient,
  isLatchError,
  LatchError,
  type User,
} from '@latch/shared'
import {
  type JobWindow,
  jobWindowSide,
  openJobWindow,
  watchJobWindow,
} from '../shell/job-window.ts'
import { CREDENTIAL_WINDOW_QUERY } from '../startup/early.ts'

const TAG = 'latch:credential-window'
/** Long enough to find the mail and type the code. */
const WINDOW_MS = 10 * 60_000

/** What the window shows, in the modal's language (it loads no message table of its own). */
export interface CredentialWindowTexts {
  title: string
  body: string
  legend: string
  button: string
  wrong: string
  failed: string
  lang: string
  dir: string
}

/** What the window needs to sign the visitor in: the API, the app, the address, the language. */
export interface CredentialWindowStart {
  apiUrl: string
  appId: string
  email: string
  /** The code e-mail's language. */
  locale: string
  texts: CredentialWindowTexts
}

type Message =
  | { tag: typeof TAG; nonce: string; type: 'ready' }
  | ({ tag: typeof TAG; nonce: string; type: 'start' } & CredentialWindowStart)
  | { tag: typeof TAG; nonce: string; type: 'signed-in'; token: string; user: User }

const isMessage = (data: unknown, nonce: string): data is Message =>
  typeof data === 'object' &&
  data !== null &&
  (data as { tag?: unknown }).tag === TAG &&
  (data as { nonce?: unknown }).nonce === nonce

/** A window opened for one sign-in, with the nonce its messages carry. */
export type CredentialWindow = JobWindow

/**
 * Opens the window on the visitor's click, before anything is awaited (a browser lets a page
 * open a window only while the click's activation lasts); null when the browser blocked it.
 */
export function openCredentialWindow(): CredentialWindow | null {
  return openJobWindow(CREDENTIAL_WINDOW_QUERY, 'latch-credential', 440)
}

/**
 * Has the window sign the visitor in by e-mail code; answers the new session's access token
 * and user. Rejects with `not_authenticated` when the visitor closed the window first, or after
 * WINDOW_MS.
 */
export function signInInWindow(
  target: CredentialWindow,
  start: CredentialWindowStart,
): Promise<{ token: string; user: User }> {
  const { nonce } = target
  return new Promise((resolve, reject) => {
    const job: Message = { tag: TAG, nonce, type: 'start', ...start }
    const stop = watchJobWindow(
      target,
      WINDOW_MS,
      job,
      (data) => isMessage(data, nonce),
      (data) => {
        const message = data as Message
        if (message.type === 'signed-in') {
          stop()
          resolve({ token: message.token, user: message.user })
        }
      },
      () => {
        stop()
        reject(LatchError.of('not_authenticated'))
      },
    )
  })
}

/** The window's side: one sign-in for the frame that opened it, which then closes it. */
export function runCredentialWindow(): void {
  const side = jobWindowSide()
  if (!side) return
  const { nonce, root } = side
  let started = false
  side.listen({ tag: TAG, nonce, type: 'ready' } satisfies Message, (data) => {
    if (started || !isMessage(data, nonce) || data.type !== 'start') return
    started = true
    show(root, data, (token, user) => {
      side.finish({ tag: TAG, nonce, type: 'signed-in', token, user } satisfies Message)
    })
  })
}

/** The window's one view: the code sent to the address, its field and Continue. */
function show(
  root: HTMLElement,
  start: CredentialWindowStart,
  done: (token: string, user: User) => void,
): void {
  const { texts, email } = start
  // The window is a top-level page of the modal's site: the answer's cookies are first-party.
  const api = createApiClient({ baseUrl: start.apiUrl, appId: start.appId, credentials: 'include' })
  const path = CODE_ROUTE_PATHS.email
  document.documentElement.lang = texts.lang
  document.documentElement.dir = texts.dir
  document.title = texts.title
  const screen = document.createElement('main')
  screen.className = 'latch-screen latch-center'
  screen.dataset.testid = 'credential-window'
  const title = document.createElement('h1')
  title.className = 'latch-title'
  title.textContent = texts.title
  const body = document.createElement('p')
  body.className = 'latch-description'
  body.textContent = texts.body
  const form = document.createElement('form')
  const label = document.createElement('label')
  label.htmlFor = 'latch-credential-code'
  label.textContent = texts.legend
  const input = document.createElement('input')
  input.id = 'latch-credential-code'
  input.className = 'latch-input'
  input.dataset.testid = 'credential-code'
  input.inputMode = 'numeric'
  input.autocomplete = 'one-time-code'
  input.maxLength = 6
  const button = document.createElement('button')
  button.type = 'submit'
  button.className = 'latch-button latch-button-primary'
  button.dataset.testid = 'credential-submit'
  button.textContent = texts.button
  const status = document.createElement('p')
  status.className = 'latch-description'
  status.setAttribute('role', 'status')
  status.dataset.testid = 'credential-status'
  form.append(label, input, button)
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const code = input.value.trim()
    if (!/^\d{6}$/.test(code)) {
      status.textContent = texts.wrong
      return
    }
    button.disabled = true
    status.textContent = ''
    api.request<AuthResponse>(`${path}/authenticate`, { email, code }, { auth: false }).then(
      (res) => done(res.token, res.user),
      (e: unknown) => {
        button.disabled = false
        status.textContent = isLatchError(e) && e.status === 422 ? texts.wrong : texts.failed
      },
    )
  })
  screen.append(title, body, form, status)
  root.replaceChildren(screen)
  input.focus()
  api.request(`${path}/init`, { email, locale: start.locale }, { auth: false }).catch((e) => {
    // A code sent less than a minute ago (the window opened again) still works: nothing to say.
    if (!(isLatchError(e) && e.status === 429)) status.textContent = texts.failed
  })
}
