/**
 * The wallet API refused this browser's wallet credential (flow.refuse): the cookie a sign-in
 * set is missing, most often because the browser refuses cookies in a frame of another site.
 * Nothing in the flow can bring it back, so the host's call has already been rejected with
 * wallet_sign_in_required; this view tells the visitor what they can do, and closes.
 *
 * A visitor still signed in with an e-mail address may sign in again in a window of the modal's
 * own origin (credential-window.ts), where the browser keeps the new session's credential; the
 * modal then takes that session over and the next wallet call works.
 */
import { ERRORS, isLatchError } from '@latch/shared'
import { useState } from 'react'
import { exitFlow } from '../flow/flow.ts'
import { useModal } from '../hooks.ts'
import { locale, shownError, t, tf } from '../i18n/i18n.ts'
import { runtime } from '../runtime.ts'
import { store } from '../store.ts'
import { type CredentialWindow, openCredentialWindow, signInInWindow } from './credential-window.ts'
import { walletFrame } from './frame.ts'

type Again = 'idle' | 'waiting' | 'done' | 'failed' | 'still'

/**
 * The sign-in in the window; the session is taken over only for the user signed in here. Then
 * the wallet API is asked whether the credential now comes along (a read, the passkey options):
 * a browser that also withholds cookies set first-party from its cross-site frames (Chromium
 * blocking third-party cookies outright) still refuses, and the view says so instead of
 * promising a wallet that would not open.
 */
async function signInAgain(target: CredentialWindow, email: string): Promise<Again> {
  const { apiUrl, appId, session } = runtime()
  const { lang, dir } = document.documentElement
  const signed = await signInInWindow(target, {
    apiUrl,
    appId,
    email,
    locale: locale(),
    texts: {
      title: t('codeTitle'),
      body: tf('codeEmail', { destination: email }),
      legend: t('codeLegend'),
      button: t('continue'),
      wrong: shownError(ERRORS.invalid_verification_code.message),
      failed: shownError(ERRORS.code_verification_failed.message),
      lang,
      dir,
    },
  })
  if (signed.user.id !== store.getState().user?.id) return 'failed'
  session.start({ token: signed.token }, signed.user)
  try {
    const frame = await walletFrame()
    await frame['latch:wallet:passkey-options']({ accessToken: signed.token })
  } catch (e) {
    if (isLatchError(e) && e.is('wallet_sign_in_required')) return 'still'
  }
  return 'done'
}

export function WalletRefused() {
  const email = useModal((s) => s.user?.email?.address ?? null)
  const [again, setAgain] = useState<Again>('idle')
  // Only a session still alive can be signed into again as the same user: a refused refresh
  // cookie (session_cookie_refused) has ended it.
  const offer =
    email !== null && runtime().session.isAuthenticated() && again !== 'done' && again !== 'still'
  return (
    <div className="latch-screen latch-center" data-testid="screen-wallet-refused">
      <h1 className="latch-title">{t('refusedTitle')}</h1>
      <p className="latch-description">{t('refusedBody')}</p>
      <p className="latch-description">{t('refusedHelp')}</p>
      {offer ? (
        <button
          type="button"
          className="latch-button"
          data-testid="wallet-refused-window"
          disabled={again === 'waiting'}
          onClick={() => {
            // Opened in the click, before anything is awaited.
            const target = openCredentialWindow()
            if (!target) {
              setAgain('failed')
              return
            }
            setAgain('waiting')
            signInAgain(target, email).then(setAgain, () => setAgain('failed'))
          }}
        >
          {t('refusedWindow')}
        </button>
      ) : null}
      <p className="latch-description" role="status" data-testid="wallet-refused-status">
        {again === 'done'
          ? t('refusedAgain')
          : again === 'failed'
            ? t('refusedNotAgain')
            : again === 'still'
              ? t('refusedStill')
              : ''}
      </p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="wallet-refused-close"
        data-autofocus
        onClick={() => exitFlow(true)}
      >
        {t('close')}
      </button>
    </div>
  )
}
