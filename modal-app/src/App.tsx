import { type RefObject, Suspense, useLayoutEffect, useRef } from 'react'
import { dialogLabel, exitFlow, navigate } from './flow/flow.ts'
import { useModal } from './hooks.ts'
import { t } from './i18n/i18n.ts'
import { ErrorView } from './screens/ErrorView.tsx'
import { LoadingView } from './screens/LoadingView.tsx'
import { lazyScreen } from './screens/lazy.tsx'
import { backTarget, SCREENS, screenSize } from './screens/registry.ts'
import {
  useEscapeCloses,
  usePreloadOnFirstTouch,
  useReportedHeight,
  useScreenFocus,
  useThemeTokens,
  wrapTab,
} from './shell/effects.ts'
import { announceTitle, focusFirst } from './shell/focus.ts'

/** A new sign-in method waiting for the wallet frame's approval, in place of the screen. */
const LinkApprovalView = lazyScreen(() =>
  import('./wallet/link-approval.tsx').then((m) => m.LinkApprovalView),
)

/** The wallet refused this browser's credential: what to do, in place of the screen. */
const WalletRefusedView = lazyScreen(() =>
  import('./wallet/WalletRefused.tsx').then((m) => m.WalletRefused),
)

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

/**
 * The modal shell: the dialog frame, header, current screen, theme tokens and size. It reads
 * only the slices it renders; its effects are the hooks of shell/effects.ts.
 */
export function App() {
  const status = useModal((s) => s.status)
  const app = useModal((s) => s.app)
  const screen = useModal((s) => s.screen)
  const open = useModal((s) => s.open)
  const approving = useModal((s) => s.linkApproval !== null)
  const walletRefused = useModal((s) => s.walletRefused)
  const closeBlocked = useModal((s) => s.closeBlocked)
  const size = useModal((s) => (s.status === 'ready' ? screenSize(s) : 'compact'))
  const rootRef = useRef<HTMLDivElement>(null)
  useThemeTokens(app)
  useReportedHeight(rootRef)
  useScreenFocus(rootRef, screen, open, status, walletRefused)
  usePreloadOnFirstTouch(rootRef, open)
  useEscapeCloses(rootRef)

  const Screen = approving
    ? LinkApprovalView
    : walletRefused
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
      onKeyDown={(e) => wrapTab(e, rootRef.current)}
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
          disabled={closeBlocked}
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
