/**
 * Signing in, or linking, with an external wallet (docs/behaviour.md, "AWAITING_CONNECTION"), on
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
} from '@latch/shared'
import { hexlify, toUtf8Bytes } from 'ethers/utils'
import { completeFlow } from '../flow/complete.ts'
import { type FlowHandle, navigate, onFlow } from '../flow/flow.ts'
import { browserSecret } from '../oauth/oauth.ts'
import { runtime } from '../runtime.ts'
import {
  beginAttempt,
  failAttempt,
  recordConnection,
  retryTarget,
  updateAttempt,
} from './attempt.ts'
import { awaitFrameClick } from './choose.ts'
import { type WalletStage, walletError } from './errors.ts'
import { siweMessage } from './siwe.ts'
import type { Connector } from './types.ts'

/** The visitor chose a wallet (landing or link screen): AWAITING_CONNECTION, then the attempt. */
export function connectWallet(connector: Connector): Promise<void> {
  beginAttempt(connector, 'AWAITING_CONNECTION')
  return attempt(connector)
}

/** Retry on the failed step; nothing once the retries are used up or the failure is final. */
export function retryWallet(): Promise<void> {
  const connector = retryTarget()
  if (connector?.needsFrameClick) {
    // Its popup opens only in a click in its frame: the interstitial's Continue resumes.
    awaitFrameClick(connector)
    return Promise.resolve()
  }
  return connector ? attempt(connector) : Promise.resolve()
}

/** The attempt again after the interstitial's Continue (a Retry, counted already). */
export function resumeWallet(connector: Connector): Promise<void> {
  navigate('AWAITING_CONNECTION')
  return attempt(connector)
}

/**
 * One attempt with `connector`, a sub-step of the flow on screen: leaving the screen (back to
 * the wallets, another wallet chosen, the modal closed) or a Retry abandons it, and what arrives
 * later is delivered to nobody and signs nobody in.
 */
const attempt = onFlow(async function attempt(
  flow: FlowHandle,
  connector: Connector,
): Promise<void> {
  const step = flow.step('AWAITING_CONNECTION')
  const { intent } = flow
  let stage: WalletStage = 'connect'
  updateAttempt({ status: 'connecting', step: 'waiting', error: null, address: null })
  try {
    const { address, chainId } = await step.guard(connector.connect())
    updateAttempt({ status: 'connected', step: 'connected', address })
    const { api, host } = runtime()
    if (!host) throw LatchError.of('modal_unreachable')
    const pageUrl = await step.guard(host.pageUrl())
    // A sign-in asks without the token: with one, the server would keep the nonce for a link.
    // The nonce is bound to this modal: only the holder of the secret can use it.
    const binding = await step.guard(browserSecret())
    const { nonce } = await step.guard(
      api.request<SiweInitResponse>(
        '/siwe/init',
        { address },
        { auth: intent === 'link', headers: { [SIWE_HASH_HEADER]: binding.hash } },
      ),
    )
    updateAttempt({ step: 'signing' })
    stage = 'sign'
    const message = siweMessage({ pageUrl, address, chainId, nonce, now: new Date() })
    const signature = await step.guard(
      connector.request('personal_sign', [hexlify(toUtf8Bytes(message)), address]),
    )
    if (typeof signature !== 'string') throw LatchError.of('wallet_login_failed')
    await step.guard(
      completeFlow(
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
          updateAttempt({ step: 'success' })
          recordConnection(connector, address)
        },
        { [SIWE_SECRET_HEADER]: binding.secret },
      ),
    )
  } catch (e) {
    // Reached only while the attempt is the one on screen: every await above is guarded.
    const error = walletError(e, stage)
    if (error.is('allowlist_rejected')) return navigate('ALLOWLIST_REJECTION_SCREEN')
    failAttempt(connector, error)
  }
})
