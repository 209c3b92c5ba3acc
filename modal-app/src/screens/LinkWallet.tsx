import { walletConnections } from '../connectors/history.ts'
import { WalletSection } from '../connectors/WalletSection.tsx'
import { useApp, useModal } from '../hooks.ts'
import { t, tf } from '../i18n/i18n.ts'

const short = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`

/**
 * The linking hint: a wallet this browser connected before, else an external wallet the user
 * already has; the screen then asks to reconnect it.
 */
export function linkingHint(user: { linkedAccounts: readonly unknown[] } | null): string | null {
  const last = walletConnections()[0]
  if (last) return last.address
  for (const account of user?.linkedAccounts ?? []) {
    const a = account as { type?: unknown; address?: unknown; walletClientType?: unknown }
    if (a.type === 'wallet' && a.walletClientType !== 'latch' && typeof a.address === 'string') {
      return a.address
    }
  }
  return null
}

/** LINK_WALLET_SCREEN: link('wallet'), 'Connect your wallet' or 'Reconnect your wallet'. */
export function LinkWallet() {
  const { name } = useApp()
  const user = useModal((s) => s.user)
  const hint = linkingHint(user)
  return (
    <div className="latch-screen" data-testid="screen-LINK_WALLET_SCREEN">
      <h1 className="latch-title">{t(hint ? 'lwReconnect' : 'lwConnect')}</h1>
      <p className="latch-description" data-testid="link-description">
        {tf('lwBody', { app: name })}
      </p>
      {hint ? (
        <p className="latch-helper" data-testid="link-wallet-hint">
          {t('lwLast')} <span title={hint}>{short(hint)}</span>
        </p>
      ) : null}
      <WalletSection />
    </div>
  )
}
