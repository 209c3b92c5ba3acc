import { LatchError } from '@latch/shared'
import { afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { FRAME_HEIGHT_MAX_PX, FRAME_SANDBOX, mountFrame } from './frame.ts'

const SRC = 'https://modal.example/#app=cl0000000000000000000000a'

beforeAll(() => {
  // jsdom has no modal dialogs; these follow the standard's effect on the open attribute.
  HTMLDialogElement.prototype.showModal = function (this: HTMLDialogElement) {
    this.setAttribute('open', '')
  }
  HTMLDialogElement.prototype.close = function (this: HTMLDialogElement) {
    this.removeAttribute('open')
  }
})

afterEach(() => {
  document.body.innerHTML = ''
})

describe('dialog rendering', () => {
  test('behavior: the frame is mounted hidden inside a closed dialog', () => {
    const frame = mountFrame(SRC, undefined, () => {})
    const iframe = document.querySelector<HTMLIFrameElement>('[data-testid="latch-frame"]')
    const dialog = document.querySelector<HTMLDialogElement>('[data-testid="latch-dialog"]')
    expect(iframe).toBe(frame.iframe)
    expect(dialog).toBe(frame.dialog)
    expect(iframe?.parentElement).toBe(dialog)
    expect(iframe?.getAttribute('src')).toBe(SRC)
    expect(iframe?.getAttribute('sandbox')).toBe(FRAME_SANDBOX)
    expect(iframe?.getAttribute('allow')).toBe(
      'clipboard-write;publickey-credentials-get;publickey-credentials-create',
    )
    expect(iframe?.title).toMatch(/Latch/)
    expect(iframe?.getAttribute('aria-hidden')).toBe('true')
    expect(iframe?.tabIndex).toBe(-1)
    expect(iframe?.hasAttribute('inert')).toBe(true)
    expect(dialog?.open).toBe(false)
    expect(frame.isOpen()).toBe(false)
    expect(document.getElementById('latch-style')?.textContent).toContain('::backdrop')
  })

  test('behavior: the modal names the dialog and the frame in the visitor’s language when it opens; a later open may rename them', () => {
    const frame = mountFrame(SRC, undefined, () => {})
    frame.setOpen(true, 'Bei Acme anmelden')
    expect(frame.dialog?.getAttribute('aria-label')).toBe('Bei Acme anmelden')
    expect(frame.iframe.title).toBe('Bei Acme anmelden')
    // Already open: the name still follows (another flow, the language applied meanwhile).
    frame.setOpen(true, 'Acme にログイン')
    expect(frame.dialog?.getAttribute('aria-label')).toBe('Acme にログイン')
    frame.setOpen(false)
    expect(frame.iframe.title).toBe('Acme にログイン')
  })

  test('behavior: opening shows the dialog and focuses the frame; closing returns focus', () => {
    const opener = document.createElement('button')
    document.body.append(opener)
    opener.focus()
    const frame = mountFrame(SRC, undefined, () => {})
    frame.setOpen(true)
    expect(frame.dialog?.open).toBe(true)
    expect(frame.iframe.getAttribute('aria-hidden')).toBe('false')
    expect(frame.iframe.tabIndex).toBe(0)
    expect(frame.iframe.hasAttribute('inert')).toBe(false)
    expect(document.activeElement).toBe(frame.iframe)
    frame.setOpen(false)
    expect(frame.dialog?.open).toBe(false)
    expect(frame.iframe.getAttribute('aria-hidden')).toBe('true')
    expect(frame.iframe.tabIndex).toBe(-1)
    expect(frame.iframe.hasAttribute('inert')).toBe(true)
    expect(document.activeElement).toBe(opener)
  })

  test('behavior: Escape (cancel) and a backdrop click dismiss; a click on the frame does not', () => {
    const onDismiss = vi.fn()
    const frame = mountFrame(SRC, undefined, onDismiss)
    frame.setOpen(true)
    const cancel = new Event('cancel', { cancelable: true })
    frame.dialog?.dispatchEvent(cancel)
    expect(cancel.defaultPrevented).toBe(true)
    expect(onDismiss).toHaveBeenCalledTimes(1)
    frame.iframe.dispatchEvent(new MouseEvent('click', { bubbles: true }))
    expect(onDismiss).toHaveBeenCalledTimes(1)
    frame.dialog?.dispatchEvent(new MouseEvent('click', { bubbles: true }))
    expect(onDismiss).toHaveBeenCalledTimes(2)
  })

  test('behavior: the browser closing the dialog by itself dismisses; closing it ourselves does not', () => {
    const onDismiss = vi.fn()
    const frame = mountFrame(SRC, undefined, onDismiss)
    frame.setOpen(true)
    frame.setOpen(false)
    frame.dialog?.dispatchEvent(new Event('close'))
    expect(onDismiss).not.toHaveBeenCalled()
    frame.setOpen(true)
    frame.dialog?.removeAttribute('open')
    frame.dialog?.dispatchEvent(new Event('close'))
    expect(onDismiss).toHaveBeenCalledTimes(1)
  })

  test('param: resize takes positive heights, capped', () => {
    const frame = mountFrame(SRC, undefined, () => {})
    frame.resize(480.2)
    expect(frame.iframe.style.height).toBe('481px')
    frame.resize(Number.NaN)
    frame.resize(-5)
    frame.resize(0)
    frame.resize(Number.NEGATIVE_INFINITY)
    expect(frame.iframe.style.height).toBe('481px')
    frame.resize(1e9)
    expect(frame.iframe.style.height).toBe(`${FRAME_HEIGHT_MAX_PX}px`)
    frame.resize(300)
    frame.resize(Number.POSITIVE_INFINITY)
    expect(frame.iframe.style.height).toBe(`${FRAME_HEIGHT_MAX_PX}px`)
  })

  test('behavior: remove takes the dialog off the page', () => {
    const frame = mountFrame(SRC, undefined, () => {})
    frame.setOpen(true)
    frame.remove()
    expect(document.querySelector('[data-testid="latch-dialog"]')).toBeNull()
    expect(document.querySelector('[data-testid="latch-frame"]')).toBeNull()
  })
})

describe('inline rendering', () => {
  test('behavior: the frame sits in the parent element, hidden until opened', () => {
    const parent = document.createElement('div')
    parent.id = 'login-box'
    document.body.append(parent)
    const frame = mountFrame(SRC, 'login-box', () => {})
    expect(frame.dialog).toBeUndefined()
    expect(frame.iframe.parentElement).toBe(parent)
    expect(document.querySelector('dialog')).toBeNull()
    expect(frame.iframe.style.display).toBe('none')
    expect(frame.iframe.getAttribute('aria-hidden')).toBe('true')
    frame.setOpen(true)
    expect(frame.iframe.style.display).toBe('block')
    expect(frame.iframe.getAttribute('aria-hidden')).toBe('false')
    frame.resize(300)
    expect(frame.iframe.style.height).toBe('300px')
    frame.remove()
    expect(parent.children).toHaveLength(0)
  })

  test('error: a missing parent element is a clear error', () => {
    let error: unknown
    try {
      mountFrame(SRC, 'nowhere', () => {})
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(LatchError)
    expect((error as LatchError).code).toBe('modal_unreachable')
    expect((error as LatchError).details).toContain('"nowhere"')
    expect(document.querySelector('iframe')).toBeNull()
  })
})
