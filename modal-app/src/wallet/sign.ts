/**
 * signMessage() (docs/behaviour.md, "EMBEDDED_WALLET_SIGN_REQUEST_SCREEN"): the connecting gate,
 * then EMBEDDED_WALLET_SIGN_REQUEST_SCREEN with the message; 'Sign and continue' has the wallet
 * frame sign it (EIP-191, or EIP-712 for typed data), the caller gets the signature at once, and
 * 'Success' shows for 1400 ms before the modal closes. Loaded lazily (index.ts).
 */
import {
  ERRORS,
  embeddedWallet,
  type Hex,
  isLatchError,
  LatchError,
  type SignMessageUIOptions,
  SUCCESS_CLOSE_DELAY_MS,
  signMessageOptionsSchema,
  type WalletAccount,
} from '@latch/shared'
import { deliver } from '../flow/deliver.ts'
import { type FlowHandle, navigate, onFlow, requestPending, startFlow } from '../flow/flow.ts'
import { runtime, signedOutError } from '../runtime.ts'
import { track } from '../session/analytics.ts'
import { store } from '../store.ts'
import { ensureWalletReady, walletStepFailed } from './flows.ts'
import { type WalletFrame, walletFrame } from './frame.ts'
import type { SignPayload, SignState } from './requests.ts'
import { snapshot } from './review.ts'

/**
 * The signed-in user's in-app wallet, or the error for a caller who may not use it: signed
 * out ('User is not authenticated.', or session_cookie_refused when this browser refused the
 * session's cookie), or without an in-app wallet ('Must have a wallet before signing').
 */
export function usableWallet(): WalletAccount {
  const { user } = store.getState()
  if (!user || !runtime().session.isAuthenticated()) throw signedOutError()
  const wallet = embeddedWallet(user.linkedAccounts)
  if (!wallet) throw LatchError.of('sign_without_wallet')
  return wallet
}

/**
 * In-app wallets that signed in this page. The frame is kept for the page's life with the
 * device share it holds, so for them the gate's connect (a round trip to the API for the auth
 * share) is skipped and the request's screen shows at once; the frame still checks the access
 * token with the server for every signature. Should the frame not hold the share after all,
 * the signature fails with wallet_not_on_device and the gate runs (passGate).
 */
const proven = new WeakMap<WalletFrame, Set<string>>()

/** `address` signed through `frame`: the frame holds its device share. */
export function provenOnDevice(frame: WalletFrame, address: Hex): void {
  const addresses = proven.get(frame) ?? new Set<string>()
  addresses.add(address.toLowerCase())
  proven.set(frame, addresses)
}

/**
 * The connecting gate in front of `target`, skipped for a wallet that signed through this
 * page's frame; `again` forgets that first (the frame turned out not to hold the share).
 */
export const passGate = onFlow(async function passGate(
  flow: FlowHandle,
  target: 'EMBEDDED_WALLET_SIGN_REQUEST_SCREEN' | 'EMBEDDED_WALLET_SEND_TRANSACTION_SCREEN',
  again = false,
): Promise<void> {
  const address = usableWallet().address.toLowerCase()
  // A frame that fails to mount is the gate's to show.
  const frame = await flow.guard(walletFrame().catch(() => null))
  const addresses = frame ? proven.get(frame) : undefined
  if (again) addresses?.delete(address)
  if (addresses?.has(address)) navigate(target)
  else await ensureWalletReady(target)
})

/** The session's access token for a call to the frame; signed out meanwhile is an error. */
export async function walletAccessToken(): Promise<string> {
  const token = await runtime().session.getAccessToken()
  if (!token) throw signedOutError()
  return token
}

function checkPayload(payload: SignPayload): void {
  if (payload.kind === 'message') {
    if (typeof payload.message !== 'string' || payload.message.length === 0) {
      throw LatchError.of('invalid_sign_message')
    }
    return
  }
  const data = payload.typedData
  const ok =
    (typeof data === 'string' && data.length > 0) ||
    (typeof data === 'object' && data !== null && !Array.isArray(data))
  if (!ok) {
    throw LatchError.of('invalid_request_arguments', {
      message: 'Typed data must be an EIP-712 object or its JSON',
    })
  }
}

