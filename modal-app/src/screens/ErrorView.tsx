import { ERRORS } from '@latch/shared'
import { exitFlow } from '../flow.ts'

/** The general error view: 'Something went wrong' with a Close button. */
export function ErrorView() {
  const { message, details } = ERRORS.something_went_wrong
  return (
    <div className="latch-screen latch-center" data-testid="screen-error">
      <h1 className="latch-title">{message}</h1>
      <p className="latch-description">{details}</p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="error-close"
        data-autofocus
        onClick={() => exitFlow(true)}
      >
        Close
      </button>
    </div>
  )
}
