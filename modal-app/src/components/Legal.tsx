import { useApp } from '../hooks.ts'
import { t } from '../i18n/i18n.ts'
import { httpHref } from './links.ts'

/** The terms and privacy links of the app, when it has any. */
export function Legal() {
  const { legal } = useApp()
  const termsUrl = httpHref(legal.termsUrl)
  const privacyUrl = httpHref(legal.privacyUrl)
  if (!termsUrl && !privacyUrl) return null
  return (
    <p className="latch-legal" data-testid="legal">
      {t('legal')}{' '}
      {termsUrl ? (
        <a href={termsUrl} target="_blank" rel="noopener noreferrer" data-testid="terms-link">
          {t('terms')}
        </a>
      ) : null}
      {termsUrl && privacyUrl ? ` ${t('and')} ` : null}
      {privacyUrl ? (
        <a href={privacyUrl} target="_blank" rel="noopener noreferrer" data-testid="privacy-link">
          {t('privacy')}
        </a>
      ) : null}
    </p>
  )
}
