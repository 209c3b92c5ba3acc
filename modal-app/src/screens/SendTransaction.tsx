/**
 * EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN (docs/behaviour.md,
 * "EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN"): 'Review transaction' with from, to, the value in the
 * coin and in dollars, the estimated fee and the balance (red when the value is over it); 'Send
 * ETH' for a plain transfer, else 'Submit transaction'; 'Submitting (may take a few minutes)...'
 * while the close button and Escape do nothing; then 'Transaction complete!', 'You're all set.' and
 * 'All Done'.
 */
import {
  explorerAddressUrl,
  explorerTransactionUrl,
  getChain,
  type Hex,
  truncateAddress,
} from '@latch/shared'
import { type ReactNode, useEffect, useRef } from 'react'
import { finishFlow } from '../flow/flow.ts'
import { useModal } from '../hooks.ts'
import { shownError, t } from '../i18n/i18n.ts'
import {
  coinText,
  estimatedFee,
  fiatText,
  isPlainTransfer,
  overBalance,
} from '../wallet/amounts.ts'
import { BatchReview } from '../wallet/batch.tsx'
import { decodeCalldata } from '../wallet/decode.ts'
import type { TransactionState } from '../wallet/requests.ts'
import { useArmed } from '../wallet/review.ts'
import { prepareTransaction, submitTransaction } from '../wallet/send.ts'
import {
  AppLabel,
  AppText,
  CallData,
  DecodedCallRows,
  SiteRow,
  walletAddress,
} from './review-parts.tsx'

function AddressLink({ chainId, address }: { chainId: number; address: Hex }) {
  const url = explorerAddressUrl(chainId, address)
  const text = truncateAddress(address)
  return url ? (
    <a href={url} target="_blank" rel="noopener noreferrer" title={address}>
      {text}
    </a>
  ) : (
    <span title={address}>{text}</span>
  )
}

function Row({ label, children, testId }: { label: string; children: ReactNode; testId: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-testid={testId}>{children}</dd>
    </>
  )
}

/** The sent transaction's hash in full, linked to the chain's explorer where it has one. */
function TransactionHash({ chainId, hash }: { chainId: number; hash: Hex }) {
  const url = explorerTransactionUrl(chainId, hash)
  return (
    <dl className="latch-tx-rows">
      <Row label={t('txHash')} testId="transaction-hash">
        {url ? (
          <a href={url} target="_blank" rel="noopener noreferrer" className="latch-address">
            {hash}
          </a>
        ) : (
          <code className="latch-address">{hash}</code>
        )}
      </Row>
    </dl>
  )
}

function Complete({ chainId, hash }: { chainId: number; hash: Hex | undefined }) {
  return (
    <div
      className="latch-screen latch-center"
      data-testid="screen-EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN"
    >
      <h1 className="latch-title">{t('txDone')}</h1>
      <p className="latch-description">{t('txSet')}</p>
      {hash ? <TransactionHash chainId={chainId} hash={hash} /> : null}
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="transaction-done"
        onClick={() => finishFlow()}
      >
        {t('txAllDone')}
      </button>
    </div>
  )
}

/** The sender's card of the UI options (a dapp's name, link, image and what it asks). */
function Sender({ info }: { info: NonNullable<TransactionState['options']['senderInfo']> }) {
  return (
    <div className="latch-tx-sender" data-testid="transaction-sender">
      {info.imgUrl ? (
        <img
          src={info.imgUrl}
          alt={info.imgAltText ?? info.name ?? ''}
          data-size={info.imgSize ?? 'sm'}
        />
      ) : null}
      <div>
        {info.name ? (
          <p className="latch-small">
            {info.url ? (
              <a href={info.url} target="_blank" rel="noopener noreferrer">
                {info.name}
              </a>
            ) : (
              info.name
            )}
          </p>
        ) : null}
        {info.actionText ? <p className="latch-small latch-muted">{info.actionText}</p> : null}
      </div>
    </div>
  )
}

/** The screen: a transaction's review, or the wallet frame's review of a batch (wallet_sendCalls). */
export function SendTransaction() {
  const batch = useModal((s) => s.flow?.kind === 'send-transaction' && s.flow.batch !== undefined)
  return batch ? <BatchReview /> : <TransactionReview />
}

