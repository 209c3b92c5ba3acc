import { ERRORS, fillTemplate, OAUTH_ERROR_DISPLAY, OAUTH_PROVIDER_NAMES } from '@latch/shared'
import type { MessageKey } from '@latch/shared/i18n'
import type { ReactNode } from 'react'
import { useModal } from '../hooks.ts'
import { shownError, t, tf } from '../i18n/i18n.ts'
import { retryOAuth } from '../oauth/oauth.ts'

/** The OAuth error table's texts by the table's keys (their English is the same text). */
const OAUTH_KEYS = {
  linked_to_another_user: 'oaLinked',
  oauth_invalid_code: 'oaInvalid',
  oauth_user_denied: 'oaDenied',
} as const satisfies Record<keyof typeof OAUTH_ERROR_DISPLAY, MessageKey>

/** The failure's detail in the visitor's language (it is held as the English text, filled). */
function oauthDetail(error: string, providerName: string): string {
  for (const [code, key] of Object.entries(OAUTH_KEYS)) {
    const display = OAUTH_ERROR_DISPLAY[code as keyof typeof OAUTH_KEYS]
    if (fillTemplate(display.message, { providerName }) === error) {
      return tf(key, { providerName })
    }
  }
  return shownError(error)
}

/**
 * AWAITING_OAUTH_SCREEN (docs/behaviour.md, "AWAITING_OAUTH_SCREEN"): leaving for the provider or
 * completing its return, then success, or 'Authentication failed.' with the OAuth table's text and
 * Retry when retryable.
 */
export function AwaitingOAuth() {
  const oauth = useModal((s) => s.oauth)
  if (!oauth) return null
  const name = OAUTH_PROVIDER_NAMES[oauth.provider]
  const screen = (title: string, description: string | null, extra?: ReactNode) => (
    <div
      className="latch-screen latch-center"
      data-testid="screen-AWAITING_OAUTH_SCREEN"
      data-status={oauth.status}
    >
      {oauth.status === 'redirecting' || oauth.status === 'verifying' ? (
        <div className="latch-spinner" role="progressbar" aria-label={title} />
      ) : null}
      {/* The title changes in place (verifying, then success or failure): a live region. */}
      <h1 className="latch-title" data-testid="oauth-title" aria-live="polite">
        {title}
      </h1>
      {description ? (
        <p
          className="latch-description"
          data-testid="oauth-description"
          role={oauth.status === 'error' ? 'alert' : undefined}
        >
          {description}
        </p>
      ) : null}
      {extra}
    </div>
  )
  switch (oauth.status) {
    case 'redirecting':
    case 'verifying':
      return screen(tf('oauthVerifying', { provider: name }), t('oauthWait'))
    case 'success':
      return screen(tf('oauthDone', { provider: name }), t('oauthGood'))
    case 'error':
      return screen(
        shownError(ERRORS.oauth_failed.message),
        oauth.error && oauthDetail(oauth.error, name),
        oauth.retryable ? (
          <button
            type="button"
            className="latch-button latch-button-primary"
            data-testid="oauth-retry"
            data-autofocus
            onClick={retryOAuth}
          >
            {t('retry')}
          </button>
        ) : null,
      )
  }
}
