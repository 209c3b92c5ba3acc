/**
 * Where the focus and the screen reader's attention go when a screen shows: App.tsx calls these
 * on every screen change, and a screen whose title changes in place (EmbeddedWallet.tsx) calls
 * announceTitle itself.
 */
import { store } from '../store.ts'

/**
 * Focuses the first field of the screen, else its first control; never while the modal is
 * closed (the preloaded, invisible frame would take the host page's focus and its Tab), and
 * only while this frame holds the focus: the host focuses the frame when it shows it, and the
 * frame's focus event (App.tsx) then focuses the screen. Focusing earlier pulled the page's focus
 * into a frame the host had not shown yet, and the host then took the frame, not the button
 * the visitor pressed, for the element to give the focus back to when the modal closes.
 */
export function focusFirst(root: HTMLElement | null): void {
  if (!root || !store.getState().open || !root.ownerDocument.hasFocus()) return
  const target =
    root.querySelector<HTMLElement>('[data-autofocus]') ??
    root.querySelector<HTMLElement>('.latch-body input, .latch-body button, .latch-body a[href]')
  target?.focus()
}

/**
 * Puts the screen's title into the dialog's live region, so a screen reader hears where the
 * visitor is when the screen changes (focus goes to the first field, not the heading).
 */
export function announceTitle(root: HTMLElement | null): void {
  const region = root?.querySelector<HTMLElement>('[data-latch-announcer]')
  const title = root?.querySelector('.latch-body h1')?.textContent?.trim()
  if (region && title && region.textContent !== title) region.textContent = title
}
