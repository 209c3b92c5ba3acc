/**
 * The install guides (docs/behaviour.md, "INSTALL_METAMASK_SCREEN" and the two after it): MetaMask,
 * Phantom, Coinbase Wallet (a QR code).
 */
import { QR_DEFAULT_SIZE, QR_ERROR_CORRECTION } from '@latch/shared'
import { type ReactNode, useEffect, useState } from 'react'
import {
  COINBASE_WALLET,
  extensionUrl,
  LEARN_MORE_URL,
  METAMASK,
  PHANTOM,
} from '../connectors/wallets.ts'
import { navigate } from '../flow/flow.ts'
import { t, tf } from '../i18n/i18n.ts'
import { walletListScreen } from './wallet-list-screen.ts'

/** 'Done! I have my wallet': back to the wallets (the link screen when linking). */
function done(): void {
  navigate(walletListScreen())
}

function InstallGuide({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <div className="latch-screen" data-testid={`screen-${id}`}>
      <h1 className="latch-title">{title}</h1>
      {children}
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="install-done"
        onClick={done}
      >
        {t('iDone')}
      </button>
      <p className="latch-small">
        <a href={LEARN_MORE_URL} target="_blank" rel="noopener noreferrer" data-testid="learn-more">
          {t('iMore')}
        </a>
      </p>
    </div>
  )
}

function ExtensionSteps({ name, url }: { name: string; url: string }) {
  return (
    <>
      <ol className="latch-description">
        <li>{tf('iStep1', { wallet: name })}</li>
        <li>{t('iStep2')}</li>
        <li>{t('iStep3')}</li>
      </ol>
      <a
        className="latch-button"
        href={url}
        target="_blank"
        rel="noopener noreferrer"
        data-testid="install-link"
      >
        {tf('iTitle', { wallet: name })}
      </a>
    </>
  )
}

export function InstallMetamask() {
  return (
    <InstallGuide id="INSTALL_METAMASK_SCREEN" title={tf('iTitle', { wallet: 'MetaMask' })}>
      <ExtensionSteps name="MetaMask" url={extensionUrl(METAMASK)} />
    </InstallGuide>
  )
}

export function InstallPhantom() {
  return (
    <InstallGuide id="INSTALL_PHANTOM_SCREEN" title={tf('iTitle', { wallet: 'Phantom' })}>
      <ExtensionSteps name="Phantom" url={extensionUrl(PHANTOM)} />
    </InstallGuide>
  )
}

/** The QR code as an SVG data URI: high error correction, 160 px. */
export async function qrCodeImage(text: string): Promise<string> {
  const qrcode = await import('qrcode')
  const svg = await qrcode.toString(text, {
    type: 'svg',
    errorCorrectionLevel: QR_ERROR_CORRECTION,
    width: QR_DEFAULT_SIZE,
    margin: 1,
  })
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`
}

export function InstallCoinbaseWallet() {
  const [qr, setQr] = useState<string | null>(null)
  useEffect(() => {
    let live = true
    qrCodeImage(COINBASE_WALLET.download).then(
      (src) => live && setQr(src),
      (e: unknown) => console.error('Latch: the QR code could not be drawn', e),
    )
    return () => {
      live = false
    }
  }, [])
  return (
    <InstallGuide
      id="INSTALL_COINBASE_WALLET_SCREEN"
      title={tf('iTitle', { wallet: 'Coinbase Wallet' })}
    >
      <p className="latch-description">{t('iScan')}</p>
      <div className="latch-center" style={{ minHeight: QR_DEFAULT_SIZE }}>
        {qr ? (
          <img
            src={qr}
            width={QR_DEFAULT_SIZE}
            height={QR_DEFAULT_SIZE}
            alt={t('iQr')}
            data-testid="install-qr"
          />
        ) : null}
      </div>
    </InstallGuide>
  )
}
