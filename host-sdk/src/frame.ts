/** The modal's iframe on the host page: mounted once, hidden until needed, shown as a dialog or inline. */
import { FRAME_CSS, HOST_ELEMENT_IDS, LatchError, MODAL_FULL_HEIGHT_PX } from '@latch/shared'

export const FRAME_SANDBOX =
  'allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox allow-storage-access-by-user-activation'
/** The frame's name until the modal names it in the visitor's language: a brand, in no language. */
export const FRAME_TITLE = 'Latch'
export const FRAME_HEIGHT_MAX_PX = 4000

const STYLE_ID = 'latch-style'
// The dialog's layout (FRAME_CSS) is shared's: `latch csp` prints its hash for the page's CSP.

export interface Frame {
  iframe: HTMLIFrameElement
  /** The <dialog>, absent when rendered inline. */
  dialog: HTMLDialogElement | undefined
  isOpen(): boolean
  /** `label`: the modal's name in the visitor's language, for the dialog and the frame. */
  setOpen(open: boolean, label?: string): void
  resize(height: number): void
  remove(): void
}

/**
 * Mounts the hidden frame. `onDismiss` runs when the visitor closes a dialog from the host side
 * (Escape on the host page, a click on the backdrop).
 */
export function mountFrame(
  src: string,
  parentId: string | null | undefined,
  onDismiss: () => void,
): Frame {
  const doc = document
  const iframe = doc.createElement('iframe')
  iframe.src = src
  iframe.title = FRAME_TITLE
  iframe.className = 'latch-f'
  iframe.dataset.testid = HOST_ELEMENT_IDS.frame
  iframe.setAttribute('sandbox', FRAME_SANDBOX)
  // Passkeys: the modal's ceremonies (sign-in, link, registering a recovery passkey) and its
  // wallet frame's PRF requests; WebAuthn is delegated to the frame's own origin.
  iframe.setAttribute(
    'allow',
    'clipboard-write;publickey-credentials-get;publickey-credentials-create',
  )
  iframe.style.height = `${MODAL_FULL_HEIGHT_PX}px`

  if (!doc.getElementById(STYLE_ID)) {
    const style = doc.createElement('style')
    style.id = STYLE_ID
    style.textContent = FRAME_CSS
    doc.head.append(style)
  }
  let dialog: HTMLDialogElement | undefined
  let container: HTMLElement
  let open = false
  let opener: Element | null = null
  if (parentId) {
    const parent = doc.getElementById(parentId)
    if (!parent) {
      throw LatchError.of('modal_unreachable', {
        details: `render.inParentNodeId: no element with id "${parentId}"`,
      })
    }
    container = iframe
    parent.append(iframe)
  } else {
    const modal = doc.createElement('dialog')
    dialog = modal
    dialog.className = 'latch-d'
    dialog.dataset.testid = HOST_ELEMENT_IDS.dialog
    // Named by the modal as it opens it (setOpen's label): closed, it is hidden from everyone.
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault()
      onDismiss()
    })
    // Any other way the browser closes it (a close request it does not let us cancel) counts too.
    dialog.addEventListener('close', () => {
      if (open && !modal.open) onDismiss()
    })
    // The dialog is exactly the frame's size, so a click landing on the dialog itself is the backdrop.
    dialog.addEventListener('click', (e) => {
      if (e.target === dialog) onDismiss()
    })
    dialog.append(iframe)
    container = dialog
    doc.body.append(dialog)
  }

  const hide = (hidden: boolean) => {
    iframe.setAttribute('aria-hidden', String(hidden))
    iframe.tabIndex = hidden ? -1 : 0
    // tabindex=-1 keeps Tab off the frame but not off the fields inside it; inert takes the
    // closed (invisible, preloaded) modal's content out of the host page's Tab order too.
    iframe.toggleAttribute('inert', hidden)
    if (!dialog) iframe.style.display = hidden ? 'none' : 'block'
  }
  hide(true)

  return {
    iframe,
    dialog,
    isOpen: () => open,
    setOpen(next, label) {
      // Set as text (aria-label, title): whatever the modal sends is never markup.
      if (label) {
        iframe.title = label
        dialog?.setAttribute('aria-label', label)
      }
      if (next === open) return
      open = next
      hide(!open)
      if (open) {
        opener = doc.activeElement
        if (dialog && !dialog.open) dialog.showModal()
        iframe.focus()
      } else {
        if (dialog?.open) dialog.close()
        // focus() of an element no longer in the page does nothing.
        if (opener instanceof HTMLElement) opener.focus()
        opener = null
      }
    },
    resize(height) {
      // NaN, zero and below are refused; anything above, Infinity too, is capped.
      if (height > 0) {
        iframe.style.height = `${Math.min(Math.ceil(height), FRAME_HEIGHT_MAX_PX)}px`
      }
    },
    remove() {
      if (dialog?.open) dialog.close()
      container.remove()
    },
  }
}
