/**
 * The wallets of the host page as buttons, for the landing's 'Connect Wallet' section and the
 * wallet link screen. Loaded apart from the landing (its chunk carries ethers for the message).
 */
import { type LatchError, toLatchError } from '@latch/shared'
import { useEffect, useMemo, useState } from 'react'
import { navigate } from '../flow/flow.ts'
import { shownError, t } from '../i18n/i18n.ts'
import { chooseWallet } from './choose.ts'
import { coinbaseConnector, connectorOrigin } from './coinbase.ts'
import { injectedConnectors } from './injected.ts'
import {
  isMobileDevice,
  PHANTOM_DEEP_LINK_ID,
  PHANTOM_INSTALL_ID,
  phantomDeepLinkEntry,
} from './phantom.ts'
import type { Connector } from './types.ts'
import { WalletConnectOption } from './WalletConnectOption.tsx'

type Listing =
  | { status: 'loading' }
  | { status: 'ready'; connectors: Connector[] }
  | { status: 'error'; error: LatchError }

/** Only a data:image icon is shown (what EIP-6963 asks for); anything else is left out. */
const safeIcon = (icon: string) => (/^data:image\/[a-z+.-]+[;,]/i.test(icon) ? icon : '')

/**
 * The wallets reached without the host page : Coinbase Wallet through its SDK unless
 * the browser has its extension or the modal server has no connector origin for its frame
 * (`coinbase`), and Phantom unless the bridge lists its provider: on a phone
 * its deep link (Phantom's browser), on a desktop its install guide (INSTALL_PHANTOM_SCREEN,
 * the extension's page of this browser).
 */
export function appConnectors(
  injected: readonly Connector[],
  mobile = isMobileDevice(),
  coinbase = connectorOrigin() !== null,
): Connector[] {
  const has = (client: string) => injected.some((c) => c.walletClientType === client)
  return [
    ...(has('coinbase_wallet') || !coinbase ? [] : [coinbaseConnector()]),
    ...(has('phantom')
      ? []
      : [phantomDeepLinkEntry(mobile ? PHANTOM_DEEP_LINK_ID : PHANTOM_INSTALL_ID)]),
  ]
}

export function WalletSection() {
  const [listing, setListing] = useState<Listing>({ status: 'loading' })
  // Made once per listing: a connector keeps its SDK session between its attempts.
  const extra = useMemo(
    () =>
      listing.status === 'loading'
        ? null
        : appConnectors(listing.status === 'ready' ? listing.connectors : []),
    [listing],
  )
  useEffect(() => {
    let live = true
    injectedConnectors().then(
      (connectors) => live && setListing({ status: 'ready', connectors }),
      (e: unknown) => live && setListing({ status: 'error', error: toLatchError(e) }),
    )
    return () => {
      live = false
    }
  }, [])
  return (
    <div className="latch-wallets" data-testid="wallet-list" data-status={listing.status}>
      {listing.status === 'loading' ? (
        <p className="latch-muted" role="status">
          {t('looking')}
        </p>
      ) : listing.status === 'error' ? (
        <p className="latch-error" role="alert" data-testid="wallet-list-error">
          {shownError(listing.error.message)}
        </p>
      ) : listing.connectors.length === 0 ? (
        <p className="latch-muted" data-testid="wallet-list-empty">
          {t('wNone')}
        </p>
      ) : (
        <ul className="latch-wallet-list">
          {listing.connectors.map((connector) => {
            const icon = safeIcon(connector.icon)
            return (
              <li key={connector.id}>
                <button
                  type="button"
                  className="latch-button latch-wallet-button"
                  data-testid="wallet-option"
                  data-wallet-id={connector.id}
                  onClick={() => chooseWallet(connector)}
                >
                  {/* The name is beside it: the icon is decoration for a screen reader. */}
                  {icon ? (
                    <img src={icon} alt="" width={24} height={24} className="latch-wallet-icon" />
                  ) : null}
                  <span>{connector.name}</span>
                </button>
              </li>
            )
          })}
        </ul>
      )}
      {extra ? <AppWallets connectors={extra} /> : null}
      <WalletConnectOption />
      <button
        type="button"
        className="latch-link-button"
        data-testid="wallet-education-link"
        onClick={() => navigate('WALLET_EDUCATION')}
      >
        {t('noWallet')}
      </button>
    </div>
  )
}

/** The wallets of appConnectors, apart from the browser's (their own test id). */
function AppWallets({ connectors }: { connectors: Connector[] }) {
  if (!connectors.length) return null
  return (
    <ul className="latch-wallet-list" data-testid="app-wallet-list">
      {connectors.map((connector) => (
        <li key={connector.id}>
          <button
            type="button"
            className="latch-button latch-wallet-button"
            data-testid="app-wallet-option"
            data-wallet-id={connector.id}
            onClick={() => chooseWallet(connector)}
          >
            <img src={connector.icon} alt="" width={24} height={24} className="latch-wallet-icon" />
            <span>{connector.name}</span>
          </button>
        </li>
      ))}
    </ul>
  )
}
