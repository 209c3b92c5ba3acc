/**
 * The WalletConnect option of the wallet lists: a wallet on another device or in a phone app.
 * Without the app's Cloud project id it is shown disabled with why, rather than failing once
 * chosen. The provider itself loads only on the click (walletconnect.ts).
 */
import { useModal } from '../hooks.ts'
import { t } from '../i18n/i18n.ts'
import { runtime } from '../runtime.ts'
import { store } from '../store.ts'
import { chooseWallet } from './choose.ts'
import { createWalletConnectConnector } from './walletconnect.ts'
import { walletConnectSettings } from './walletconnect-config.ts'

/** The app's name and the host page's origin: what the wallet's approval prompt names. */
async function metadata(): Promise<{ name: string; url: string }> {
  const host = runtime().host
  const page = host ? await host.pageUrl() : location.href
  return { name: store.getState().app?.name ?? '', url: new URL(page).origin }
}

export function WalletConnectOption() {
  const config = useModal((s) => s.app?.config)
  const settings = walletConnectSettings(config)
  return (
    <div className="latch-walletconnect-option">
      <button
        type="button"
        className="latch-button latch-wallet-button"
        data-testid="walletconnect-option"
        disabled={!settings}
        aria-describedby={settings ? undefined : 'latch-walletconnect-off'}
        onClick={() => {
          if (settings) chooseWallet(createWalletConnectConnector(settings, { metadata }))
        }}
      >
        <span>WalletConnect</span>
      </button>
      {settings ? null : (
        <p className="latch-muted" id="latch-walletconnect-off" data-testid="walletconnect-off">
          {t('wcOff')}
        </p>
      )}
    </div>
  )
}
