/**
 * PASSKEY_RECOVERY_SCREEN: after link('passkey') added a passkey, for a user whose in-app wallet
 * is not recovered by passkey yet (passkey.ts, offerPasskeyRecovery): seal the wallet's share
 * under that passkey too, or not now. Either way link() resolves with the user.
 */
import { isLatchError, toLatchError } from '@latch/shared'
import { useState } from 'react'
import { finishOnScreen } from '../flow/flow.ts'
import { shownError, t } from '../i18n/i18n.ts'
import { sealUnderLinkedPasskey } from '../passkeys/passkey.ts'

export function PasskeyRecovery() {
  const [busy, setBusy] = useState(false)
  const [done, setDone] = useState(false)
  const [error, setError] = useState<string | null>(null)
  async function confirm() {
    const sealing = sealUnderLinkedPasskey()
    setBusy(true)
    setError(null)
    try {
      await sealing
      setDone(true)
    } catch (e) {
      // No PRF: said plainly, the wallet keeps the recovery it has.
      setError(
        isLatchError(e) && e.is('passkey_prf_unsupported')
          ? t('pkRecNoPrf')
          : shownError(toLatchError(e).message),
      )
      setBusy(false)
    }
  }
  return (
    <div className="latch-screen" data-testid="screen-PASSKEY_RECOVERY_SCREEN">
      <h1 className="latch-title">{t('pkRecTitle')}</h1>
      <p className="latch-description">{t('pkRecBody')}</p>
      <div className="latch-stack">
        <button
          type="button"
          className="latch-button latch-button-primary"
          disabled={busy || done}
          data-autofocus
          data-testid="passkey-recovery-use"
          onClick={() => void confirm()}
        >
          {t('pkRecUse')}
        </button>
        <button
          type="button"
          className="latch-button"
          disabled={busy || done}
          data-testid="passkey-recovery-later"
          onClick={finishOnScreen}
        >
          {t('pkRecLater')}
        </button>
      </div>
      <p className="latch-muted" role="status" data-testid="passkey-recovery-status">
        {busy && !done ? t('pkWaiting') : done ? t('pkRecDone') : ''}
      </p>
      {error ? (
        <p className="latch-error" role="alert" data-testid="passkey-recovery-error">
          {error}
        </p>
      ) : null}
    </div>
  )
}
