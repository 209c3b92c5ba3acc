/**
 * The page's side of the server-rendered landing (the server's: ssr.ts, render.tsx). Where the
 * root element holds the server's landing, the store is set up from the same input the server
 * rendered from (the embedded app configuration, the host's landing configuration the server
 * took from the frame's query and wrote on the root element, the language the server wrote on
 * the page's `lang`, whose table loads first where it is not English) and React hydrates it as
 * soon as the bundle runs, before the host's init: the field the visitor may already be typing
 * in stays theirs. React hydrates the landing's Suspense boundary in a later task than the
 * shell, so the host's calls often change the store first (its init, its login() opening the
 * modal): the landing is hydrated from the state it was rendered from and those changes applied
 * after (serveCurrentState, hooks.ts). A browser whose own languages pick another one (its
 * Accept-Language said otherwise) gets it at init, which re-renders the hydrated landing in it.
 * What the visitor did before (held by before-hydration.ts) is carried out once the landing is
 * hydrated and the host's sign-in is on screen.
 *
 * Anything that does not match (no embedded configuration for this app) renders client-side as
 * without the server's landing; so does a hydration React cannot complete (it renders what did
 * not match afresh). Either way what the visitor typed is put back and what they did carried
 * out once (replay.ts).
 */
import type { HostAppConfig, ServerAppConfig } from '@latch/shared'
import { type ReactNode, useLayoutEffect } from 'react'
import { hydrateRoot, type Root } from 'react-dom/client'
import { App } from '../App.tsx'
import { initialize } from '../flow/flow.ts'
import { serveCurrentState } from '../hooks.ts'
import { applyLocale } from '../i18n/i18n.ts'
import { EMBEDDED_CONFIG_ID } from '../startup/early.ts'
import { appIdFromHash } from '../startup/origin.ts'
import {
  BEFORE_HYDRATION_KEY,
  type BeforeHydration,
  SERVER_RENDERED_ATTR,
} from './before-hydration.ts'

/**
 * Runs `done` once its tree is committed: the shell is hydrated (the landing, in its Suspense
 * boundary, may be hydrated in a later task; a click on it hydrates it first).
 */
export function Hydrated({ done, children }: { done: () => void; children: ReactNode }) {
  useLayoutEffect(() => done(), [done])
  return children
}

/**
 * What the inline script held, once: it stops holding (from here the page handles what the
 * visitor does), and what it held is carried out once the sign-in shows, whoever renders the
 * landing (its code loads only for a visitor who acted before the JavaScript ran).
 */
function takeHeld(win: Window): () => void {
  const held = (win as Window & { [BEFORE_HYDRATION_KEY]?: BeforeHydration })[BEFORE_HYDRATION_KEY]
  held?.stop()
  return () => {
    if (held?.actions.length) {
      void import('./replay.ts').then((m) => m.replayWhenSignInShows(win, held.actions))
    }
  }
}

/**
 * Sets the store up as the server rendered the landing: true when it did, so the root may be
 * hydrated; false leaves the store as it was (the page renders after init, replacing any markup
 * of the server's, and carries out what the visitor did meanwhile as a hydrated one would).
 */
export function serverLandingState(win: Window, root: HTMLElement): boolean {
  const rendered = root.getAttribute(SERVER_RENDERED_ATTR)
  if (rendered === null) return false
  if (sameInput(win, rendered)) return true
  takeHeld(win)()
  return false
}

/** Sets the store from the server's input, if this page may hydrate with it. */
function sameInput(win: Window, rendered: string): boolean {
  const appId = appIdFromHash(win.location.hash)
  const block = win.document.getElementById(EMBEDDED_CONFIG_ID)
  if (!appId || !block || block.getAttribute('data-app-id') !== appId) return false
  try {
    const host = JSON.parse(rendered) as HostAppConfig
    initialize(JSON.parse(block.textContent ?? '') as ServerAppConfig, host)
    return true
  } catch {
    return false
  }
}

/** Hydrates the server's landing; answers React's root once it is made. */
export function hydrateLanding(win: Window, root: HTMLElement): Promise<Root> {
  // In the server's language (a shipped one: no warning), its table first where not English:
  // until then the inline script keeps holding what the visitor does.
  const hydrate = () => {
    // From here React handles the visitor's events itself (a click or key before the commit
    // hydrates what it lands on first).
    const replay = takeHeld(win)
    // The store as the server rendered it: the host's calls may change it before React
    // hydrates the landing.
    serveCurrentState()
    return hydrateRoot(
      root,
      <Hydrated done={replay}>
        <App />
      </Hydrated>,
      {
        // React renders what did not match afresh: the landing shows either way.
        onRecoverableError: (e) => console.warn('Latch: the landing rendered client-side', e),
      },
    )
  }
  // A table that did not load leaves English: React then renders the root afresh.
  return applyLocale({ locale: win.document.documentElement.lang }).then(hydrate, hydrate)
}
