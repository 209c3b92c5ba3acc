/**
 * The probe setup file of scripts/teardown-race.ts (copied beside the copies it watches).
 * Its after-all hook runs after every other one of the file, right before Vitest tears jsdom
 * down, and prints what is still there: the modal in the document, and whether its first
 * passive effects (App.tsx's window focus listener) have still to run.
 */
import { afterAll } from 'vitest'

let focusListeners = 0
const add = window.addEventListener.bind(window)
const remove = window.removeEventListener.bind(window)
window.addEventListener = ((...args: Parameters<typeof add>) => {
  if (args[0] === 'focus') focusListeners++
  add(...args)
}) as typeof add
window.removeEventListener = ((...args: Parameters<typeof remove>) => {
  if (args[0] === 'focus') focusListeners--
  remove(...args)
}) as typeof remove

afterAll(() => {
  const mounted = document.querySelector('[data-testid="latch-modal"]') !== null
  if (mounted) {
    console.log(`TEARDOWN-PROBE mounted${focusListeners === 0 ? ' effects-pending' : ''}`)
  }
})
