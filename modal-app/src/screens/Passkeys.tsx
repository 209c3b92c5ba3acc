import { type PasskeyAccount, toLatchError } from '@latch/shared'
import { useId, useState } from 'react'
import { navigate } from '../flow/flow.ts'
import { useApp, useModal } from '../hooks.ts'
import { shownError, t, tf } from '../i18n/i18n.ts'
import {
  createPasskey,
  finishManaging,
  isCancel,
  removePasskey,
  renamePasskey,
  signInWithPasskey,
  userPasskeys,
} from '../passkeys/passkey.ts'

// The landing's e-mail field starts and stops its conditional request through this chunk.
export { startConditional } from '../passkeys/passkey.ts'

/** A step's busy state and its error, announced (role="alert"). */
function useStep() {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  async function run(work: () => Promise<unknown>) {
    setBusy(true)
    setError(null)
    try {
      await work()
    } catch (e) {
      // The visitor's own cancel needs no message: the buttons are there again.
      if (!isCancel(e)) setError(toLatchError(e).message)
    } finally {
      setBusy(false)
    }
  }
  const alert = error ? (
    <p className="latch-error" role="alert" data-testid="passkey-error">
      {shownError(error)}
    </p>
  ) : null
  return { busy, run, alert }
}

/**
 * PASSKEY_SCREEN. Signed out (the landing's button): sign in with a passkey, or create one to
 * sign up. In link('passkey'): the user's passkeys with their names, rename and remove, and
 * 'Add a passkey'.
 */
export function Passkeys() {
  const linking = useModal((s) => s.flow?.kind === 'link')
  return linking ? <ManagePasskeys /> : <PasskeyLogin />
}

function PasskeyLogin() {
  const { name } = useApp()
  const { busy, run, alert } = useStep()
  const success = useModal((s) => s.user !== null && s.flow?.kind === 'login' && !busy)
  return (
    <div className="latch-screen" data-testid="screen-PASSKEY_SCREEN">
      <h1 className="latch-title">{t('pkTitle')}</h1>
      <p className="latch-description">{tf('pkBody', { app: name })}</p>
      <div className="latch-stack">
        <button
          type="button"
          className="latch-button latch-button-primary"
          disabled={busy}
          data-autofocus
          data-testid="passkey-sign-in"
          onClick={() => void run(() => signInWithPasskey())}
        >
          {t('pkSignIn')}
        </button>
        <button
          type="button"
          className="latch-button"
          disabled={busy}
          data-testid="passkey-create"
          onClick={() => void run(() => createPasskey())}
        >
          {t('pkCreate')}
        </button>
      </div>
      <p className="latch-helper">{t('pkCreateHint')}</p>
      <button
        type="button"
        className="latch-link-button"
        disabled={busy}
        data-testid="passkey-back"
        onClick={() => navigate('LANDING')}
      >
        {t('pkBack')}
      </button>
      <p className="latch-muted" role="status" data-testid="passkey-status">
        {busy ? t('pkWaiting') : success ? t('pkSignedIn') : ''}
      </p>
      {alert}
    </div>
  )
}

function ManagePasskeys() {
  const { name } = useApp()
  const user = useModal((s) => s.user)
  const passkeys = userPasskeys(user)
  const { busy, run, alert } = useStep()
  const [added, setAdded] = useState(false)
  return (
    <div className="latch-screen" data-testid="screen-PASSKEY_SCREEN">
      <h1 className="latch-title">{t('pkManage')}</h1>
      <p className="latch-description" data-testid="link-description">
        {tf('pkManageBody', { app: name })}
      </p>
      {passkeys.length === 0 ? (
        <p className="latch-muted">{t('pkNone')}</p>
      ) : (
        <ul className="latch-passkeys" data-testid="passkey-list">
          {passkeys.map((p) => (
            <PasskeyRow key={p.credentialId} passkey={p} busy={busy} run={run} />
          ))}
        </ul>
      )}
      <div className="latch-stack">
        <button
          type="button"
          className="latch-button latch-button-primary"
          disabled={busy}
          data-autofocus
          data-testid="passkey-add"
          onClick={() =>
            void run(async () => {
              setAdded(false)
              await createPasskey(tf('pkName', { n: passkeys.length + 1 }))
              setAdded(true)
            })
          }
        >
          {t('pkAdd')}
        </button>
        <button
          type="button"
          className="latch-button"
          disabled={busy}
          data-testid="passkey-done"
          onClick={finishManaging}
        >
          {t('pkDone')}
        </button>
      </div>
      <p className="latch-muted" role="status" data-testid="passkey-status">
        {busy ? t('pkWaiting') : added ? t('pkAdded') : ''}
      </p>
      {alert}
    </div>
  )
}

function PasskeyRow({
  passkey,
  busy,
  run,
}: {
  passkey: PasskeyAccount
  busy: boolean
  run: (work: () => Promise<unknown>) => Promise<void>
}) {
  const [editing, setEditing] = useState(false)
  const [value, setValue] = useState(passkey.name)
  const id = useId()
  if (editing) {
    return (
      <li className="latch-passkey" data-testid="passkey-item">
        <form
          className="latch-input-row"
          onSubmit={(e) => {
            e.preventDefault()
            const next = value.trim()
            if (!next) return
            void run(async () => {
              await renamePasskey(passkey.credentialId, next)
              setEditing(false)
            })
          }}
        >
          <label htmlFor={id} className="latch-visually-hidden">
            {tf('pkRenameLabel', { name: passkey.name })}
          </label>
          <input
            id={id}
            className="latch-input"
            value={value}
            maxLength={64}
            // The field takes the focus as it appears, where 'Rename' was.
            ref={(field) => field?.focus()}
            data-testid="passkey-name-input"
            onChange={(e) => setValue(e.target.value)}
          />
          <button
            type="submit"
            className="latch-button latch-button-primary"
            disabled={busy || !value.trim()}
            data-testid="passkey-save"
          >
            {t('pkSave')}
          </button>
          <button type="button" className="latch-button" onClick={() => setEditing(false)}>
            {t('cancel')}
          </button>
        </form>
      </li>
    )
  }
  return (
    <li className="latch-passkey" data-testid="passkey-item">
      <span className="latch-passkey-name" data-testid="passkey-name">
        {passkey.name}
      </span>
      <button
        type="button"
        className="latch-link-button"
        disabled={busy}
        data-testid="passkey-rename"
        onClick={() => {
          setValue(passkey.name)
          setEditing(true)
        }}
      >
        {t('pkRename')}
      </button>
      <button
        type="button"
        className="latch-link-button"
        disabled={busy}
        aria-label={tf('pkRemoveLabel', { name: passkey.name })}
        data-testid="passkey-remove"
        onClick={() => void run(() => removePasskey(passkey.credentialId))}
      >
        {t('pkRemove')}
      </button>
    </li>
  )
}
