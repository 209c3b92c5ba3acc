/**
 * A button the visitor's click may act on only once it has been visible, unobscured where the
 * browser can tell (IntersectionObserver v2's `isVisible`), for ARM_MS without a change: a
 * button just shown or uncovered, faded, or under something that hides it, does not take the
 * click. The approvals (approval.ts), the batch review (batch/review.ts) and the export page's
 * Reveal and Copy (export.ts) arm this way.
 *
 * What it does not see: only the button is observed, and a visibility report comes on a change
 * of visibility, not of place. A host page that crops its frame down to a visible button, or
 * slides an armed frame under a still pointer, still gets the click (wallet-frame/README.md).
 */

/** How long the button must have been visible and unchanged before a click counts. */
export const ARM_MS = 500

/** Chromium's IntersectionObserver v2 fields (absent elsewhere: visibility is then intersection). */
interface VisibilityEntry extends IntersectionObserverEntry {
  isVisible?: boolean
}

export interface Arming {
  /** Whether a click now counts. */
  armed(): boolean
  /** Disarms for good (the screen is going away). */
  stop(): void
}

export function armWhenVisible(doc: Document, button: HTMLElement): Arming {
  let armed = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const disarm = () => {
    armed = false
    clearTimeout(timer)
    button.setAttribute('aria-disabled', 'true')
  }
  disarm()
  const observer = new IntersectionObserver(
    (entries) => {
      const entry = entries[entries.length - 1] as VisibilityEntry | undefined
      if (!entry) return
      const visible =
        entry.isIntersecting && entry.intersectionRatio >= 0.99 && entry.isVisible !== false
      disarm()
      if (visible) {
        timer = setTimeout(() => {
          armed = true
          button.removeAttribute('aria-disabled')
        }, ARM_MS)
      }
    },
    // trackVisibility asks Chromium whether anything covers, fades or transforms the button.
    { threshold: [0, 0.99, 1], trackVisibility: true, delay: 100 } as IntersectionObserverInit,
  )
  observer.observe(button)
  const onHidden = () => {
    if (doc.visibilityState !== 'visible') disarm()
  }
  doc.addEventListener('visibilitychange', onHidden)
  return {
    armed: () => armed,
    stop() {
      observer.disconnect()
      disarm()
      doc.removeEventListener('visibilitychange', onHidden)
    },
  }
}

/**
 * Runs `act` on the visitor's click of `button`, and only then: a trusted event (a script's
 * click() or dispatchEvent is not, and no other origin reaches this document), on an armed
 * button (an unarmed one, just shown, moved or covered, ignores even the visitor), and not while
 * the previous act still runs (`aria-busy` meanwhile). `act` handles its own failures.
 */
export function onTrustedClick(
  button: HTMLElement,
  arming: Arming,
  act: () => Promise<void>,
): void {
  let busy = false
  const done = () => {
    busy = false
    button.removeAttribute('aria-busy')
  }
  button.addEventListener('click', (event) => {
    if (!event.isTrusted || !arming.armed() || busy) return
    busy = true
    button.setAttribute('aria-busy', 'true')
    act().then(done, done)
  })
}
