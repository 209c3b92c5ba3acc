/**
 * Connect-only (connectWallet() on the host SDK): the visitor connects an external wallet
 * without signing in. On AWAITING_CONNECT_ONLY_CONNECTION: connect (the wallet's prompt), then
 * 'Connected to {wallet}' for the success pause and the flow ends with the wallet
 * `{address, connectorType, walletClientType, chainId}`. Nothing is signed and the session is
 * left as it is (signed out stays signed out, a signed-in user stays that user); the wallet
 * joins the connection history and the host hears 'wallet_connected'.
 *
 * Failures read as on AWAITING_CONNECTION (errors.ts), with the same Retry rule.
 */
import {
  type ConnectedWallet,
  LatchError,
  SUCCESS_CLOSE_DELAY_MS,
  WALLET_CONNECT_RETRIES,
} from '@latch/shared'
import { finishFlow, flowGeneration, navigate } from '../flow.ts'
import { type ExternalWalletState, store } from '../store.ts'
import { walletError } from './errors.ts'
import { recordWalletConnection } from './history.ts'
import type { Connector } from './types.ts'

/** The connector of the attempt on screen: Retry uses it again. */
let current: Connector | null = null

function update(patch: Partial<ExternalWalletState>): void {
  const state = store.getState().externalWallet
  if (state) store.setState({ externalWallet: { ...state, ...patch } })
}

/** The visitor chose a wallet on a connect-only screen. */
export function connectOnly(connector: Connector): Promise<void> {
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
  navigate('AWAITING_CONNECT_ONLY_CONNECTION')
  return attempt(connector)
}

/** Retry on the failed connection; nothing once the retries are used up or the failure is final. */
export function retryConnectOnly(): Promise<void> {
  const state = store.getState().externalWallet
  if (!current || !state?.error?.retryable || state.retries >= WALLET_CONNECT_RETRIES) {
    return Promise.resolve()
  }
  update({ retries: state.retries + 1 })
  return attempt(current)
}

async function attempt(connector: Connector): Promise<void> {
  const started = flowGeneration()
  // Leaving the screen abandons the attempt: a connection arriving later is delivered to nobody.
  const alive = () =>
    started === flowGeneration() &&
    current === connector &&
    store.getState().screen === 'AWAITING_CONNECT_ONLY_CONNECTION'
  update({ status: 'connecting', step: 'waiting', error: null, address: null })
  try {
    // Called before any await: a connector that opens a window (Coinbase Wallet's popup) does
    // so inside the visitor's click.
    const { address, chainId } = await connector.connect()
    if (!alive()) return
    const wallet: ConnectedWallet = {
      address,
      connectorType: connector.type,
      walletClientType: connector.walletClientType,
      chainId,
    }
    recordWalletConnection({
      address,
      connectorType: connector.type,
      walletClientType: connector.walletClientType,
      connectedAt: new Date().toISOString(),
    })
    const timer = store.getState().pauseTimer
    if (timer) clearTimeout(timer)
    update({ status: 'connected', step: 'success', address })
    // Delivered when the modal closes: after the pause, or at once if the visitor closes it.
    store.setState({
      delivery: { value: wallet },
      pauseTimer: setTimeout(
        () => started === flowGeneration() && finishFlow(),
        SUCCESS_CLOSE_DELAY_MS,
      ),
    })
  } catch (e) {
    if (!alive()) return
    const error = walletError(e, 'connect')
    const state = store.getState().externalWallet
    const exhausted = (state?.retries ?? 0) >= WALLET_CONNECT_RETRIES && error.retryable
    const shown = exhausted ? LatchError.of('wallet_retries_exhausted') : error
    update({
      status: connector.status,
      step: 'failed',
      error: {
        message: shown.message,
        details: exhausted ? error.message : (shown.details ?? null),
        retryable: shown.retryable,
      },
    })
  }
}
