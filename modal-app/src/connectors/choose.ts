/**
 * What choosing a wallet in a list does: Phantom's deep-link entry (a phone without Phantom's
 * browser) goes to its interstitial, its install entry (a desktop without the extension) to
 * INSTALL_PHANTOM_SCREEN; Coinbase Wallet whose SDK has not arrived yet goes to its
 * interstitial, whose Continue is the fresh click its popup needs; anything else starts the
 * attempt of the flow on screen at once (connect-only, or the SIWE sign-in or link), inside this
 * click.
 */
import { navigate } from '../flow.ts'
import { store } from '../store.ts'
import { COINBASE_SDK_ID, coinbaseReady, loadCoinbase } from './coinbase.ts'
import { connectWallet } from './connect.ts'
import { connectOnly } from './connect-only.ts'
import { PHANTOM_DEEP_LINK_ID, PHANTOM_INSTALL_ID } from './phantom.ts'
import type { Connector } from './types.ts'

/** The connector waiting on an interstitial's Continue. */
let waiting: Connector | null = null

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
  if (
    connector.type === 'coinbase_wallet' &&
    connector.id === COINBASE_SDK_ID &&
    !coinbaseReady()
  ) {
    waiting = connector
    // Fetched now; the screen's Continue is enabled once it is here.
    void loadCoinbase().catch(() => {})
    navigate('COINBASE_INTERSTITIAL_SCREEN')
    return
  }
  startAttempt(connector)
}

/** Continue on the Coinbase Wallet interstitial: the attempt, inside the visitor's click. */
export function continueWaiting(): void {
  if (waiting) startAttempt(waiting)
}

function startAttempt(connector: Connector): void {
  waiting = null
  if (store.getState().flow?.kind === 'connect-wallet') void connectOnly(connector)
  else void connectWallet(connector)
}
