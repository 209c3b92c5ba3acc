import { COPIED_LABEL_MS, OAUTH_PROVIDER_NAMES, type OAuthProvider } from '@latch/shared'
import { mobilePlatform } from '@latch/shared/in-app-browser'
import { useEffect, useId, useRef, useState } from 'react'
import { useApp, useModal } from '../hooks.ts'
import { locale, t, tf } from '../i18n/i18n.ts'
import { redirectTarget } from '../oauth/oauth.ts'
import { REFUSE_IN_APP } from '../oauth/platform.ts'
import { runtime } from '../runtime.ts'
import { isVerifiedHostPage, verifiedHostOrigin } from '../startup/origin.ts'

/** 'Google or Apple', in the visitor's language. */
const providerList = (providers: OAuthProvider[]): string =>
  new Intl.ListFormat(locale(), { type: 'disjunction' }).format(
    providers.map((p) => OAUTH_PROVIDER_NAMES[p]),
  )

/**
 * Android's link that opens `page` in the default browser, out of the app's web view. Its
 * fragment is where the intent's parameters go, so the page's own fragment is left out.
 */
export function browserIntent(page: string): string {
  const url = new URL(page)
  return `intent://${url.host}${url.pathname}${url.search}#Intent;scheme=${url.protocol.slice(0, -1)};end`
}

/**
 * The host page's address as the host SDK answers it (`pageUrl()`, latch_ return parameters
 * removed), shown only when it is a page of the host origin startup verified; else that origin.
 */
async function hostPage(): Promise<string | null> {
  const host = runtime().host
  const page = host ? redirectTarget(await host.pageUrl()) : null
  return isVerifiedHostPage(page) ? page : verifiedHostOrigin()
}

/**
 * In an in-app browser, in place of the providers that refuse it (SocialButtons): the page's
 * link to copy into the visitor's browser, and on Android a link that opens it there. A chunk of
 * its own: only in-app browsers load it.
 */
export function OpenInBrowser() {
  const providers = useApp().methods.social.filter((p) => REFUSE_IN_APP.includes(p))
  const android = mobilePlatform(navigator.userAgent) === 'android'
  const open = useModal((s) => s.open)
  const [page, setPage] = useState(verifiedHostOrigin)
  const [status, setStatus] = useState('')
  const input = useRef<HTMLInputElement>(null)
  const id = useId()
  // Asked each time the modal opens: the page may have changed its address since.
  useEffect(() => {
    if (!open) return
    let live = true
    hostPage().then(
      (p) => live && p && setPage(p),
      () => {},
    )
    return () => {
      live = false
    }
  }, [open])
  // 'Link copied' goes after a moment; the failure stays, with its advice, until the next try.
  useEffect(() => {
    if (status !== t('oCopied')) return
    const timer = setTimeout(() => setStatus(''), COPIED_LABEL_MS)
    return () => clearTimeout(timer)
  }, [status])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(page ?? '')
      setStatus(t('oCopied'))
    } catch {
      // A browser that refuses the frame the clipboard: the link is selected to copy by hand.
      input.current?.select()
      setStatus(t('oCopyFailed'))
    }
  }
  return (
    <section className="latch-open-browser" aria-labelledby={id} data-testid="open-in-browser">
      <h3 id={id} className="latch-small">
        {t('oTitle')}
      </h3>
      <p className="latch-small latch-muted">
        {tf('oText', { providers: providerList(providers) })}
      </p>
      {page ? (
        <>
          <div className="latch-input-row">
            <input
              ref={input}
              className="latch-input"
              readOnly
              value={page}
              aria-label={t('oLabel')}
              data-testid="open-in-browser-link"
              onFocus={(e) => e.currentTarget.select()}
            />
            <button
              type="button"
              className="latch-link-button"
              data-testid="open-in-browser-copy"
              onClick={() => void copy()}
            >
              {t('oCopy')}
            </button>
          </div>
          {android ? (
            <a
              className="latch-small"
              href={browserIntent(page)}
              target="_blank"
              rel="noopener"
              data-testid="open-in-browser-intent"
            >
              {t('oOpen')}
            </a>
          ) : null}
        </>
      ) : null}
      <p className="latch-small" role="status" data-testid="open-in-browser-status">
        {status}
      </p>
    </section>
  )
}
