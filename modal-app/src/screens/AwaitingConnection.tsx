import { ERRORS, WALLET_CONNECT_RETRIES } from '@latch/shared'
import type { MessageKey } from '@latch/shared/i18n'
import { retryWallet } from '../connectors/connect.ts'
import { WalletConnectPairing } from '../connectors/WalletConnectPairing.tsx'
import { WALLETCONNECT_ID } from '../connectors/walletconnect.ts'
import { useModal } from '../hooks.ts'
import { shownError, t, tf } from '../i18n/i18n.ts'
import type { ExternalWalletState } from '../store.ts'

/** The catalogue's second lines a failed connection shows, by the table's keys. */
const DETAILS: [string | undefined, MessageKey][] = [
  [ERRORS.wallet_linked_to_another_user.details, 'dAddress'],
  [ERRORS.wallet_request_timeout.details, 'dRetryConnect'],
  [ERRORS.rpc_request_pending.details, 'dPending'],
  [ERRORS.signature_rejected.details, 'dRetrySign'],
  [ERRORS.something_went_wrong.details, 'later'],
]

/** An error's second line in the visitor's language (it is held in English), or as it is. */
export function shownDetails(details: string | null | undefined): string | null {
  if (!details) return null
  const key = DETAILS.find(([english]) => english === details)?.[1]
  return key ? t(key) : details
}

/** What each step of the connection says (waiting, connected, sign, result). */
function texts(state: ExternalWalletState): { title: string; description: string | null } {
  const name = state.connector.name
  switch (state.step) {
    case 'waiting':
      return { title: tf('cWaiting', { wallet: name }), description: t('cApprove') }
    case 'connected':
      return { title: tf('cConnected', { wallet: name }), description: t('cPreparing') }
    case 'signing':
      return {
        title: t('cSignTitle'),
        description: tf('cSignBody', { wallet: name }),
      }
    case 'success':
      return { title: t('success'), description: t('oauthGood') }
    case 'failed':
      return {
        title: shownError(state.error?.message ?? ''),
        description: shownDetails(state.error?.details),
      }
  }
}

/** AWAITING_CONNECTION: an external wallet's connection and signature (connectors/connect.ts). */
export function AwaitingConnection() {
  const state = useModal((s) => s.externalWallet)
  if (!state) return null
  return (
    <ConnectionProgress
      id="AWAITING_CONNECTION"
      state={state}
      {...texts(state)}
      onRetry={() => {
        void retryWallet()
      }}
    />
  )
}

/**
 * A connection's progress as both connection screens show it (this one and
 * AWAITING_CONNECT_ONLY_CONNECTION): the wallet's icon, a spinner while it is under way, the
 * step's title (a live region: it changes in place) and text (an alert when it failed),
 * WalletConnect's pairing while it waits for a wallet, and Retry while one is allowed.
 */
export function ConnectionProgress(props: {
  id: 'AWAITING_CONNECTION' | 'AWAITING_CONNECT_ONLY_CONNECTION'
  state: ExternalWalletState
  title: string
  description: string | null
  onRetry: () => void
}) {
  const { id, state, title, description, onRetry } = props
  const busy = state.step !== 'success' && state.step !== 'failed'
  const canRetry =
    state.step === 'failed' && state.error?.retryable && state.retries < WALLET_CONNECT_RETRIES
  const icon = /^data:image\//i.test(state.connector.icon) ? state.connector.icon : ''
  return (
    <div
      className="latch-screen latch-center"
      data-testid={`screen-${id}`}
      data-step={state.step}
      data-status={state.status}
    >
      {icon ? <img src={icon} alt={state.connector.name} width={48} height={48} /> : null}
      {busy ? <div className="latch-spinner" role="progressbar" aria-label={title} /> : null}
      <h1 className="latch-title" data-testid="connection-title" aria-live="polite">
        {title}
      </h1>
      {description ? (
        <p
          className="latch-description"
          data-testid="connection-description"
          role={state.step === 'failed' ? 'alert' : undefined}
        >
          {description}
        </p>
      ) : null}
      {state.connector.id === WALLETCONNECT_ID && state.step === 'waiting' ? (
        <WalletConnectPairing />
      ) : null}
      {canRetry ? (
        <button
          type="button"
          className="latch-button latch-button-primary"
          data-testid="connection-retry"
          data-autofocus
          onClick={onRetry}
        >
          {t('retry')}
        </button>
      ) : null}
    </div>
  )
}
