/**
 * EMBEDDED_WALLET_RECOVERY_SCREEN (docs/behaviour.md, "EMBEDDED_WALLET_RECOVERY_SCREEN"): the
 * passcode brings the wallet to this device. Five wrong passcodes lock recovery for the server's
 * Retry-After; the button stays disabled until then.
 */
import { embeddedWallet } from '@latch/shared'
import { useEffect, useState } from 'react'
import { PasscodeInput, usePasscode } from '../components/PasscodeInput.tsx'
import { useModal } from '../hooks.ts'
import { locale, shownError, t, tf } from '../i18n/i18n.ts'
import { WalletApproval } from '../wallet/approval.tsx'
import { recoverAfterPairing, recoverWithPasscode } from '../wallet/flows.ts'

/**
 * "2 minutes", "45 seconds", "3 hours": how long a locked recovery lasts, rounded up, in the
 * visitor's language (Intl's unit formatting).
 */
export function waitText(ms: number, language: string = locale()): string {
  const s = Math.max(1, Math.ceil(ms / 1000))
  const [n, unit] =
    s < 60
      ? [s, 'second']
      : s < 3600
        ? [Math.ceil(s / 60), 'minute']
        : [Math.ceil(s / 3600), 'hour']
  return new Intl.NumberFormat(language, { style: 'unit', unit, unitDisplay: 'long' }).format(n)
}

/** Whether this browser has WebAuthn at all: the passkey choice shows only where it does. */
const passkeys = () => typeof window !== 'undefined' && 'PublicKeyCredential' in window

export function EmbeddedWalletRecovery() {
  const user = useModal((s) => s.user)
  const method = user ? embeddedWallet(user.linkedAccounts)?.recoveryMethod : undefined
  if (method === 'latch') return <PairThisDevice />
  return method === 'passkey' ? <RecoverWithPasskey /> : <RecoverWithPasscode />
}

/**
 * An automatic wallet that does not open here by itself: this session came from a fork link
 * (the host page may have read it), so it opens only once paired, with the code the wallet frame
 * of the visitor's other device shows, typed into this device's wallet frame.
 */
function PairThisDevice() {
  const wallet = useModal((s) => s.wallet)
  const error = wallet?.status === 'error' ? (wallet.error ?? null) : null
  return (
    <div className="latch-screen latch-center" data-testid="screen-EMBEDDED_WALLET_RECOVERY_SCREEN">
      <h1 className="latch-title">{t('apPairTitle')}</h1>
      <p className="latch-description">{t('apEnterBody')}</p>
      <WalletApproval kind="fork-enter-code" onDone={() => void recoverAfterPairing()} />
      {error ? (
        <p className="latch-error" role="alert" data-testid="pair-error">
          {shownError(error)}
        </p>
      ) : null}
    </div>
  )
}

/**
 * A wallet sealed under a passkey: one button, and the frame asks the passkey itself. The
 * wallet has no passcode to offer instead.
 */
function RecoverWithPasskey() {
  const wallet = useModal((s) => s.wallet)
  const status = wallet?.status ?? 'idle'
  const busy = status === 'submitting' || status === 'success'
  const error = status === 'error' ? (wallet?.error ?? null) : null
  return (
    <div className="latch-screen latch-center" data-testid="screen-EMBEDDED_WALLET_RECOVERY_SCREEN">
      <h1 className="latch-title">{t('recoverTitle')}</h1>
      <p className="latch-description">{t('pkRecoverBody')}</p>
      <p className="latch-code-status" aria-live="polite" data-testid="passkey-recovery-status">
        {error ? (
          <span className="latch-error" role="alert" data-testid="passkey-recovery-error">
            {shownError(error)}
          </span>
        ) : null}
      </p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="recover-with-passkey"
        disabled={busy}
        aria-busy={status === 'submitting'}
        onClick={() => void recoverWithPasscode({ passkey: true })}
      >
        {t('pkUse')}
      </button>
    </div>
  )
}

function RecoverWithPasscode() {
  const wallet = useModal((s) => s.wallet)
  const entry = usePasscode()
  const lockedUntil = wallet?.lockedUntil ?? null
  // Read in the render that shows the error, so the lock's text and the disabled button come
  // with it; the timer only renders again when the server's wait is over.
  const locked = lockedUntil !== null && lockedUntil > Date.now()
  const [, setExpired] = useState(0)
  const status = wallet?.status ?? 'idle'
  const busy = status === 'submitting' || status === 'success'

  // Locked: the button comes back when the server's wait is over.
  useEffect(() => {
    const remaining = lockedUntil === null ? 0 : lockedUntil - Date.now()
    if (remaining <= 0) return
    const timer = setTimeout(() => setExpired((n) => n + 1), remaining)
    return () => clearTimeout(timer)
  }, [lockedUntil])

  const { valid, problem } = entry
  const submitError = status === 'error' ? (wallet?.error ?? null) : null
  const error =
    problem ??
    (submitError && locked && lockedUntil
      ? tf('tryAgainIn', {
          error: shownError(submitError),
          wait: waitText(lockedUntil - Date.now()),
        })
      : submitError)
  return (
    <div className="latch-screen latch-center" data-testid="screen-EMBEDDED_WALLET_RECOVERY_SCREEN">
      <h1 className="latch-title">{t('recoverTitle')}</h1>
      <p className="latch-description">{t('recoverBody')}</p>
      <form
        className="latch-form"
        onSubmit={(e) => {
          e.preventDefault()
          if (valid && !busy && !locked) void recoverWithPasscode(entry.passcode)
        }}
      >
        <PasscodeInput {...entry.input} locked={busy} error={error} legend={t('passcode')} />
        <button
          type="submit"
          className="latch-button latch-button-primary"
          data-testid="recover-wallet"
          disabled={!valid || busy || locked}
          aria-busy={status === 'submitting'}
        >
          {t('recoverButton')}
        </button>
      </form>
      {passkeys() ? (
        // A passcode wallet may have had a passkey added (latch:wallet:add-passkey).
        <button
          type="button"
          className="latch-link-button latch-small"
          data-testid="recover-with-passkey"
          disabled={busy || locked}
          onClick={() => void recoverWithPasscode({ passkey: true })}
        >
          {t('pkInstead')}
        </button>
      ) : null}
    </div>
  )
}
