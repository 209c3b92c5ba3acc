/**
 * Connect-only (connectWallet()): the wallet list for a visitor (CONNECT_ONLY_LANDING_SCREEN)
 * or a signed-in user (CONNECT_ONLY_AUTHENTICATED_SCREEN), and the connection
 * (AWAITING_CONNECT_ONLY_CONNECTION). Nothing here signs in or changes the account.
 */
import { truncateAddress } from '@latch/shared'
import { retryConnectOnly } from '../connectors/connect-only.ts'
import { WalletSection } from '../connectors/WalletSection.tsx'
import { useApp, useModal } from '../hooks.ts'
import { shownError, t, tf } from '../i18n/i18n.ts'
import type { ExternalWalletState } from '../store.ts'
import { ConnectionProgress, shownDetails } from './AwaitingConnection.tsx'

export function ConnectOnlyLanding() {
  const { name } = useApp()
  return (
    <div className="latch-screen" data-testid="screen-CONNECT_ONLY_LANDING_SCREEN">
      <h1 className="latch-title">{t('coTitle')}</h1>
      <p className="latch-description" data-testid="connect-only-description">
        {tf('coChoose', { app: name })}
      </p>
      <WalletSection />
    </div>
  )
}

export function ConnectOnlyAuthenticated() {
  const { name } = useApp()
  return (
    <div className="latch-screen" data-testid="screen-CONNECT_ONLY_AUTHENTICATED_SCREEN">
      <h1 className="latch-title">{t('coTitle')}</h1>
      <p className="latch-description" data-testid="connect-only-description">
        {tf('coSignedIn', { app: name })}
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
        title: tf('cConnected', { wallet: name }),
        description: state.address ? truncateAddress(state.address) : null,
      }
    case 'failed':
      return {
        title: shownError(state.error?.message ?? ''),
        description: shownDetails(state.error?.details),
      }
    default:
      return { title: tf('cWaiting', { wallet: name }), description: t('cApprove') }
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
