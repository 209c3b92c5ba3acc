/**
 * The bookkeeping both wallet connection screens share (AWAITING_CONNECTION for sign-in and
 * link, connect.ts; AWAITING_CONNECT_ONLY_CONNECTION, connect-only.ts): the connector of the
 * attempt on screen, its state in the store, the Retry rule and how a failure reads. The attempt's connector
 * is kept with its state in the store, so it ends with the flow; whether an answer is still for
 * the attempt on screen is the flow handle's sub-step (`flow.step(screen)`).
 */
import { type Hex, LatchError, WALLET_CONNECT_RETRIES } from '@latch/shared'
import { navigate } from '../flow/flow.ts'
import type { ScreenId } from '../screens/ids.ts'
import { type ExternalWalletState, store } from '../store.ts'
import { recordWalletConnection } from './history.ts'
import type { Connector } from './types.ts'

export type AttemptScreen = Extract<
  ScreenId,
  'AWAITING_CONNECTION' | 'AWAITING_CONNECT_ONLY_CONNECTION'
>

export function updateAttempt(patch: Partial<ExternalWalletState>): void {
  const state = store.getState().externalWallet
  if (state) store.setState({ externalWallet: { ...state, ...patch } })
}

/** A fresh attempt with `connector` on `screen`: waiting, no retries used. */
export function beginAttempt(connector: Connector, screen: AttemptScreen): void {
  store.setState({
    externalWallet: {
      connector: { id: connector.id, name: connector.name, icon: connector.icon },
      source: connector,
      status: 'connecting',
      step: 'waiting',
      address: null,
      error: null,
      retries: 0,
    },
  })
  navigate(screen)
}

/**
 * Retry on the failed attempt: the connector to try again (one retry counted), or null once
 * the retries are used up or the failure is final.
 */
export function retryTarget(): Connector | null {
  const state = store.getState().externalWallet
  const connector = state?.source
  if (!connector || !state.error?.retryable || state.retries >= WALLET_CONNECT_RETRIES) {
    return null
  }
  updateAttempt({ retries: state.retries + 1 })
  return connector
}

/** The connection joins the history (the host hears 'wallet_connected'). */
export function recordConnection(connector: Connector, address: Hex): void {
  recordWalletConnection({
    address,
    connectorType: connector.type,
    walletClientType: connector.walletClientType,
    connectedAt: new Date().toISOString(),
  })
}

/**
 * Shows a failure (a wallet error, errors.ts): its catalogue text, with Retry where it may be
 * retried; after the last retry 'Unable to connect wallet', whose details say why the last one
 * failed.
 */
export function failAttempt(connector: Connector, error: LatchError): void {
  const state = store.getState().externalWallet
  const exhausted = (state?.retries ?? 0) >= WALLET_CONNECT_RETRIES && error.retryable
  const shown = exhausted ? LatchError.of('wallet_retries_exhausted') : error
  updateAttempt({
    status: connector.status,
    step: 'failed',
    error: {
      message: shown.message,
      details: exhausted ? error.message : (shown.details ?? null),
      retryable: shown.retryable,
    },
  })
}
