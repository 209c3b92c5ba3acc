/**
 * A button the visitor's click may act on only once it has been visible, unobscured where the
 * browser can tell (IntersectionObserver v2's `isVisible`), for ARM_MS without a change: a
 * button just shown or uncovered, faded, or under something that hides it, does not take the
 * click. The approvals (approval.ts), the batch review (batch/review.ts) and the export page's
 * Reveal and Copy (export.ts) arm this way.
 *
 * What the button acts on is observed with it (`shown`: the prompt, the batch's calls and fee,
 * the key's label and warning), by the same rule: a host page that crops its frame down to a
 * visible button, hiding what it approves, gets no click. Each must fit the frame the modal gives
 * it, or the button never arms (a long list is observed by its scroll container's box).
 *
 * What it does not see: a visibility report comes on a change of visibility, not of place. A host
 * page that slides an armed frame, whole, under a still pointer still gets the click
 * (wallet-frame/README.md).
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

/**
 * Arms `button` once it and every element of `shown` have each been reported fully visible, for
 * ARM_MS since the last report; any element reported otherwise disarms it.
 */
export function armWhenVisible(doc: Document, button: HTMLElement, shown: HTMLElement[]): Arming {
  // The elements whose latest report said fully visible.
  const visible = new Set<Element>()
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
      // In time order: an element's latest report is the one that stays.
      for (const entry of entries as VisibilityEntry[]) {
        if (entry.isIntersecting && entry.intersectionRatio >= 0.99 && entry.isVisible !== false)
          visible.add(entry.target)
        else visible.delete(entry.target)
      }
      disarm()
      if (visible.size > shown.length) {
        timer = setTimeout(() => {
          armed = true
          button.removeAttribute('aria-disabled')
        }, ARM_MS)
      }
    },
    // trackVisibility asks Chromium whether anything covers, fades or transforms each element.
    { threshold: [0, 0.99], trackVisibility: true, delay: 100 } as IntersectionObserverInit,
  )
  for (const el of [button, ...shown]) observer.observe(el)
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
