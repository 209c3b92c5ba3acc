import { exitFlow, navigate } from '../flow/flow.ts'
import { t } from '../i18n/i18n.ts'

/** LOGIN_FAILED_SCREEN: a wallet link that could not sign in (e.g. Phantom without multichain). */
export function LoginFailed() {
  return (
    <div className="latch-screen latch-center" data-testid="screen-LOGIN_FAILED_SCREEN">
      <h1 className="latch-title">{t('failedTitle')}</h1>
      <p className="latch-description">{t('failedBody')}</p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="login-failed-retry"
        data-autofocus
        onClick={() => navigate('LANDING')}
      >
        {t('tryAgain')}
      </button>
      <button
        type="button"
        className="latch-button"
        data-testid="login-failed-cancel"
        onClick={() => exitFlow(true)}
      >
        {t('cancel')}
      </button>
    </div>
  )
}
