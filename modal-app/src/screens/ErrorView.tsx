import { ERRORS } from '@latch/shared'
import { exitFlow } from '../flow/flow.ts'
import { shownError, t } from '../i18n/i18n.ts'

/**
 * The general error view: 'Something went wrong' with a Close button; `detail` (a message of
 * the catalogue) replaces 'try again later' where the failure says what to do.
 */
export function ErrorView({ detail }: { detail?: string | null | undefined } = {}) {
  return (
    <div className="latch-screen latch-center" data-testid="screen-error">
      <h1 className="latch-title">{shownError(ERRORS.something_went_wrong.message)}</h1>
      <p className="latch-description" data-testid="error-detail">
        {detail ? shownError(detail) : t('later')}
      </p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="error-close"
        data-autofocus
        onClick={() => exitFlow(true)}
      >
        {t('close')}
      </button>
    </div>
  )
}
