import type { MessageKey } from '@latch/shared/i18n'
import { appStoreUrl, COINBASE_WALLET, isMobile, METAMASK } from '../connectors/wallets.ts'
import { navigate } from '../flow/flow.ts'
import { t } from '../i18n/i18n.ts'
import type { ScreenId } from './ids.ts'

interface Option {
  name: string
  kind: MessageKey
  screen: ScreenId
  stores: { appStore: string; playStore: string }
}

const OPTIONS: Option[] = [
  {
    name: 'MetaMask',
    kind: 'eBrowser',
    screen: 'INSTALL_METAMASK_SCREEN',
    stores: METAMASK,
  },
  {
    name: 'Coinbase Wallet',
    kind: 'eMobile',
    screen: 'INSTALL_COINBASE_WALLET_SCREEN',
    stores: COINBASE_WALLET,
  },
]

/** WALLET_EDUCATION: a visitor without a wallet picks one to install (on a phone: its store). */
export function WalletEducation() {
  const mobile = isMobile()
  return (
    <div className="latch-screen" data-testid="screen-WALLET_EDUCATION">
      <h1 className="latch-title">{t('eTitle')}</h1>
      <h2 className="latch-section-title">{t('eCreate')}</h2>
      <ul className="latch-wallet-list">
        {OPTIONS.map((option) => (
          <li key={option.name}>
            {mobile ? (
              <a
                className="latch-button latch-wallet-button"
                href={appStoreUrl(option.stores)}
                target="_blank"
                rel="noopener noreferrer"
                data-testid="education-option"
              >
                <span>{option.name}</span> <span className="latch-muted">{t(option.kind)}</span>
              </a>
            ) : (
              <button
                type="button"
                className="latch-button latch-wallet-button"
                data-testid="education-option"
                onClick={() => navigate(option.screen)}
              >
                <span>{option.name}</span> <span className="latch-muted">{t(option.kind)}</span>
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  )
}
