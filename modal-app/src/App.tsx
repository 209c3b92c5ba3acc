import {
  type KeyboardEvent,
  type RefObject,
  Suspense,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
} from 'react'
import { dialogLabel, exitFlow, navigate } from './flow.ts'
import { announceTitle, focusFirst } from './focus.ts'
import { useModal } from './hooks.ts'
import { t } from './i18n.ts'
import { callHost } from './runtime.ts'
import { ErrorView } from './screens/ErrorView.tsx'
import { LoadingView } from './screens/LoadingView.tsx'
import { lazyScreen, preloadScreens } from './screens/lazy.tsx'
import { backTarget, SCREENS, screenSize } from './screens/registry.ts'
import { store } from './store.ts'
import { themeTokens } from './theme.ts'

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select, textarea, iframe.latch-tab-stop:not([tabindex="-1"]), [tabindex]:not([tabindex="-1"])'

/** A new sign-in method waiting for the wallet frame's approval, in place of the screen. */
const LinkApprovalView = lazyScreen(() =>
  import('./wallet/link-approval.tsx').then((m) => m.LinkApprovalView),
)

/** The wallet refused this browser's credential: what to do, in place of the screen. */
const WalletRefusedView = lazyScreen(() =>
  import('./wallet/WalletRefused.tsx').then((m) => m.WalletRefused),
)

/** The visitor's first touch of the open modal: time to fetch the screens loaded apart. */
const INTERACTIONS = ['pointerdown', 'keydown', 'input'] as const

/**
 * Focuses the screen when it mounts, and again when Suspense reveals it after a lazy screen
 * loaded (layout effects run again on reveal; the screen-change effect ran on the fallback).
 */
function FocusOnReveal({ root }: { root: RefObject<HTMLDivElement | null> }) {
  useLayoutEffect(() => {
    focusFirst(root.current)
    announceTitle(root.current)
  }, [root])
  return null
}

/** The modal shell: the dialog frame, header, current screen, theme tokens and size. */
export function App() {
  const state = useModal((s) => s)
  const { status, app, screen, open } = state
  const rootRef = useRef<HTMLDivElement>(null)
  const size = status === 'ready' ? screenSize(state) : 'compact'
  const tokens = useMemo(
    () => (app ? themeTokens(app.theme, app.accentColor, app.palette) : themeTokens('light', '')),
    [app],
  )

  // Theme tokens on the document root, so the page behind the modal matches it. A layout
  // effect: set before the first layout, not after the first paint, where they made the browser
  // style and lay the landing out a second time before the host could show it.
  useLayoutEffect(() => {
    const style = document.documentElement.style
    for (const [name, value] of Object.entries(tokens)) style.setProperty(name, value)
  }, [tokens])

  // The host sizes the frame to the content. Measured at once on the first render too: it
  // comes right before the flow of the host's first call opens the frame, which should open at
  // the landing's height, not at the frame's default one.
  useLayoutEffect(() => {
    const el = rootRef.current
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
  }, [])

  // Focus the first field on each screen, and again when the frame receives focus. A layout
  // effect: the field has focus in the frame that shows it (passive effects may run only after
  // the next paint). Screen and status are dependencies so that it runs on every change.
  // biome-ignore lint/correctness/useExhaustiveDependencies: screen and status are what triggers it (a new screen, a new status), not values it reads
  useLayoutEffect(() => {
    focusFirst(rootRef.current)
    const region = rootRef.current?.querySelector('[data-latch-announcer]')
    // Emptied while closed, so the first screen is announced again on the next open.
    if (!open && region) region.textContent = ''
    else announceTitle(rootRef.current)
  }, [screen, open, status, state.walletRefused])
  // The passive effects below listen on the document and window that hold the modal, read from
  // its element, not from the globals: the renderer may run them, and the cleanups of an unmounted
  // tree, after the next paint, from a timer; by then the element must still be there (a tree
  // unmounted first has nothing to listen for), and a cleanup removes its listener from the
  // window it was added to even where the global is gone (a test's environment after its end).
  useEffect(() => {
    const doc = rootRef.current?.ownerDocument
    const win = doc?.defaultView
    if (!doc || !win) return
    const onFocus = () => {
      if (doc.activeElement === doc.body) focusFirst(rootRef.current)
    }
    win.addEventListener('focus', onFocus)
    return () => win.removeEventListener('focus', onFocus)
  }, [])

  // The screens loaded apart from the landing, once the visitor starts using the open modal.
  useEffect(() => {
    const doc = rootRef.current?.ownerDocument
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
  }, [open])

  // Escape closes the modal when it is a dialog (the host relays nothing from inside).
  useEffect(() => {
    const doc = rootRef.current?.ownerDocument
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
  }, [])

  // Tab cycles inside the dialog only; rendered inline, the modal is part of the host page and
  // Tab must be able to leave it.
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== 'Tab' || !rootRef.current || store.getState().app?.inDialog === false) return
    const items = [...rootRef.current.querySelectorAll<HTMLElement>(FOCUSABLE)]
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

  const Screen = state.linkApproval
    ? LinkApprovalView
    : state.walletRefused
      ? WalletRefusedView
      : SCREENS[screen].component
  const back = status === 'ready' ? backTarget(screen) : null
  const label = dialogLabel()
  return (
    <div
      ref={rootRef}
      className="latch-modal"
      role="dialog"
      aria-modal={app?.inDialog !== false}
      aria-label={label}
      data-size={size}
      data-testid="latch-modal"
      onKeyDown={onKeyDown}
    >
      <header className="latch-header">
        {back ? (
          <button
            type="button"
            className="latch-icon-button"
            aria-label={t('back')}
            data-testid="back-button"
            onClick={() => navigate(back)}
          >
            <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
              <path d="M15 18l-6-6 6-6" fill="none" stroke="currentColor" strokeWidth="2" />
            </svg>
          </button>
        ) : (
          <span />
        )}
        <button
          type="button"
          className="latch-icon-button"
          aria-label={t('close')}
          data-testid="close-button"
          disabled={state.closeBlocked}
          onClick={() => exitFlow(true)}
        >
          <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
            <path d="M6 6l12 12M18 6L6 18" fill="none" stroke="currentColor" strokeWidth="2" />
          </svg>
        </button>
      </header>
      <p className="latch-visually-hidden" aria-live="polite" data-latch-announcer />
      <div className="latch-body">
        {status === 'loading' ? (
          <LoadingView />
        ) : status === 'error' ? (
          <ErrorView />
        ) : (
          <Suspense fallback={<LoadingView />}>
            <Screen />
            <FocusOnReveal root={rootRef} />
          </Suspense>
        )}
      </div>
      <footer className="latch-footer">
        <span className="latch-muted latch-small">{t('protectedBy')}</span>
      </footer>
    </div>
  )
}
