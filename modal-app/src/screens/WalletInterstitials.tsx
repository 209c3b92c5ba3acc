/**
 * The screens before a wallet that lives outside this page: Coinbase Wallet's popup
 * (COINBASE_INTERSTITIAL_SCREEN) and Phantom's app on a phone (PHANTOM_INTERSTITIAL_SCREEN).
 */
import { DEFAULT_CHAIN_ID, PHANTOM_STILL_HERE_DELAY_MS, toLatchError } from '@latch/shared'
import { useEffect, useLayoutEffect, useRef, useState } from 'react'
import { continueWaiting } from '../connectors/choose.ts'
import {
  initCoinbaseFrame,
  placeCoinbaseFrame,
  whenCoinbaseClicked,
} from '../connectors/coinbase.ts'
import { type ButtonLook, parseLook } from '../connectors/coinbase-protocol.ts'
import { phantomBrowseLink } from '../connectors/phantom.ts'
import { appStoreUrl, PHANTOM } from '../connectors/wallets.ts'
import { useApp } from '../hooks.ts'
import { shownError, t } from '../i18n/i18n.ts'
import { runtime } from '../runtime.ts'

/** The modal's primary button as the frame should draw its own (computed values). */
function lookOf(el: HTMLElement): ButtonLook {
  const style = (el.ownerDocument.defaultView ?? window).getComputedStyle(el)
  return {
    background: style.backgroundColor,
    color: style.color,
    borderRadius: style.borderRadius,
    fontFamily: style.fontFamily,
    fontSize: style.fontSize,
    fontWeight: style.fontWeight,
  }
}

/**
 * Coinbase Wallet's SDK runs in its connector frame (another origin), and browsers open its
 * popup only inside a click in that frame: this screen shows the frame's own Continue button
 * in its slot, and the frame tells the modal when it was clicked. Until the frame is ready the
 * slot holds a disabled button of the modal's.
 */
export function CoinbaseInterstitial() {
  const [frame, setFrame] = useState<HTMLIFrameElement | null>(null)
  const [error, setError] = useState<string | null>(null)
  const slot = useRef<HTMLButtonElement>(null)
  const { name } = useApp()
  useEffect(() => whenCoinbaseClicked(continueWaiting), [])
  useEffect(() => {
    let live = true
    const doc = document.documentElement
    const look = slot.current ? lookOf(slot.current) : null
    initCoinbaseFrame({
      appName: name,
      chainId: DEFAULT_CHAIN_ID,
      label: t('continue'),
      busyLabel: t('loadingDots'),
      lang: doc.lang || 'en',
      dir: doc.dir === 'rtl' ? 'rtl' : 'ltr',
      // A value the contract refuses (an unusual font name) leaves the frame's own look.
      look: look ? parseLook(look) : null,
    }).then(
      (f) => live && setFrame(f.element ?? null),
      (e: unknown) => live && setError(toLatchError(e).message),
    )
    return () => {
      live = false
    }
  }, [name])
  useLayoutEffect(() => {
    if (!frame || !slot.current) return
    return placeCoinbaseFrame(frame, slot.current, t('cbTitle'))
  }, [frame])
  return (
    <div className="latch-screen latch-center" data-testid="screen-COINBASE_INTERSTITIAL_SCREEN">
      <h1 className="latch-title">{t('cbTitle')}</h1>
      <p className="latch-description">{t('cbBody')}</p>
      {error ? (
        <p className="latch-error" role="alert" data-testid="coinbase-error">
          {shownError(error)}
        </p>
      ) : null}
      {/* The frame's Continue is drawn over this place; the modal's own stays disabled. */}
      <button
        ref={slot}
        type="button"
        className="latch-button latch-button-primary"
        data-testid="coinbase-slot"
        disabled
        aria-hidden={frame ? true : undefined}
        tabIndex={frame ? -1 : undefined}
        style={frame ? { visibility: 'hidden' } : undefined}
      >
        {t(error ? 'continue' : 'loadingDots')}
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
