import { OAUTH_PROVIDER_NAMES, type OAuthProvider } from '@latch/shared'
import { Suspense } from 'react'
import { useModal } from '../hooks.ts'
import { startOAuth } from '../oauth.ts'
import { inAppBrowserHere, REFUSE_IN_APP } from '../platform.ts'
import { lazyScreen } from '../screens/lazy.tsx'

// Only in-app browsers show it, so it stays out of the landing's chunk (its 90 KB budget).
const OpenInBrowser = lazyScreen(() => import('./OpenInBrowser.tsx').then((m) => m.OpenInBrowser))

/**
 * The social sign-in buttons after the 'Or' divider, one per enabled provider. A click leaves
 * for the provider. In an in-app browser (platform.ts) Twitter's button is hidden, and Google
 * and Apple give way to the "Open in your browser" step.
 */
export function SocialButtons({ providers }: { providers: OAuthProvider[] }) {
  const oauth = useModal((s) => s.oauth)
  const busy = oauth?.status === 'redirecting'
  const inApp = inAppBrowserHere()
  const shown = inApp
    ? providers.filter((p) => p !== 'twitter' && !REFUSE_IN_APP.includes(p))
    : providers
  return (
    <>
      {shown.length > 0 ? (
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
      ) : null}
      {inApp && providers.some((p) => REFUSE_IN_APP.includes(p)) ? (
        <Suspense fallback={null}>
          <OpenInBrowser />
        </Suspense>
      ) : null}
    </>
  )
}
