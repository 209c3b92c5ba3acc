/**
 * EMBEDDED_WALLET_KEY_EXPORT_SCREEN (docs/behaviour.md, "EMBEDDED_WALLET_KEY_EXPORT_SCREEN"): the
 * private key, shown by the export page of the API origin in a frame, once the visitor clicks
 * Reveal inside that frame; the modal itself never holds it (wallet/export.ts). 'Done' (and the
 * close button) wait until the key has been shown for at least 1 s; before the reveal, closing
 * leaves without exporting.
 */
import { embeddedWallet, type LatchError } from '@latch/shared'
import { useEffect, useMemo, useRef, useState } from 'react'
import { exitFlow, finishFlow } from '../flow/flow.ts'
import { useModal } from '../hooks.ts'
import { shownError, t } from '../i18n/i18n.ts'
import { exportFrameUrl, showKey } from '../wallet/export.ts'

export function EmbeddedWalletKeyExport() {
  const user = useModal((s) => s.user)
  const shown = useModal((s) => s.delivered)
  const closeBlocked = useModal((s) => s.closeBlocked)
  const [error, setError] = useState<LatchError | null>(null)
  const frame = useRef<HTMLIFrameElement>(null)
  const address = user ? embeddedWallet(user.linkedAccounts)?.address : undefined
  const src = useMemo(() => (address ? exportFrameUrl(address) : ''), [address])

  useEffect(() => {
    const iframe = frame.current
    if (!iframe || !src) return
    return showKey(iframe, setError)
  }, [src])

  return (
    <div className="latch-screen" data-testid="screen-EMBEDDED_WALLET_KEY_EXPORT_SCREEN">
      <h1 className="latch-title latch-center">{t('exTitle')}</h1>
      <p className="latch-description latch-center">{t(shown ? 'exShown' : 'exReveal')}</p>
      {src ? (
        <iframe
          ref={frame}
          className="latch-export-frame"
          data-testid="latch-export-frame"
          title={t('xLabel')}
          src={src}
          allow="clipboard-write"
        />
      ) : null}
      <p aria-live="polite" className="latch-code-status">
        {error ? (
          <span className="latch-error" role="alert" data-testid="export-error">
            {shownError(error.message)}
          </span>
        ) : null}
      </p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="export-done"
        disabled={!error && (!shown || closeBlocked)}
        onClick={() => (shown ? finishFlow() : exitFlow(true))}
      >
        {t('exDone')}
      </button>
    </div>
  )
}