function TransactionReview() {
  const tx = useModal((s) => s.transaction)
  const status = tx?.status
  // The whole screen is watched, not the button: a disabled button is drawn translucent, and
  // IntersectionObserver v2 counts any opacity as not visible.
  const root = useRef<HTMLDivElement>(null)
  // The frozen populated request on screen: the button arms once it has been visible,
  // unchanged, for REVIEW_ARM_DELAY_MS, and its click submits that request.
  const shown = tx?.prepared ?? null
  const armed = useArmed(shown, root)
  // Prepared once the screen is reached (after the connecting gate, or recovery).
  useEffect(() => {
    if (status === 'idle') void prepareTransaction()
  }, [status])
  if (!tx) return null
  if (tx.status === 'complete') {
    return <Complete chainId={tx.request.chainId} hash={tx.receipt?.transactionHash} />
  }

  const { request, options } = tx
  // Once prepared, what is shown is what is signed: the populated request's own fields.
  const target = shown ?? request
  const chain = getChain(request.chainId)
  const symbol = chain?.nativeCurrency.symbol ?? 'ETH'
  const decimals = chain?.nativeCurrency.decimals ?? 18
  const value = BigInt(target.value ?? '0x0')
  const from = shown?.from ?? walletAddress()
  const fee = shown ? estimatedFee(shown) : null
  const over = overBalance(value, tx.balance)
  const submitting = tx.status === 'submitting'
  const preparing = tx.status === 'idle' || tx.status === 'preparing'
  const error = tx.prepareError ?? tx.submitError
  const valueFiat = fiatText(value, tx.usdPrice, decimals)
  const feeFiat = fee === null ? null : fiatText(fee, tx.usdPrice, decimals)
  const info = options.transactionInfo
  const data = target.data && target.data !== '0x' ? target.data : undefined
  const call = decodeCalldata(data)
  const hostTexts = Boolean(
    options.title || options.description || options.senderInfo || info?.action || info?.description,
  )
  return (
    <div
      ref={root}
      className="latch-screen"
      data-testid="screen-EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN"
    >
      {/* The host's texts are marked as the app's: they must not pass as Latch's own words. */}
      {options.modalTitle ? <AppLabel /> : null}
      <h1 className="latch-title latch-center">{options.modalTitle ?? t('txTitle')}</h1>
      <AppText show={hostTexts}>
        {options.title ? <h2 className="latch-title">{options.title}</h2> : null}
        {options.description ? <p className="latch-description">{options.description}</p> : null}
        {options.senderInfo ? <Sender info={options.senderInfo} /> : null}
        {info?.action ? (
          <dl className="latch-tx-rows">
            <Row label={info.actionDescription ?? t('txAction')} testId="transaction-action">
              {info.action}
            </Row>
          </dl>
        ) : null}
        {info?.description ? <p className="latch-small latch-muted">{info.description}</p> : null}
      </AppText>
      <dl className="latch-tx-rows">
        {from ? (
          <Row label={t('txFrom')} testId="transaction-from">
            <AddressLink chainId={request.chainId} address={from} />
          </Row>
        ) : null}
        <SiteRow />
        {target.to ? (
          <Row label={t('txTo')} testId="transaction-to">
            <AddressLink chainId={request.chainId} address={target.to} />
          </Row>
        ) : null}
        <Row label={t('txAmount')} testId="transaction-value">
          {coinText(value, symbol, decimals)}
          {valueFiat ? (
            <span className="latch-tx-fiat" data-testid="transaction-value-usd">
              {valueFiat}
            </span>
          ) : null}
        </Row>
        <Row label={t('txFee')} testId="transaction-fee">
          {fee === null ? (preparing ? '…' : '—') : coinText(fee, symbol, decimals)}
          {feeFiat ? <span className="latch-tx-fiat">{feeFiat}</span> : null}
        </Row>
        {tx.balance !== null ? (
          <Row label={t('txBalance')} testId="transaction-balance">
            <span className={over ? 'latch-tx-over' : undefined} data-over={over}>
              {coinText(tx.balance, symbol, decimals)}
            </span>
          </Row>
        ) : null}
      </dl>
      {call ? <DecodedCallRows call={call} token={target.to} /> : null}
      {data ? <CallData data={data} /> : null}
      <p aria-live="polite" className="latch-tx-status">
        {error ? (
          <span className="latch-error" role="alert" data-testid="transaction-error">
            {shownError(error)}
          </span>
        ) : submitting ? (
          <span data-testid="transaction-submitting">{t('txSubmitting')}</span>
        ) : null}
      </p>
      <button
        type="button"
        className="latch-button latch-button-primary"
        data-testid="transaction-submit"
        data-armed={armed}
        disabled={tx.status !== 'ready' || !armed}
        aria-busy={submitting || preparing}
        aria-describedby={options.buttonText ? 'latch-send-button-from' : undefined}
        onClick={() => shown && armed && void submitTransaction(shown)}
      >
        {options.buttonText ?? t(isPlainTransfer(request) ? 'txSend' : 'txSubmit')}
      </button>
      {options.buttonText ? <AppLabel id="latch-send-button-from" /> : null}
    </div>
  )
}
