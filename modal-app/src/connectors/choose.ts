/**
 * What choosing a wallet in a list does: Phantom's deep-link entry (a phone without Phantom's
 * browser) goes to its interstitial, its install entry (a desktop without the extension) to
 * INSTALL_PHANTOM_SCREEN; Coinbase Wallet goes to its interstitial, whose Continue (drawn by
 * its connector frame) is the click its popup opens in; anything else starts the attempt of the
 * flow on screen at once (connect-only, or the SIWE sign-in or link), inside this click.
 */
import { navigate } from '../flow/flow.ts'
import { store } from '../store.ts'
import { connectWallet, resumeWallet } from './connect.ts'
import { connectOnly, resumeConnectOnly } from './connect-only.ts'
import { PHANTOM_DEEP_LINK_ID, PHANTOM_INSTALL_ID } from './phantom.ts'
import type { Connector } from './types.ts'

/** The connector waiting on the interstitial's Continue, and whether it is a Retry. */
let waiting: { connector: Connector; retry: boolean } | null = null

export function chooseWallet(connector: Connector): void {
  if (connector.type === 'phantom' && connector.id === PHANTOM_DEEP_LINK_ID) {
    waiting = null
    navigate('PHANTOM_INTERSTITIAL_SCREEN')
    return
  }
  if (connector.type === 'phantom' && connector.id === PHANTOM_INSTALL_ID) {
    waiting = null
    navigate('INSTALL_PHANTOM_SCREEN')
    return
  }
  if (connector.needsFrameClick) {
    waiting = { connector, retry: false }
    navigate('COINBASE_INTERSTITIAL_SCREEN')
    return
  }
  startAttempt(connector)
}

/**
 * Retry of an attempt whose connector needs a click in its frame: back to the interstitial,
 * whose Continue resumes the attempt (its retry already counted).
 */
export function awaitFrameClick(connector: Connector): void {
  waiting = { connector, retry: true }
  navigate('COINBASE_INTERSTITIAL_SCREEN')
}

/** The visitor clicked Continue in the connector frame (its popup opened): the attempt. */
export function continueWaiting(): void {
  const next = waiting
  if (!next) return
  if (!next.retry) {
    startAttempt(next.connector)
    return
  }
  waiting = null
  if (store.getState().flow?.kind === 'connect-wallet') void resumeConnectOnly(next.connector)
  else void resumeWallet(next.connector)
}

function startAttempt(connector: Connector): void {
  waiting = null
  if (store.getState().flow?.kind === 'connect-wallet') void connectOnly(connector)
  else void connectWallet(connector)
}
