import { httpHref } from '../components/links.ts'
import { navigate } from '../flow/flow.ts'
import { useApp } from '../hooks.ts'
import { t } from '../i18n/i18n.ts'

/** The allowlist rejected the visitor: the app's texts and link, or the defaults (translated). */
export function AllowlistRejection() {
  const { allowlist } = useApp()
  const ctaLink = httpHref(allowlist.ctaLink)
  return (
    <div className="latch-screen latch-center" data-testid="screen-ALLOWLIST_REJECTION_SCREEN">
      <h1 className="latch-title" data-testid="allowlist-title">
        {allowlist.title ?? t('allowTitle')}
      </h1>
      <p className="latch-description" data-testid="allowlist-detail">
        {allowlist.detail ?? t('allowDetail')}
      </p>
      {ctaLink ? (
        <a
          className="latch-button latch-button-primary"
          href={ctaLink}
          target="_blank"
          rel="noopener noreferrer"
          data-testid="allowlist-cta"
          data-autofocus
        >
          {allowlist.ctaText ?? t('allowCta')}
        </a>
      ) : (
        <button
          type="button"
          className="latch-button latch-button-primary"
          data-testid="allowlist-cta"
          data-autofocus
          onClick={() => navigate('LANDING')}
        >
          {allowlist.ctaText ?? t('allowCta')}
        </button>
      )}
    </div>
  )
}
