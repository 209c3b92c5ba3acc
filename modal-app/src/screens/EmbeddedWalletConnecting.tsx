/** EMBEDDED_WALLET_CONNECTING_SCREEN: the connecting gate at work (wallet/flows.ts). */
import { exitFlow } from '../flow/flow.ts'
import { useModal } from '../hooks.ts'
import { shownError, t } from '../i18n/i18n.ts'

export function EmbeddedWalletConnecting() {
  const wallet = useModal((s) => s.wallet)
  const failed = wallet?.status === 'error'
  return (
    <div
      className="latch-screen latch-center"
      data-testid="screen-EMBEDDED_WALLET_CONNECTING_SCREEN"
    >
      <h1 className="latch-title">{t('connecting')}</h1>
      <p aria-live="polite" className="latch-code-status">
        {failed ? (
          <span className="latch-error" role="alert" data-testid="connecting-error">
            {wallet?.error && shownError(wallet.error)}
          </span>
        ) : null}
      </p>
      {failed ? (
        <button
          type="button"
          className="latch-button latch-button-primary"
          data-testid="connecting-close"
          onClick={() => exitFlow(true)}
        >
          {t('close')}
        </button>
      ) : (
        <div className="latch-spinner" role="progressbar" aria-label={t('connecting')} />
      )}
    </div>
  )
}
