/**
 * What the visitor did before the JavaScript ran (held by before-hydration.ts), carried out
 * once the landing is hydrated: loaded only when there is something to carry out.
 */
import { store } from '../store.ts'
import type { BeforeHydration } from './before-hydration.ts'

/** How long held actions wait for the host's sign-in to be on screen before they are dropped. */
export const REPLAY_WAIT_MS = 15_000

/**
 * Carries out the held actions, each once, when the host's sign-in flow shows the landing
 * (before it, Submit has no flow to act for); dropped after REPLAY_WAIT_MS without one.
 */
export function replayWhenSignInShows(win: Window, actions: BeforeHydration['actions']): void {
  const ready = () => {
    const s = store.getState()
    return s.status === 'ready' && s.screen === 'LANDING' && s.flow?.kind === 'login'
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const replay = () => {
    unsubscribe()
    clearTimeout(timer)
    // After React rendered the flow's state: the form acts for the flow now on screen.
    setTimeout(() => carryOut(win, actions.splice(0)))
  }
  const unsubscribe = store.subscribe(() => {
    if (ready()) replay()
  })
  timer = setTimeout(() => {
    unsubscribe()
    actions.splice(0)
  }, REPLAY_WAIT_MS)
  if (ready()) replay()
}

function carryOut(win: Window, actions: BeforeHydration['actions']): void {
  for (const { kind, testId } of actions) {
    const el = win.document.querySelector(`[data-testid="${CSS.escape(testId)}"]`)
    if (kind === 'submit' && el instanceof HTMLInputElement) el.form?.requestSubmit()
    else if (kind === 'click' && el instanceof HTMLButtonElement) el.click()
  }
}
