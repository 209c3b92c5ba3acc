import { OAUTH_PROVIDER_NAMES, type OAuthProvider } from '@latch/shared'
import { useModal } from '../hooks.ts'
import { startOAuth } from '../oauth.ts'
import { showTwitterButton } from '../platform.ts'

/**
 * The social sign-in buttons after the 'Or' divider, one per enabled provider (the Twitter
 * button hidden on the platform flag of platform.ts). A click leaves for the provider.
 */
export function SocialButtons({ providers }: { providers: OAuthProvider[] }) {
  const oauth = useModal((s) => s.oauth)
  const busy = oauth?.status === 'redirecting'
  const shown = providers.filter((p) => p !== 'twitter' || showTwitterButton())
  if (shown.length === 0) return null
  return (
    <div className="latch-social" data-testid="social-buttons">
      {shown.map((provider) => (
        <button
          key={provider}
          type="button"
          className="latch-button latch-social-button"
          data-testid={`social-${provider}`}
          disabled={busy}
          aria-busy={busy && oauth?.provider === provider}
          onClick={() => void startOAuth(provider)}
        >
          {OAUTH_PROVIDER_NAMES[provider]}
        </button>
      ))}
    </div>
  )
}
