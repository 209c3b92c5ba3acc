import { dappBrowserApps, dappBrowserLink } from '@latch/shared/wallet-apps'
import { exitFlow } from '../flow.ts'
import { openForkLink } from '../fork.ts'
import { useModal } from '../hooks.ts'

/**
 * SESSION_FORK_SCREEN (an addition to SPEC section 2): the wallet apps that can open the host
 * page in their in-app browser, this session continuing there. A button is live once the API
 * forked the session (the app must open in the click itself).
 */
export function SessionFork() {
  const fork = useModal((s) => s.sessionFork)
  const page = fork?.page ?? null
  return (
    <div className="latch-screen" data-testid="screen-SESSION_FORK_SCREEN">
      <h1 className="latch-title">Continue in a wallet app</h1>
      <p className="latch-description">
        Open this page in your wallet's browser, still signed in. The link works once, within 5
        minutes.
      </p>
      {fork?.error ? (
        <p className="latch-error" role="alert" data-testid="fork-error">
          {fork.error}
        </p>
      ) : !page ? (
        <p className="latch-muted" role="status" data-testid="fork-preparing">
          Preparing your link…
        </p>
      ) : null}
      <ul className="latch-wallet-list" data-testid="fork-wallet-list">
        {dappBrowserApps().map((app) => (
          <li key={app.id}>
            <button
              type="button"
              className="latch-button latch-wallet-button"
              data-testid={`fork-wallet-${app.id}`}
              disabled={!page}
              onClick={() => page && openForkLink(dappBrowserLink(app, page))}
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
          Close
        </button>
      ) : null}
    </div>
  )
}
