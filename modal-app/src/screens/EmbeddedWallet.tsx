/**
 * EMBEDDED_WALLET_SCREEN (docs/behaviour.md, "EMBEDDED_WALLET_SCREEN"): creates the in-app wallet.
 * With requireUserPasswordOnCreate the visitor sets a passcode (or generates one and saves it);
 * without it the wallet is created as the screen opens, with automatic recovery.
 */
import {
  COPIED_LABEL_MS,
  CREATED_SCREEN_DELAY_AFTER_PASSCODE_MS,
  ERRORS,
  GENERATED_LABEL_MS,
  generatePasscode,
} from '@latch/shared'
import { type ReactNode, useEffect, useLayoutEffect, useRef, useState } from 'react'
import { CharBoxes } from '../components/CharBoxes.tsx'
import { PasscodeInput, usePasscode } from '../components/PasscodeInput.tsx'
import { navigate } from '../flow/flow.ts'
import { useApp, useModal } from '../hooks.ts'
import { shownError, t, tf } from '../i18n/i18n.ts'
import { announceTitle } from '../shell/focus.ts'
import { checkWalletCredential, createInAppWallet } from '../wallet/flows.ts'
import { ErrorView } from './ErrorView.tsx'

/** A label that reads `done` for `ms` after `flash()`, e.g. 'Copied' for 1.5 s. */
function useFlash(ms: number): [boolean, () => void] {
  const [on, setOn] = useState(false)
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined)
  useEffect(() => () => clearTimeout(timer.current), [])
  const flash = () => {
    clearTimeout(timer.current)
    setOn(true)
    timer.current = setTimeout(() => setOn(false), ms)
  }
  return [on, flash]
}

export function EmbeddedWallet() {
  const app = useApp()
  return app.config.embeddedWalletConfig.requireUserPasswordOnCreate ? (
    <SetPasscode />
  ) : (
    <CreateAutomatically />
  )
}

/** Without a passcode: created on entering the screen; a failure is the general error view. */
function CreateAutomatically() {
  const wallet = useModal((s) => s.wallet)
  const started = useRef(false)
  useEffect(() => {
    if (started.current) return
    started.current = true
    void createInAppWallet()
  }, [])
  if (wallet?.status === 'error') {
    return (
      <ErrorView detail={wallet.error === ERRORS.create_failed.message ? null : wallet.error} />
    )
  }
  return (
    <div className="latch-screen latch-center" data-testid="screen-EMBEDDED_WALLET_SCREEN">
      <h1 className="latch-title">{t('creating')}</h1>
      <div className="latch-spinner" role="progressbar" aria-label={t('creating')} />
    </div>
  )
}

/**
 * With a passcode: the visitor types one (ChoosePasscode) or has one generated and saves it
 * (SecurePasscode). This part holds what both views share: the wallet's status, the generated
 * passcode, the created screen's pause.
 */
function SetPasscode() {
  const wallet = useModal((s) => s.wallet)
  const [generated, setGenerated] = useState<string | null>(null)
  const [why, setWhy] = useState(false)
  const [generatedLabel, flashGenerated] = useFlash(GENERATED_LABEL_MS)
  const status = wallet?.status ?? 'idle'
  const busy = status === 'submitting' || status === 'success'
  // A browser that refused the wallet credential hears it before choosing a passcode.
  useEffect(() => {
    void checkWalletCredential()
  }, [])

  // Created with the passcode: the created screen follows after a short pause.
  useEffect(() => {
    if (status !== 'success') return
    const timer = setTimeout(
      () => navigate('EMBEDDED_WALLET_CREATED_SCREEN'),
      CREATED_SCREEN_DELAY_AFTER_PASSCODE_MS,
    )
    return () => clearTimeout(timer)
  }, [status])

  const view: PasscodeView = {
    busy,
    submitting: status === 'submitting',
    submitError: status === 'error' ? (wallet?.error ?? null) : null,
    generateButton: (
      <button
        type="button"
        className="latch-link-button"
        data-testid="generate-passcode"
        disabled={busy}
        onClick={() => {
          setGenerated(generatePasscode())
          flashGenerated()
        }}
      >
        {t(generatedLabel ? 'generated' : 'generate')}
      </button>
    ),
    whyBlock: <WhyPasscode open={why} onToggle={() => setWhy(!why)} />,
    // A passkey seals the backup instead of a passcode (docs/architecture.md, "Recovery by
    // passkey"); where the authenticator has no PRF, the error says so and the passcode stays.
    passkeyButton:
      typeof window !== 'undefined' && 'PublicKeyCredential' in window ? (
        <button
          type="button"
          className="latch-button"
          data-testid="use-passkey"
          disabled={busy}
          onClick={() => void createInAppWallet({ passkey: true })}
        >
          {t('pkInstead')}
        </button>
      ) : null,
  }
  return generated ? (
    <SecurePasscode passcode={generated} {...view} />
  ) : (
    <ChoosePasscode {...view} />
  )
}

