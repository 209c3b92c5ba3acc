import { t } from '../i18n/i18n.ts'

/** Shown while the modal is not ready (before init). */
export function LoadingView() {
  return (
    <div className="latch-screen latch-center" data-testid="screen-loading">
      <div className="latch-spinner" role="progressbar" aria-label={t('loading')} />
    </div>
  )
}
