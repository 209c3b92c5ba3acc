/**
 * Signing in, or linking, with an external wallet (SPEC sections 2, 4 and 8), on
 * AWAITING_CONNECTION: connect (the wallet's prompt) → POST /siwe/init {address} → the
 * EIP-4361 message for the host page → personal_sign → /siwe/authenticate or /siwe/link
 * through the flow engine, which shows success for 1400 ms (500 ms before the in-app wallet's
 * creation, whose rule sees the wallet account the server answered).
 *
 * A failure shows its catalogue text; a retryable one offers Retry, at most
 * WALLET_CONNECT_RETRIES times, after which 'Unable to connect wallet' shows.
 */
import {
  LatchError,
  SIWE_HASH_HEADER,
  SIWE_SECRET_HEADER,
  type SiweInitResponse,
  WALLET_CONNECT_RETRIES,
} from '@latch/shared'
import { toHex } from 'viem'
import { completeFlow, flowGeneration, navigate } from '../flow.ts'
import { browserSecret } from '../oauth.ts'
import { runtime } from '../runtime.ts'
import { type ExternalWalletState, store } from '../store.ts'
import { type WalletStage, walletError } from './errors.ts'
import { recordWalletConnection } from './history.ts'
import { siweMessage } from './siwe.ts'
import type { Connector } from './types.ts'

/** The connector of the attempt on screen: Retry uses it again. */
let current: Connector | null = null

function update(patch: Partial<ExternalWalletState>): void {
  const state = store.getState().externalWallet
  if (state) store.setState({ externalWallet: { ...state, ...patch } })
}

/** The visitor chose a wallet (landing or link screen): AWAITING_CONNECTION, then the attempt. */
export function connectWallet(connector: Connector): Promise<void> {
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
  navigate('AWAITING_CONNECTION')
  return attempt(connector)
}

/** Retry on the failed step; nothing once the retries are used up or the failure is final. */
export function retryWallet(): Promise<void> {
  const state = store.getState().externalWallet
  if (!current || !state?.error?.retryable || state.retries >= WALLET_CONNECT_RETRIES) {
    return Promise.resolve()
  }
  update({ retries: state.retries + 1 })
  return attempt(current)
}

async function attempt(connector: Connector): Promise<void> {
  const started = flowGeneration()
  // Leaving the screen (back to the wallets, another wallet chosen) abandons the attempt: a
  // signature arriving later signs nobody in.
  const alive = () =>
    started === flowGeneration() &&
    current === connector &&
    store.getState().screen === 'AWAITING_CONNECTION'
  const intent = store.getState().flow?.kind === 'link' ? 'link' : 'login'
  let stage: WalletStage = 'connect'
  update({ status: 'connecting', step: 'waiting', error: null, address: null })
  try {
    const { address, chainId } = await connector.connect()
    if (!alive()) return
    update({ status: 'connected', step: 'connected', address })
    const { api, host } = runtime()
    if (!host) throw LatchError.of('modal_unreachable')
    const pageUrl = await host.pageUrl()
    // A sign-in asks without the token: with one, the server would keep the nonce for a link.
    // The nonce is bound to this modal: only the holder of the secret can use it.
    const binding = await browserSecret()
    const { nonce } = await api.request<SiweInitResponse>(
      '/siwe/init',
      { address },
      { auth: intent === 'link', headers: { [SIWE_HASH_HEADER]: binding.hash } },
    )
    if (!alive()) return
    update({ step: 'signing' })
    stage = 'sign'
    const message = siweMessage({ pageUrl, address, chainId, nonce, now: new Date() })
    const signature = await connector.request('personal_sign', [toHex(message), address])
    if (!alive()) return
    if (typeof signature !== 'string') throw LatchError.of('wallet_login_failed')
    await completeFlow(
      '/siwe',
      {
        message,
        signature,
        chainId: String(chainId),
        walletClientType: connector.walletClientType,
        connectorType: connector.type,
      },
      'wallet',
      () => {
        update({ step: 'success' })
        recordWalletConnection({
          address,
          connectorType: connector.type,
          walletClientType: connector.walletClientType,
          connectedAt: new Date().toISOString(),
        })
      },
      { [SIWE_SECRET_HEADER]: binding.secret },
    )
  } catch (e) {
    if (!alive()) return
    const error = walletError(e, stage)
    if (error.is('allowlist_rejected')) return navigate('ALLOWLIST_REJECTION_SCREEN')
    const state = store.getState().externalWallet
    const exhausted = (state?.retries ?? 0) >= WALLET_CONNECT_RETRIES && error.retryable
    const shown = exhausted ? LatchError.of('wallet_retries_exhausted') : error
    update({
      status: connector.status,
      step: 'failed',
      error: {
        message: shown.message,
        // After the last retry, the last failure's text says why.
        details: exhausted ? error.message : (shown.details ?? null),
        retryable: shown.retryable,
      },
    })
  }
}
