/**
 * The pairing of a WalletConnect connection, on AWAITING_CONNECTION while it waits: our own QR
 * code of the pairing URI (high error correction, 160 px) for a phone's
 * camera and, on a phone, the wallet apps that open with it (shared/src/wallet-apps.ts).
 */
import { QR_DEFAULT_SIZE } from '@latch/shared'
import { WALLET_APPS, walletConnectLink } from '@latch/shared/wallet-apps'
import { useEffect, useState } from 'react'
import { useStore } from 'zustand'
import { t } from '../i18n/i18n.ts'
import { qrCodeImage } from '../screens/InstallWallet.tsx'
import { pairing } from './walletconnect.ts'
import { isMobile } from './wallets.ts'

export function WalletConnectPairing() {
  const uri = useStore(pairing, (s) => s.uri)
  const [qr, setQr] = useState<{ uri: string; src: string } | null>(null)
  useEffect(() => {
    if (!uri) return
    let live = true
    qrCodeImage(uri).then(
      (src) => live && setQr({ uri, src }),
      (e: unknown) => console.error('Latch: the QR code could not be drawn', e),
    )
    return () => {
      live = false
    }
  }, [uri])
  if (!uri) return null
  return (
    <div className="latch-walletconnect" data-testid="walletconnect-pairing">
      <div className="latch-center" style={{ minHeight: QR_DEFAULT_SIZE }}>
        {qr?.uri === uri ? (
          <img
            src={qr.src}
            width={QR_DEFAULT_SIZE}
            height={QR_DEFAULT_SIZE}
            alt={t('wcQr')}
            data-testid="walletconnect-qr"
            data-uri={uri}
          />
        ) : null}
      </div>
      {isMobile() ? (
        <ul className="latch-wallet-list" data-testid="walletconnect-apps">
          {WALLET_APPS.map((app) => (
            <li key={app.id}>
              <a
                className="latch-button latch-wallet-button"
                href={walletConnectLink(app, uri)}
                rel="noopener noreferrer"
                target="_blank"
              >
                <img src={app.icon} alt="" width={24} height={24} className="latch-wallet-icon" />
                <span>{app.name}</span>
              </a>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  )
}
