/**
 * The shell's effects (App.tsx): each a hook with one job over the modal's root element. The
 * passive ones listen on the document and window that hold the modal, read from its element,
 * not from the globals: the renderer may run them, and the cleanups of an unmounted tree, after
 * the next paint, from a timer; by then the element must still be there (a tree unmounted first
 * has nothing to listen for), and a cleanup removes its listener from the window it was added
 * to even where the global is gone (a test's environment after its end).
 */
import { type KeyboardEvent, type RefObject, useEffect, useLayoutEffect, useMemo } from 'react'
import { exitFlow } from '../flow/flow.ts'
import { callHost } from '../runtime.ts'
import { preloadScreens } from '../screens/lazy.tsx'
import type { AppView } from '../startup/config.ts'
import { store } from '../store.ts'
import { announceTitle, focusFirst } from './focus.ts'
import { themeTokens } from './theme.ts'

type Root = RefObject<HTMLDivElement | null>

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select, textarea, iframe.latch-tab-stop:not([tabindex="-1"]), [tabindex]:not([tabindex="-1"])'

/** The visitor's first touch of the open modal: time to fetch the screens loaded apart. */
const INTERACTIONS = ['pointerdown', 'keydown', 'input'] as const

/**
 * Theme tokens on the document root, so the page behind the modal matches it. A layout effect:
 * set before the first layout, not after the first paint, where they made the browser style and
 * lay the landing out a second time before the host could show it.
 */
export function useThemeTokens(app: AppView | null): void {
  const tokens = useMemo(
    () => (app ? themeTokens(app.theme, app.accentColor, app.palette) : themeTokens('light', '')),
    [app],
  )
  useLayoutEffect(() => {
    const style = document.documentElement.style
    for (const [name, value] of Object.entries(tokens)) style.setProperty(name, value)
  }, [tokens])
}

/**
 * The host sizes the frame to the content. Measured at once on the first render too: it comes
 * right before the flow of the host's first call opens the frame, which should open at the
 * landing's height, not at the frame's default one.
 */
export function useReportedHeight(root: Root): void {
  useLayoutEffect(() => {
    const el = root.current
    if (!el) return
    let last = 0
    const report = () => {
      const height = Math.ceil(el.getBoundingClientRect().height)
      if (height !== last && height > 0) {
        last = height
        callHost('resize', height)
      }
    }
    report()
    if (typeof ResizeObserver === 'undefined') return
    const observer = new ResizeObserver(report)
    observer.observe(el)
    return () => observer.disconnect()
  }, [root])
}

/**
 * Focuses the first field on each screen, and again when the frame receives focus. A layout
 * effect: the field has focus in the frame that shows it (passive effects may run only after
 * the next paint). Screen and status are dependencies so that it runs on every change.
 */
export function useScreenFocus(
  root: Root,
  screen: string,
  open: boolean,
  status: string,
  walletRefused: boolean,
): void {
  // biome-ignore lint/correctness/useExhaustiveDependencies: screen, status and the refused view are what triggers it (a new screen, a new status, the view shown in its place), not values it reads
  useLayoutEffect(() => {
    focusFirst(root.current)
    const region = root.current?.querySelector('[data-latch-announcer]')
    // Emptied while closed, so the first screen is announced again on the next open.
    if (!open && region) region.textContent = ''
    else announceTitle(root.current)
  }, [root, screen, open, status, walletRefused])
  useEffect(() => {
    const doc = root.current?.ownerDocument
    const win = doc?.defaultView
    if (!doc || !win) return
    const onFocus = () => {
      if (doc.activeElement === doc.body) focusFirst(root.current)
    }
    win.addEventListener('focus', onFocus)
    return () => win.removeEventListener('focus', onFocus)
  }, [root])
}

/** The screens loaded apart from the landing, once the visitor starts using the open modal. */
export function usePreloadOnFirstTouch(root: Root, open: boolean): void {
  useEffect(() => {
    const doc = root.current?.ownerDocument
    if (!open || !doc) return
    const stop = () => {
      for (const type of INTERACTIONS) doc.removeEventListener(type, preload, true)
    }
    const preload = () => {
      stop()
      void preloadScreens()
    }
    for (const type of INTERACTIONS) doc.addEventListener(type, preload, true)
    return stop
  }, [root, open])
}

/**
 * Escape closes the modal when it is a dialog (the host relays nothing from inside; the wallet
 * origin's frames relay theirs: wallet/frame.ts, relayEscape).
 */
export function useEscapeCloses(root: Root): void {
  useEffect(() => {
    const doc = root.current?.ownerDocument
    if (!doc) return
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key !== 'Escape') return
      const s = store.getState()
      if (s.open && s.app?.inDialog !== false) {
        e.preventDefault()
        exitFlow(true)
      }
    }
    doc.addEventListener('keydown', onKey)
    return () => doc.removeEventListener('keydown', onKey)
  }, [root])
}

/**
 * Tab cycles inside the dialog only; rendered inline, the modal is part of the host page and
 * Tab must be able to leave it.
 */
export function wrapTab(e: KeyboardEvent<HTMLDivElement>, root: HTMLDivElement | null): void {
  if (e.key !== 'Tab' || !root || store.getState().app?.inDialog === false) return
  const items = [...root.querySelectorAll<HTMLElement>(FOCUSABLE)]
  // The wallet frame, while it shows an approval over the screen, is in the tab order too.
  const approval = document.querySelector<HTMLElement>(
    'iframe[data-testid="latch-wallet-frame"]:not([aria-hidden])',
  )
  if (approval) items.push(approval)
  const first = items[0]
  const last = items[items.length - 1]
  if (!first || !last) return
  if (e.shiftKey && document.activeElement === first) {
    e.preventDefault()
    last.focus()
  } else if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault()
    first.focus()
  }
}
