import { useApp } from '../hooks.ts'
import { httpHref } from '../links.ts'

/** The terms and privacy links of the app, when it has any. */
export function Legal() {
  const { legal } = useApp()
  const termsUrl = httpHref(legal.termsUrl)
  const privacyUrl = httpHref(legal.privacyUrl)
  if (!termsUrl && !privacyUrl) return null
  return (
    <p className="latch-legal" data-testid="legal">
      By logging in I agree to the{' '}
      {termsUrl ? (
        <a href={termsUrl} target="_blank" rel="noopener noreferrer" data-testid="terms-link">
          Terms
        </a>
      ) : null}
      {termsUrl && privacyUrl ? ' & ' : null}
      {privacyUrl ? (
        <a href={privacyUrl} target="_blank" rel="noopener noreferrer" data-testid="privacy-link">
          Privacy Policy
        </a>
      ) : null}
    </p>
  )
}