/** What both passcode views show alike. */
interface PasscodeView {
  busy: boolean
  submitting: boolean
  submitError: string | null
  generateButton: ReactNode
  whyBlock: ReactNode
  passkeyButton: ReactNode
}

function WhyPasscode({ open, onToggle }: { open: boolean; onToggle: () => void }) {
  return (
    <>
      <button
        type="button"
        className="latch-link-button latch-small"
        aria-expanded={open}
        aria-controls="latch-passcode-why"
        data-testid="passcode-why"
        onClick={onToggle}
      >
        {t('why')}
      </button>
      {open ? (
        <p
          id="latch-passcode-why"
          className="latch-muted latch-small"
          data-testid="passcode-why-text"
        >
          {t('whyText')}
        </p>
      ) : null}
    </>
  )
}

/** The visitor types a passcode (weak ones refused) and sets it. */
function ChoosePasscode({
  busy,
  submitting,
  submitError,
  generateButton,
  whyBlock,
  passkeyButton,
}: PasscodeView) {
  const entry = usePasscode({ refuseWeak: true })
  const { valid, problem } = entry
  return (
    <div className="latch-screen latch-center" data-testid="screen-EMBEDDED_WALLET_SCREEN">
      <h1 className="latch-title">{t('setTitle')}</h1>
      <form
        className="latch-form"
        onSubmit={(e) => {
          e.preventDefault()
          if (valid && !busy) void createInAppWallet(entry.passcode)
        }}
      >
        <PasscodeInput
          {...entry.input}
          locked={busy}
          error={problem ?? submitError}
          legend={t('passcode')}
        />
        <p className="latch-small">{generateButton}</p>
        <button
          type="submit"
          className="latch-button latch-button-primary"
          data-testid="set-passcode"
          disabled={!valid || busy}
          aria-busy={submitting}
        >
          {t('setButton')}
        </button>
      </form>
      {passkeyButton}
      {whyBlock}
    </div>
  )
}

/** A generated passcode on screen: the visitor copies or writes it down, then says so. */
function SecurePasscode({
  passcode,
  busy,
  submitting,
  submitError,
  generateButton,
  whyBlock,
}: PasscodeView & { passcode: string }) {
  const copyRef = useRef<HTMLButtonElement>(null)
  const [copiedLabel, flashCopied] = useFlash(COPIED_LABEL_MS)
  // The view changes within the screen: say its title and put the focus on Copy, as a new
  // screen would (App does both only when the screen id changes).
  useLayoutEffect(() => {
    if (!copyRef.current) return
    announceTitle(copyRef.current.closest<HTMLElement>('.latch-modal'))
    copyRef.current.focus()
  }, [])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(passcode)
      flashCopied()
    } catch {
      // No clipboard (a browser that refuses it to the frame): the passcode stays on screen.
    }
  }
  return (
    <div className="latch-screen latch-center" data-testid="screen-EMBEDDED_WALLET_SCREEN">
      <h1 className="latch-title">{t('secureTitle')}</h1>
      <p className="latch-description">{t('secureBody')}</p>
      <fieldset className="latch-code" data-testid="generated-passcode" data-value={passcode}>
        <legend className="latch-visually-hidden">{t('yourPasscode')}</legend>
        <CharBoxes
          chars={[...passcode]}
          onChars={() => {}}
          onCleared={() => {}}
          locked
          invalid={false}
          boxLabel={(i) => tf('char', { n: i + 1, total: passcode.length })}
          inputMode="text"
          testId="generated-passcode"
        />
        <p className="latch-code-status" aria-live="polite" data-testid="passcode-input-status">
          {submitError ? (
            <span className="latch-error" role="alert" data-testid="passcode-input-error">
              {shownError(submitError)}
            </span>
          ) : null}
        </p>
      </fieldset>
      <p className="latch-small">
        <button
          type="button"
          ref={copyRef}
          className="latch-link-button"
          data-testid="copy-passcode"
          onClick={() => void copy()}
        >
          {t(copiedLabel ? 'copied' : 'copy')}
        </button>{' '}
        · {generateButton}
      </p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="passcode-saved"
        disabled={busy}
        aria-busy={submitting}
        onClick={() => void createInAppWallet(passcode)}
      >
        {t('saved')}
      </button>
      {whyBlock}
    </div>
  )
}
