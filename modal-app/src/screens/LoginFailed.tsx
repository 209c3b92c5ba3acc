import { exitFlow, navigate } from '../flow.ts'

/** LOGIN_FAILED_SCREEN: a wallet link that could not sign in (e.g. Phantom without multichain). */
export function LoginFailed() {
  return (
    <div className="latch-screen latch-center" data-testid="screen-LOGIN_FAILED_SCREEN">
      <h1 className="latch-title">Could not connect with wallet</h1>
      <p className="latch-description">
        Please check that Phantom multichain is enabled and try again.
      </p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="login-failed-retry"
        data-autofocus
        onClick={() => navigate('LANDING')}
      >
        Try again
      </button>
      <button
        type="button"
        className="latch-button"
        data-testid="login-failed-cancel"
        onClick={() => exitFlow(true)}
      >
        Cancel
      </button>
    </div>
  )
}
