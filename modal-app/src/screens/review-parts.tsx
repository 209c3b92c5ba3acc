/**
 * Pieces the sign and transaction review screens share: the host's own words marked as the
 * app's, calldata (decoded where it is ERC-20, hex behind a disclosure), an EIP-712 domain and
 * permit, and the warning for an unlimited allowance.
 */
import type { Hex } from '@latch/shared'
import type { ReactNode } from 'react'
import { useModal } from '../hooks.ts'
import { t, tf } from '../i18n/i18n.ts'
import { verifiedHostOrigin } from '../startup/origin.ts'
import { type DecodedCall, summarizeTypedData } from '../wallet/decode.ts'
import { usableWallet } from '../wallet/sign.ts'

/** Who supplied a text: the app's registered name, else a plain 'this app'. */
export function useAppName(): string {
  return useModal((s) => s.app?.name) || 'this app'
}

/** A text with an element where its `placeholder` is (an address inside a sentence). */
function around(text: string, placeholder: string, node: ReactNode): ReactNode {
  const [before, after] = text.split(placeholder)
  return (
    <>
      {before}
      {node}
      {after}
    </>
  )
}

/** 'From <app>': put before text the host supplied, so it cannot pass as Latch's own words. */
export function AppLabel({ id }: { id?: string }) {
  const name = useAppName()
  return (
    <p className="latch-app-label" data-testid="app-label" id={id}>
      {tf('rFrom', { app: name })}
    </p>
  )
}

/** A block of the host's texts under one 'From <app>' label; nothing when it is empty. */
export function AppText({ children, show }: { children: ReactNode; show: boolean }) {
  if (!show) return null
  return (
    <div className="latch-app-text" data-testid="app-text">
      <AppLabel />
      {children}
    </div>
  )
}

/** A whole address: what is signed is shown in full, not truncated. */
function Address({ value }: { value: Hex }) {
  return <code className="latch-address">{value}</code>
}

/** A raw token amount (the token's decimals are not known here), or 'Unlimited'. */
function TokenAmount({ value, unlimited }: { value: bigint; unlimited: boolean }) {
  return <>{unlimited ? t('rUnlimited') : tf('rBaseUnits', { amount: value.toString() })}</>
}

/** The visible warning for an allowance that never runs out. */
export function UnlimitedWarning({ spender }: { spender: Hex }) {
  return (
    <p className="latch-warning" role="note" data-testid="unlimited-warning">
      {around(t('rUnlimitedWarn'), '{spender}', <Address value={spender} />)}
    </p>
  )
}

/** An ERC-20 call in words, with its parties in full. */
export function DecodedCallRows({ call, token }: { call: DecodedCall; token: Hex | undefined }) {
  return (
    <div className="latch-decoded" data-testid="decoded-call">
      <p className="latch-small">
        <strong>{call.name}</strong>
        {token ? <> {around(t('rOnToken'), '{token}', <Address value={token} />)}</> : null}
      </p>
      <dl className="latch-tx-rows">
        {call.name === 'transferFrom' ? (
          <>
            <dt>{t('txFrom')}</dt>
            <dd>
              <Address value={call.from} />
            </dd>
          </>
        ) : null}
        {call.name === 'approve' ? (
          <>
            <dt>{t('rSpender')}</dt>
            <dd>
              <Address value={call.spender} />
            </dd>
          </>
        ) : (
          <>
            <dt>{t('rRecipient')}</dt>
            <dd>
              <Address value={call.to} />
            </dd>
          </>
        )}
        <dt>{t(call.name === 'approve' ? 'rAllowance' : 'rTokenAmount')}</dt>
        <dd data-testid="decoded-amount">
          <TokenAmount value={call.amount} unlimited={call.name === 'approve' && call.unlimited} />
        </dd>
      </dl>
      {call.name === 'approve' && call.unlimited ? (
        <UnlimitedWarning spender={call.spender} />
      ) : null}
    </div>
  )
}

/** Calldata as hex, behind a disclosure the keyboard opens too (details/summary). */
export function CallData({ data }: { data: Hex }) {
  return (
    <details className="latch-calldata" data-testid="calldata">
      <summary>{tf('rCallData', { n: (data.length - 2) / 2 })}</summary>
      <code data-testid="calldata-hex">{data}</code>
    </details>
  )
}

/** Typed data's domain (name, chain, verifying contract) and, for a permit, what it allows. */
export function TypedDataDomain({ typedData }: { typedData: Record<string, unknown> | string }) {
  const summary = summarizeTypedData(typedData)
  if (!summary) return null
  const { permit } = summary
  return (
    <div className="latch-typed-domain" data-testid="typed-data-domain">
      <dl className="latch-tx-rows">
        <dt>{t('rDomain')}</dt>
        <dd data-testid="domain-name">
          {summary.name ?? '—'}
          {summary.version ? ` ${tf('rVersion', { version: summary.version })}` : ''}
        </dd>
        <dt>{t('rChain')}</dt>
        <dd data-testid="domain-chain">{summary.chain ?? t('rAnyChain')}</dd>
        <dt>{t('rContract')}</dt>
        <dd data-testid="domain-contract">
          {summary.verifyingContract ? <Address value={summary.verifyingContract} /> : '—'}
        </dd>
      </dl>
      {permit ? (
        <div className="latch-decoded" data-testid="decoded-permit">
          <p className="latch-small">
            <strong>{t('rPermit')}</strong>: {t('rPermitBody')}
          </p>
          <dl className="latch-tx-rows">
            <dt>{t('rSpender')}</dt>
            <dd>
              <Address value={permit.spender} />
            </dd>
            <dt>{t('rAllowance')}</dt>
            <dd data-testid="decoded-amount">
              <TokenAmount value={permit.value} unlimited={permit.unlimited} />
            </dd>
          </dl>
          {permit.unlimited ? <UnlimitedWarning spender={permit.spender} /> : null}
        </div>
      ) : null}
    </div>
  )
}

/** The in-app wallet's address before anything is signed (null once the user signed out). */
export function walletAddress(): Hex | null {
  try {
    return usableWallet().address
  } catch {
    return null
  }
}

/**
 * The page that asks, as startup verified it (the origin that frames the modal, one of the
 * app's): the host's texts above are its own words, this is where the request comes from.
 */
export function SiteRow() {
  const site = verifiedHostOrigin()
  if (!site) return null
  return (
    <>
      <dt>{t('rSite')}</dt>
      <dd data-testid="request-site">{site}</dd>
    </>
  )
}

/** Who signs (the whole address) and the site asking for it. */
export function SignParties() {
  const address = walletAddress()
  return (
    <dl className="latch-tx-rows" data-testid="sign-parties">
      {address ? (
        <>
          <dt>{t('rAccount')}</dt>
          <dd data-testid="sign-address">
            <Address value={address} />
          </dd>
        </>
      ) : null}
      <SiteRow />
    </dl>
  )
}
