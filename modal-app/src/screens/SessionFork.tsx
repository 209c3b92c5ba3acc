import { forkApps, forkLink } from '@latch/shared/wallet-apps'
import { exitFlow, finishOnScreen } from '../flow/flow.ts'
import { forkPairs, openForkLink } from '../fork/fork.ts'
import { useModal } from '../hooks.ts'
import { shownError, t } from '../i18n/i18n.ts'
import { WalletApproval } from '../wallet/approval.tsx'

/**
 * SESSION_FORK_SCREEN (docs/behaviour.md, "SESSION_FORK_SCREEN"): the wallet apps whose in-app
 * browser link keeps the token out of every request (forkApps), this session continuing there. A
 * button is live once the API forked the session (the app must open in the click itself). For a
 * user with an automatic wallet, once the app opened, the wallet frame offers a pairing code on
 * the visitor's click in it: the session the link opened reaches the wallet only with that code.
 */
export function SessionFork() {
  const fork = useModal((s) => s.sessionFork)
  const page = fork?.page ?? null
  const pairs = useModal((s) => forkPairs(s.user))
  if (fork?.opened && pairs) return <PairFork />
  return (
    <div className="latch-screen" data-testid="screen-SESSION_FORK_SCREEN">
      <h1 className="latch-title">{t('fTitle')}</h1>
      <p className="latch-description">{t('fBody')}</p>
      {pairs ? (
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

/** After the link opened: the wallet frame's "Show a pairing code", and Done. */
function PairFork() {
  return (
    <div className="latch-screen" data-testid="screen-SESSION_FORK_SCREEN">
      <h1 className="latch-title">{t('fTitle')}</h1>
      <WalletApproval kind="fork-show-code" />
      <button
        type="button"
        className="latch-button"
        data-testid="fork-pair-done"
        onClick={finishOnScreen}
      >
        {t('exDone')}
      </button>
    </div>
  )
}