/**
 * The sign flow, for a message or typed data (the EIP-1193 provider's eth_signTypedData_v4
 * comes through here too). Bad input and a caller without a wallet reject before anything
 * opens; closing the modal before signing rejects with 'Signature rejected' (code 4001).
 * @example signFlow({ kind: 'message', message: 'Hello' }, { title: 'Sign in to the game' })
 */
export function signFlow(payload: SignPayload, options: SignMessageUIOptions = {}): Promise<Hex> {
  try {
    if (!store.getState().app) throw LatchError.of('something_went_wrong')
    // Another request on screen keeps it: this one is refused, that one is unchanged.
    if (requestPending({ kind: 'sign' })) throw LatchError.of('rpc_request_pending')
    checkPayload(payload)
    if (!signMessageOptionsSchema.safeParse(options).success) {
      throw LatchError.of('invalid_request_arguments', { message: 'Invalid sign options' })
    }
    usableWallet()
  } catch (e) {
    return Promise.reject(e)
  }
  const { promise } = startFlow<Hex>({ kind: 'sign' }, 'EMBEDDED_WALLET_CONNECTING_SCREEN')
  // Frozen copies: the screen shows them and the confirm click signs that very payload.
  store.setState({
    signRequest: {
      payload: snapshot(payload),
      options: snapshot(options),
      status: 'idle',
      error: null,
    },
  })
  track('sign_message_started')
  void passGate('EMBEDDED_WALLET_SIGN_REQUEST_SCREEN')
  return promise
}

function setSign(patch: Partial<SignState>): void {
  const current = store.getState().signRequest
  if (current) store.setState({ signRequest: { ...current, ...patch } })
}

/** The frame's request for a payload (`latch:wallet:rpc`, docs/behaviour.md). */
function rpcRequest(payload: SignPayload, address: Hex): { method: string; params: unknown[] } {
  return payload.kind === 'message'
    ? { method: 'personal_sign', params: [payload.message, address] }
    : { method: 'eth_signTypedData_v4', params: [address, payload.typedData] }
}

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/

/**
 * 'Sign and continue' on `shown`, the frozen payload the screen rendered: the frame signs it
 * (nothing is re-read at click time; a payload other than the request's does nothing); the
 * caller's promise resolves with the signature now (nothing it needs waits for the success
 * screen), and the modal closes after the pause. A failure shows 'An error has occurred,
 * please try again.' and the button stays for a retry.
 */
export const confirmSign = onFlow(async function confirmSign(
  flow: FlowHandle,
  shown: SignPayload,
): Promise<void> {
  const request = store.getState().signRequest
  if (!request || request.payload !== shown) return
  if (request.status === 'signing' || request.status === 'success') return
  setSign({ status: 'signing', error: null })
  flow.failure = null
  let signature: Hex
  try {
    signature = await flow.guard(sign(shown))
  } catch (e) {
    // The share is not in the frame after all: through the gate (recovery), then back here.
    if (isLatchError(e) && e.is('wallet_not_on_device')) {
      setSign({ status: 'idle' })
      void passGate('EMBEDDED_WALLET_SIGN_REQUEST_SCREEN', true)
      return
    }
    console.error('Latch: the in-app wallet could not sign', e)
    // Closing now is not the visitor declining: the caller hears the failure, not a rejection.
    setSign({ status: 'error', error: walletStepFailed(flow, e, ERRORS.sign_failed.message) })
    return
  }
  track('sign_message_completed')
  setSign({ status: 'success' })
  // Delivered now; closing during the success pause changes nothing for the caller.
  deliver(flow, signature, { pauseMs: SUCCESS_CLOSE_DELAY_MS, now: true })
})

/**
 * The frame signs `shown` with the user's wallet; the wallet is then known to be on this
 * device, even should the flow have changed meanwhile.
 */
async function sign(shown: SignPayload): Promise<Hex> {
  const wallet = usableWallet()
  const accessToken = await walletAccessToken()
  const frame = await walletFrame()
  const { response } = await frame['latch:wallet:rpc']({
    address: wallet.address,
    accessToken,
    request: rpcRequest(shown, wallet.address),
  })
  if (typeof response !== 'string' || !SIGNATURE.test(response)) {
    throw LatchError.of('sign_failed', { message: 'The wallet answered no signature' })
  }
  provenOnDevice(frame, wallet.address)
  return response as Hex
}
