/**
 * What keeps a review screen (a signature, a transaction) honest: the request is a frozen copy
 * taken when it is shown, and the confirm button arms only once that copy has been visible,
 * unchanged, for REVIEW_ARM_DELAY_MS. A click before does nothing, so neither a request swapped
 * in under the cursor nor a frame the host page made invisible or moved under a click
 * (clickjacking) can collect a signature the visitor did not read.
 */
import { type RefObject, useEffect, useState } from 'react'

/** How long a request must have been visible and unchanged before its confirm button arms. */
export const REVIEW_ARM_DELAY_MS = 500

/**
 * IntersectionObserver v2 asks the browser to report `isVisible` only when at least this long
 * passed since the last report (100 ms is its minimum).
 */
const VISIBILITY_REPORT_DELAY_MS = 100

/** A deep copy nothing can change: what the screen shows and the confirm click sends. */
export function snapshot<T>(value: T): T {
  return deepFreeze(structuredClone(value))
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

/** IntersectionObserver v2's option and answer (not in TypeScript's DOM types yet). */
interface VisibilityEntry extends IntersectionObserverEntry {
  isVisible?: boolean
}

/** Whether this browser reports true visibility (occlusion, opacity, transforms): Chromium. */
export function tracksVisibility(win: typeof globalThis = globalThis): boolean {
  return (
    typeof win.IntersectionObserver === 'function' &&
    typeof win.IntersectionObserverEntry === 'function' &&
    'isVisible' in win.IntersectionObserverEntry.prototype
  )
}

/**
 * Calls `onArmed(true)` once `target` has been visible for `delayMs` without a break, and
 * `onArmed(false)` whenever it stops being visible (the timer then starts over). Visible means
 * IntersectionObserver v2's `isVisible` where the browser has it (nothing covers the element,
 * no opacity, filter or skew on it or the frame), else the document shown and not left for
 * another window. Answers the stop function.
 */
export function watchVisible(
  target: Element,
  delayMs: number,
  onArmed: (armed: boolean) => void,
  win: typeof globalThis = globalThis,
): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined
  const seen = (visible: boolean) => {
    if (!visible) {
      clearTimeout(timer)
      timer = undefined
      onArmed(false)
    } else if (timer === undefined) {
      timer = setTimeout(() => onArmed(true), delayMs)
    }
  }
  if (tracksVisibility(win)) {
    const observer = new win.IntersectionObserver(
      (entries) => {
        const last = entries.at(-1) as VisibilityEntry | undefined
        if (last) seen(last.isVisible === true)
      },
      {
        threshold: [0, 1],
        trackVisibility: true,
        delay: VISIBILITY_REPORT_DELAY_MS,
      } as IntersectionObserverInit,
    )
    observer.observe(target)
    return () => {
      clearTimeout(timer)
      observer.disconnect()
    }
  }
  const doc = target.ownerDocument
  const check = () => seen(doc.visibilityState === 'visible')
  // Focus going to another window (the host page, a popup) starts the wait over.
  const blurred = () => {
    seen(false)
    check()
  }
  doc.addEventListener('visibilitychange', check)
  win.addEventListener('blur', blurred)
  check()
  return () => {
    clearTimeout(timer)
    doc.removeEventListener('visibilitychange', check)
    win.removeEventListener('blur', blurred)
  }
}

/**
 * Whether the confirm button for `shown` (the frozen request on screen) may act: true once it
 * has been visible and unchanged for REVIEW_ARM_DELAY_MS. Another request, or none, is unarmed
 * in the very render it appears.
 */
export function useArmed(shown: object | null, target: RefObject<Element | null>): boolean {
  const [armedFor, setArmedFor] = useState<object | null>(null)
  useEffect(() => {
    const element = target.current
    if (!shown || !element) return
    return watchVisible(element, REVIEW_ARM_DELAY_MS, (armed) => setArmedFor(armed ? shown : null))
  }, [shown, target])
  return shown !== null && armedFor === shown
}
