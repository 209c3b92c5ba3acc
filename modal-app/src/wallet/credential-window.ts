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
 * Messages as in passkey-window.ts: each names the nonce the frame made (in the window's
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
import { CREDENTIAL_WINDOW_QUERY } from '../startup/early.ts'

const TAG = 'latch:credential-window'
/** Long enough to find the mail and type the code. */
const WINDOW_MS = 10 * 60_000
const CLOSED_POLL_MS = 400

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
export interface CredentialWindow {
  window: Window
  nonce: string
}

/**
 * Opens the window on the visitor's click, before anything is awaited (a browser lets a page
 * open a window only while the click's activation lasts); null when the browser blocked it.
 */
export function openCredentialWindow(): CredentialWindow | null {
  const nonce = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('')
  const url = `${location.origin}/?${CREDENTIAL_WINDOW_QUERY}#${nonce}`
  const opened = window.open(url, `latch-credential-${nonce}`, 'popup,width=440,height=560')
  return opened ? { window: opened, nonce } : null
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
  const { window: popup, nonce } = target
  return new Promise((resolve, reject) => {
    const end = (settle: () => void) => {
      window.removeEventListener('message', onMessage)
      clearInterval(poll)
      clearTimeout(timer)
      if (!popup.closed) popup.close()
      settle()
    }
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== location.origin || event.source !== popup) return
      if (!isMessage(event.data, nonce)) return
      const data = event.data
      if (data.type === 'ready') {
        const message: Message = { tag: TAG, nonce, type: 'start', ...start }
        popup.postMessage(message, location.origin)
      } else if (data.type === 'signed-in') {
        end(() => resolve({ token: data.token, user: data.user }))
      }
    }
    window.addEventListener('message', onMessage)
    const gone = () => end(() => reject(LatchError.of('not_authenticated')))
    const poll = setInterval(() => {
      if (popup.closed) gone()
    }, CLOSED_POLL_MS)
    const timer = setTimeout(gone, WINDOW_MS)
  })
}

/** The window's side: one sign-in for the frame that opened it, then it closes. */
export function runCredentialWindow(): void {
  const nonce = location.hash.slice(1)
  const opener = window.opener as Window | null
  const root = document.getElementById('root')
  if (!/^[0-9a-f]{32}$/.test(nonce) || !opener || !root) {
    window.close()
    return
  }
  const send = (message: Message) => opener.postMessage(message, location.origin)
  let started = false
  window.addEventListener('message', (event: MessageEvent) => {
    if (event.origin !== location.origin || event.source !== opener || started) return
    if (!isMessage(event.data, nonce) || event.data.type !== 'start') return
    started = true
    show(root, event.data, (token, user) => {
      send({ tag: TAG, nonce, type: 'signed-in', token, user })
      window.close()
    })
  })
  send({ tag: TAG, nonce, type: 'ready' })
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
