/** EMBEDDED_WALLET_CREATED_SCREEN: the new wallet, then the flow completes by itself (4500 ms). */
import { embeddedWallet, truncateAddress, WALLET_CREATED_SCREEN_MS } from '@latch/shared'
import { useEffect } from 'react'
import { finishFlow, flowResult } from '../flow/flow.ts'
import { useModal } from '../hooks.ts'
import { t } from '../i18n/i18n.ts'

export function EmbeddedWalletCreated() {
  const signedIn = useModal((s) => s.user)
  // The flow's result is the user the server answered once the wallet was made.
  const user = flowResult()?.user ?? signedIn
  const wallet = user ? embeddedWallet(user.linkedAccounts) : undefined
  useEffect(() => {
    const timer = setTimeout(() => finishFlow(), WALLET_CREATED_SCREEN_MS)
    return () => clearTimeout(timer)
  }, [])
  return (
    <div className="latch-screen latch-center" data-testid="screen-EMBEDDED_WALLET_CREATED_SCREEN">
      <h1 className="latch-title">{t('ready')}</h1>
      {wallet ? (
        <p className="latch-description" data-testid="created-address" title={wallet.address}>
          {truncateAddress(wallet.address)}
        </p>
      ) : null}
      <p className="latch-success">{t('success')}</p>
    </div>
  )
}
