/**
 * The screens before a wallet that lives outside this page: Coinbase Wallet's popup
 * (COINBASE_INTERSTITIAL_SCREEN) and Phantom's app on a phone (PHANTOM_INTERSTITIAL_SCREEN).
 */
import { PHANTOM_STILL_HERE_DELAY_MS, toLatchError } from '@latch/shared'
import { useEffect, useRef, useState } from 'react'
import { continueWaiting } from '../connectors/choose.ts'
import { coinbaseReady, loadCoinbase } from '../connectors/coinbase.ts'
import { phantomBrowseLink } from '../connectors/phantom.ts'
import { appStoreUrl, PHANTOM } from '../connectors/wallets.ts'
import { shownError, t } from '../i18n.ts'
import { runtime } from '../runtime.ts'

/**
 * Browsers open a popup only inside a click, and not after the wait for the SDK's chunk: this
 * screen waits for the chunk, and its Continue is the click the popup opens in.
 */
export function CoinbaseInterstitial() {
  const [ready, setReady] = useState(coinbaseReady)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    let live = true
    loadCoinbase().then(
      () => live && setReady(true),
      (e: unknown) => live && setError(toLatchError(e).message),
    )
    return () => {
      live = false
    }
  }, [])
  return (
    <div className="latch-screen latch-center" data-testid="screen-COINBASE_INTERSTITIAL_SCREEN">
      <h1 className="latch-title">{t('cbTitle')}</h1>
      <p className="latch-description">{t('cbBody')}</p>
      {error ? (
        <p className="latch-error" role="alert" data-testid="coinbase-error">
          {shownError(error)}
        </p>
      ) : null}
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="coinbase-continue"
        disabled={!ready}
        onClick={continueWaiting}
      >
        {t(ready || error ? 'continue' : 'loadingDots')}
      </button>
    </div>
  )
}

/**
 * A phone without Phantom's browser: Continue opens this page in Phantom's app (its universal
 * link); one second after, the screen asks 'Still here?' and offers the app store, for a phone
 * where Phantom is not installed and the link only opened its website.
 */
export function PhantomInterstitial() {
  const [link, setLink] = useState<string | null>(null)
  const [stillHere, setStillHere] = useState(false)
  // Started in the click itself, not in an effect after the render: one second after the click.
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null)
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current)
    },
    [],
  )
  useEffect(() => {
    let live = true
    const host = runtime().host
    void host
      ?.pageUrl()
      .then((url) => live && setLink(phantomBrowseLink(url)))
      .catch(() => {})
    return () => {
      live = false
    }
  }, [])
  if (stillHere) {
    return (
      <div className="latch-screen latch-center" data-testid="screen-PHANTOM_INTERSTITIAL_SCREEN">
        <h1 className="latch-title" aria-live="polite">
          {t('phStill')}
        </h1>
        <p className="latch-description">{t('phInstall')}</p>
        <a
          className="latch-button latch-button-primary"
          href={appStoreUrl(PHANTOM)}
          target="_blank"
          rel="noopener noreferrer"
          data-testid="phantom-app-store"
        >
          {t('phStore')}
        </a>
      </div>
    )
  }
  return (
    <div className="latch-screen latch-center" data-testid="screen-PHANTOM_INTERSTITIAL_SCREEN">
      <h1 className="latch-title" aria-live="polite">
        {t('phTitle')}
      </h1>
      <p className="latch-description">{t('phBody')}</p>
      {link ? (
        <a
          className="latch-button latch-button-primary"
          href={link}
          target="_blank"
          rel="noopener noreferrer"
          data-testid="phantom-continue"
          onClick={() => {
            if (timer.current) clearTimeout(timer.current)
            timer.current = setTimeout(() => setStillHere(true), PHANTOM_STILL_HERE_DELAY_MS)
          }}
        >
          {t('continue')}
        </a>
      ) : (
        <button type="button" className="latch-button latch-button-primary" disabled>
          {t('continue')}
        </button>
      )}
    </div>
  )
}
