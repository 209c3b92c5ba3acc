import { OAUTH_PROVIDER_NAMES, type OAuthProvider } from '@latch/shared'
import { Suspense, useEffect } from 'react'
import { useModal } from '../hooks.ts'
import { inAppBrowserHere, REFUSE_IN_APP } from '../oauth/platform.ts'
import { lazyScreen } from '../screens/lazy.tsx'
import { store } from '../store.ts'

// Only in-app browsers show it, so it stays out of the landing's chunk (its 90 KB budget).
const OpenInBrowser = lazyScreen(() => import('./OpenInBrowser.tsx').then((m) => m.OpenInBrowser))

/**
 * What a click runs (oauth.ts): a chunk of its own, out of the landing's, asked for as the
 * buttons show so it is there by the first click.
 */
const loadOAuth = () => import('../oauth/oauth.ts')

/**
 * Leaves for the provider (oauth.ts); a chunk that cannot load shows the OAuth screen's
 * failure, whose Retry loads it again.
 */
function startOAuth(provider: OAuthProvider): void {
  loadOAuth().then(
    (m) => m.startOAuth(provider),
    () =>
      store.setState({
        screen: 'AWAITING_OAUTH_SCREEN',
        oauth: { provider, status: 'error', error: null, retryable: true },
      }),
  )
}

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
  const clickable = shown.length > 0
  useEffect(() => {
    if (clickable) loadOAuth().catch(() => {})
  }, [clickable])
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
              onClick={() => startOAuth(provider)}
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
