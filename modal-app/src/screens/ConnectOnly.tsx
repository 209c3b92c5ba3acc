/**
 * Connect-only (connectWallet()): the wallet list for a visitor (CONNECT_ONLY_LANDING_SCREEN)
 * or a signed-in user (CONNECT_ONLY_AUTHENTICATED_SCREEN), and the connection
 * (AWAITING_CONNECT_ONLY_CONNECTION). Nothing here signs in or changes the account.
 */
import { truncateAddress, WALLET_CONNECT_RETRIES } from '@latch/shared'
import { retryConnectOnly } from '../connectors/connect-only.ts'
import { WalletConnectPairing } from '../connectors/WalletConnectPairing.tsx'
import { WalletSection } from '../connectors/WalletSection.tsx'
import { WALLETCONNECT_ID } from '../connectors/walletconnect.ts'
import { useApp, useModal } from '../hooks.ts'
import type { ExternalWalletState } from '../store.ts'

export function ConnectOnlyLanding() {
  const { name } = useApp()
  return (
    <div className="latch-screen" data-testid="screen-CONNECT_ONLY_LANDING_SCREEN">
      <h1 className="latch-title">Connect a wallet</h1>
      <p className="latch-description" data-testid="connect-only-description">
        Choose the wallet to use with {name}.
      </p>
      <WalletSection />
    </div>
  )
}

export function ConnectOnlyAuthenticated() {
  const { name } = useApp()
  return (
    <div className="latch-screen" data-testid="screen-CONNECT_ONLY_AUTHENTICATED_SCREEN">
      <h1 className="latch-title">Connect a wallet</h1>
      <p className="latch-description" data-testid="connect-only-description">
        You’re signed in to {name}. Connecting a wallet does not change your account.
      </p>
      <WalletSection />
    </div>
  )
}

function texts(state: ExternalWalletState): { title: string; description: string | null } {
  const name = state.connector.name
  switch (state.step) {
    case 'success':
      return {
        title: `Connected to ${name}`,
        description: state.address ? truncateAddress(state.address) : null,
      }
    case 'failed':
      return { title: state.error?.message ?? '', description: state.error?.details ?? null }
    default:
      return { title: `Waiting for ${name}`, description: 'Approve the connection in your wallet.' }
  }
}

export function AwaitingConnectOnlyConnection() {
  const state = useModal((s) => s.externalWallet)
  if (!state) return null
  const { title, description } = texts(state)
  const busy = state.step !== 'success' && state.step !== 'failed'
  const canRetry =
    state.step === 'failed' && state.error?.retryable && state.retries < WALLET_CONNECT_RETRIES
  const icon = /^data:image\//i.test(state.connector.icon) ? state.connector.icon : ''
  return (
    <div
      className="latch-screen latch-center"
      data-testid="screen-AWAITING_CONNECT_ONLY_CONNECTION"
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
      {/* WalletConnect's pairing (QR code, phone wallets) while it waits for a wallet. */}
      {state.connector.id === WALLETCONNECT_ID && state.step === 'waiting' ? (
        <WalletConnectPairing />
      ) : null}
      {canRetry ? (
        <button
          type="button"
          className="latch-button latch-button-primary"
          data-testid="connection-retry"
          data-autofocus
          onClick={() => {
            void retryConnectOnly()
          }}
        >
          Retry
        </button>
      ) : null}
    </div>
  )
}
