/**
 * What the visitor did before the JavaScript ran (held by before-hydration.ts), carried out
 * once the landing is on screen, hydrated or rendered afresh: loaded only when there is
 * something to carry out.
 */
import { store } from '../store.ts'
import type { BeforeHydration, HeldAction } from './before-hydration.ts'

/** How long held actions wait for the host's sign-in to be on screen before they are dropped. */
export const REPLAY_WAIT_MS = 15_000

/**
 * Carries out the held actions, each once, when the host's sign-in flow shows the landing
 * (before it, Submit has no flow to act for); dropped after REPLAY_WAIT_MS without one. Text
 * typed in a field the page rendered afresh (a hydration React could not complete, a page
 * that could not hydrate) is put back first, as typed: a hydrated field kept it, and what the
 * visitor typed there since is theirs. Enter or Submit then sends what the field holds.
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
    // After React rendered the flow's state: the form acts for the flow now on screen; after
    // it rendered the text put back: the form submits it.
    setTimeout(() => {
      const held = actions.splice(0)
      retype(win, held)
      setTimeout(() => carryOut(win, held))
    })
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

const byTestId = (win: Window, testId: string) =>
  win.document.querySelector(`[data-testid="${CSS.escape(testId)}"]`)

/**
 * Puts typed text into the fields rendered afresh, still empty, as the visitor's typing would
 * (the value's own setter, then an input event React's onChange hears).
 */
function retype(win: Window, actions: HeldAction[]): void {
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set
  for (const action of actions) {
    if (action.kind !== 'type') continue
    const el = byTestId(win, action.testId)
    if (!(el instanceof HTMLInputElement) || el === action.field || el.value) continue
    setValue?.call(el, action.value)
    el.dispatchEvent(new Event('input', { bubbles: true }))
  }
}

function carryOut(win: Window, actions: HeldAction[]): void {
  for (const { kind, testId } of actions) {
    const el = byTestId(win, testId)
    if (kind === 'submit' && el instanceof HTMLInputElement) el.form?.requestSubmit()
    else if (kind === 'click' && el instanceof HTMLButtonElement) el.click()
  }
}
