/**
 * The wallets of the host page as buttons, for the landing's 'Connect Wallet' section and the
 * wallet link screen. Loaded apart from the landing (its chunk carries viem for the message).
 */
import { type LatchError, toLatchError } from '@latch/shared'
import { useEffect, useState } from 'react'
import { navigate } from '../flow.ts'
import { connectWallet } from './connect.ts'
import { injectedConnectors } from './injected.ts'
import type { Connector } from './types.ts'

type Listing =
  | { status: 'loading' }
  | { status: 'ready'; connectors: Connector[] }
  | { status: 'error'; error: LatchError }

/** Only a data:image icon is shown (what EIP-6963 asks for); anything else is left out. */
const safeIcon = (icon: string) => (/^data:image\/[a-z+.-]+[;,]/i.test(icon) ? icon : '')

export function WalletSection() {
  const [listing, setListing] = useState<Listing>({ status: 'loading' })
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
          Looking for wallets…
        </p>
      ) : listing.status === 'error' ? (
        <p className="latch-error" role="alert" data-testid="wallet-list-error">
          {listing.error.message}
        </p>
      ) : listing.connectors.length === 0 ? (
        <p className="latch-muted" data-testid="wallet-list-empty">
          No wallet found in this browser.
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
                  onClick={() => {
                    void connectWallet(connector)
                  }}
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
      <button
        type="button"
        className="latch-link-button"
        data-testid="wallet-education-link"
        onClick={() => navigate('WALLET_EDUCATION')}
      >
        I don’t have a wallet
      </button>
    </div>
  )
}
