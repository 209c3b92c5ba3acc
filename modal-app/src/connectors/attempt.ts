/**
 * The bookkeeping both wallet connection screens share (AWAITING_CONNECTION for sign-in and
 * link, connect.ts; AWAITING_CONNECT_ONLY_CONNECTION, connect-only.ts): the connector of the
 * attempt on screen, its state in the store, the Retry rule and how a failure reads. One
 * attempt is on screen at a time, so one `current` serves both.
 */
import { type Hex, LatchError, WALLET_CONNECT_RETRIES } from '@latch/shared'
import { currentFlow, navigate } from '../flow/flow.ts'
import type { ScreenId } from '../screens/ids.ts'
import { type ExternalWalletState, store } from '../store.ts'
import { recordWalletConnection } from './history.ts'
import type { Connector } from './types.ts'

type AttemptScreen = Extract<ScreenId, 'AWAITING_CONNECTION' | 'AWAITING_CONNECT_ONLY_CONNECTION'>

/** The connector of the attempt on screen: Retry uses it again. */
let current: Connector | null = null

export function updateAttempt(patch: Partial<ExternalWalletState>): void {
  const state = store.getState().externalWallet
  if (state) store.setState({ externalWallet: { ...state, ...patch } })
}

/** A fresh attempt with `connector` on `screen`: waiting, no retries used. */
export function beginAttempt(connector: Connector, screen: AttemptScreen): void {
  current = connector
  store.setState({
    externalWallet: {
      connector: { id: connector.id, name: connector.name, icon: connector.icon },
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
  if (!current || !state?.error?.retryable || state.retries >= WALLET_CONNECT_RETRIES) {
    return null
  }
  updateAttempt({ retries: state.retries + 1 })
  return current
}

/**
 * Whether this attempt is still the one on screen. Leaving the screen (back to the wallets,
 * another wallet chosen, the modal closed) abandons it: what arrives later is delivered to
 * nobody and signs nobody in.
 */
export function attemptAlive(connector: Connector, screen: AttemptScreen): () => boolean {
  const flow = currentFlow()
  return () => flow.alive() && current === connector && store.getState().screen === screen
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
