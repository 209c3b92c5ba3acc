import { useApp } from '../hooks.ts'

/** The terms and privacy links of the app, when it has any. */
export function Legal() {
  const { legal } = useApp()
  if (!legal.termsUrl && !legal.privacyUrl) return null
  return (
    <p className="latch-legal" data-testid="legal">
      By logging in I agree to the{' '}
      {legal.termsUrl ? (
        <a href={legal.termsUrl} target="_blank" rel="noopener noreferrer" data-testid="terms-link">
          Terms
        </a>
      ) : null}
      {legal.termsUrl && legal.privacyUrl ? ' & ' : null}
      {legal.privacyUrl ? (
        <a
          href={legal.privacyUrl}
          target="_blank"
          rel="noopener noreferrer"
          data-testid="privacy-link"
        >
          Privacy Policy
        </a>
      ) : null}
    </p>
  )
}
