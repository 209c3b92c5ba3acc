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
import { type ConnectedWallet, SUCCESS_CLOSE_DELAY_MS } from '@latch/shared'
import { deliver } from '../flow/deliver.ts'
import { type FlowHandle, navigate, onFlow } from '../flow/flow.ts'
import {
  beginAttempt,
  failAttempt,
  recordConnection,
  retryTarget,
  updateAttempt,
} from './attempt.ts'
import { awaitFrameClick } from './choose.ts'
import { walletError } from './errors.ts'
import type { Connector } from './types.ts'

/** The visitor chose a wallet on a connect-only screen. */
export function connectOnly(connector: Connector): Promise<void> {
  beginAttempt(connector, 'AWAITING_CONNECT_ONLY_CONNECTION')
  return attempt(connector)
}

/** Retry on the failed connection; nothing once the retries are used up or the failure is final. */
export function retryConnectOnly(): Promise<void> {
  const connector = retryTarget()
  if (connector?.needsFrameClick) {
    // Its popup opens only in a click in its frame: the interstitial's Continue resumes.
    awaitFrameClick(connector)
    return Promise.resolve()
  }
  return connector ? attempt(connector) : Promise.resolve()
}

/** The attempt again after the interstitial's Continue (a Retry, counted already). */
export function resumeConnectOnly(connector: Connector): Promise<void> {
  navigate('AWAITING_CONNECT_ONLY_CONNECTION')
  return attempt(connector)
}

/** One attempt with `connector`, a sub-step of the flow on screen (as connect.ts's). */
const attempt = onFlow(async function attempt(
  flow: FlowHandle,
  connector: Connector,
): Promise<void> {
  const step = flow.step('AWAITING_CONNECT_ONLY_CONNECTION')
  updateAttempt({ status: 'connecting', step: 'waiting', error: null, address: null })
  try {
    // Called before any await: a connector that opens a window (Coinbase Wallet's popup) does
    // so inside the visitor's click.
    const { address, chainId } = await step.guard(connector.connect())
    const wallet: ConnectedWallet = {
      address,
      connectorType: connector.type,
      walletClientType: connector.walletClientType,
      chainId,
    }
    recordConnection(connector, address)
    updateAttempt({ status: 'connected', step: 'success', address })
    // Delivered when the modal closes: after the pause, or at once if the visitor closes it.
    deliver(flow, wallet, { pauseMs: SUCCESS_CLOSE_DELAY_MS })
  } catch (e) {
    // Reached only while the attempt is the one on screen: its one await is guarded.
    failAttempt(connector, walletError(e, 'connect'))
  }
})
