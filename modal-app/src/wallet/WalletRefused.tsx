/**
 * The wallet API refused this browser's wallet credential (flow.refuse): the cookie a sign-in
 * set is missing, most often because the browser refuses cookies in a frame of another site.
 * Nothing in the flow can bring it back, so the host's call has already been rejected with
 * wallet_sign_in_required; this view tells the visitor what they can do, and closes.
 */
import { exitFlow } from '../flow/flow.ts'
import { t } from '../i18n/i18n.ts'

export function WalletRefused() {
  return (
    <div className="latch-screen latch-center" data-testid="screen-wallet-refused">
      <h1 className="latch-title">{t('refusedTitle')}</h1>
      <p className="latch-description">{t('refusedBody')}</p>
      <p className="latch-description">{t('refusedHelp')}</p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="wallet-refused-close"
        data-autofocus
        onClick={() => exitFlow(true)}
      >
        {t('close')}
      </button>
    </div>
  )
}
