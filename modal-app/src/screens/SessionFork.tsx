import { forkApps, forkLink } from '@latch/shared/wallet-apps'
import { exitFlow } from '../flow.ts'
import { forkCarriesWallet, openForkLink } from '../fork.ts'
import { useModal } from '../hooks.ts'
import { shownError, t } from '../i18n.ts'

/**
 * SESSION_FORK_SCREEN (docs/behaviour.md, "SESSION_FORK_SCREEN"): the wallet apps whose in-app
 * browser link keeps the token out of every request (forkApps), this session continuing there. A
 * button is live once the API forked the session (the app must open in the click itself). For a
 * user with an in-app wallet the click also hands it over, and the screen says so before it.
 */
export function SessionFork() {
  const fork = useModal((s) => s.sessionFork)
  const page = fork?.page ?? null
  const withWallet = useModal((s) => forkCarriesWallet(s.user))
  return (
    <div className="latch-screen" data-testid="screen-SESSION_FORK_SCREEN">
      <h1 className="latch-title">{t('fTitle')}</h1>
      <p className="latch-description">{t('fBody')}</p>
      {withWallet ? (
        <p className="latch-description" data-testid="fork-wallet-note">
          {t('fWallet')}
        </p>
      ) : null}
      {fork?.error ? (
        <p className="latch-error" role="alert" data-testid="fork-error">
          {shownError(fork.error)}
        </p>
      ) : !page ? (
        <p className="latch-muted" role="status" data-testid="fork-preparing">
          {t('fPreparing')}
        </p>
      ) : null}
      <ul className="latch-wallet-list" data-testid="fork-wallet-list">
        {forkApps().map((app) => (
          <li key={app.id}>
            <button
              type="button"
              className="latch-button latch-wallet-button"
              data-testid={`fork-wallet-${app.id}`}
              disabled={!page}
              onClick={() => page && openForkLink(forkLink(app, page))}
            >
              <img src={app.icon} alt="" width={24} height={24} className="latch-wallet-icon" />
              {app.name}
            </button>
          </li>
        ))}
      </ul>
      {fork?.error ? (
        <button
          type="button"
          className="latch-button"
          data-testid="fork-close"
          onClick={() => exitFlow(true)}
        >
          {t('close')}
        </button>
      ) : null}
    </div>
  )
}
