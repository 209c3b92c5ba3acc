import { flushSync } from 'react-dom'
import { createRoot } from 'react-dom/client'
import { App } from './App.tsx'
import { hydrateLanding, serverLandingState } from './ssr/hydrate.tsx'
import { CREDENTIAL_WINDOW_QUERY, PASSKEY_WINDOW_QUERY } from './startup/early.ts'
import { start } from './startup/startup.ts'
import './styles.css'

const root = document.getElementById('root')
// Without a landing from the server, the first render waits for the host's init: the landing is then rendered once, with the app and
// the host configuration, instead of a loading view first and the landing over it (each render of
// the tree costs main-thread time the host page shares on a phone's first open). Until then,
// index.html shows the loading view's markup without JavaScript; the host shows the frame only once
// a flow opens it, after init. flushSync: React DOM would otherwise render on a later task of its
// scheduler, after the host's calls queued behind init (its login) had run against a modal not yet
// on the page; Preact renders at once either way.
// The window a passkey is created in where the frame may not create one (passkey-window.ts):
// the same page on the same origin, one ceremony for its opener and nothing else.
const query = new URLSearchParams(location.search)
if (query.has(PASSKEY_WINDOW_QUERY)) {
  void import('./passkeys/passkey-window.ts').then((m) => m.runPasskeyWindow())
} else if (query.has(CREDENTIAL_WINDOW_QUERY)) {
  // Where the browser refused the wallet credential cross-site: one sign-in, first-party.
  void import('./wallet/credential-window.ts').then((m) => m.runCredentialWindow())
} else if (root && serverLandingState(window, root)) {
  // The modal server rendered the landing (ssr/): hydrated now, before the host's init, which
  // then only updates it.
  start()
  void hydrateLanding(window, root)
} else start(root ? { render: () => flushSync(() => createRoot(root).render(<App />)) } : {})
