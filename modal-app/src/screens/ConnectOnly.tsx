/**
 * Connect-only (connectWallet()): the wallet list for a visitor (CONNECT_ONLY_LANDING_SCREEN)
 * or a signed-in user (CONNECT_ONLY_AUTHENTICATED_SCREEN), and the connection
 * (AWAITING_CONNECT_ONLY_CONNECTION). Nothing here signs in or changes the account.
 */
import { truncateAddress } from '@latch/shared'
import { retryConnectOnly } from '../connectors/connect-only.ts'
import { WalletSection } from '../connectors/WalletSection.tsx'
import { useApp, useModal } from '../hooks.ts'
import type { ExternalWalletState } from '../store.ts'
import { ConnectionProgress } from './AwaitingConnection.tsx'

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
  return (
    <ConnectionProgress
      id="AWAITING_CONNECT_ONLY_CONNECTION"
      state={state}
      {...texts(state)}
      onRetry={() => {
        void retryConnectOnly()
      }}
    />
  )
}
