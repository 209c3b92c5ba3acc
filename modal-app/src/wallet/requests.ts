/**
 * The state of the two wallet requests a host makes of the signed-in user's in-app wallet:
 * a signature (signMessage(), and typed data for the EIP-1193 provider) and a transaction
 * (sendTransaction()). Types only: store.ts holds them, sign.ts and send.ts move them.
 */
import type {
  Hex,
  SignMessageUIOptions,
  TransactionReceipt,
  TransactionUIOptions,
} from '@latch/shared'

/** What is to be signed: a message (EIP-191) or EIP-712 typed data (an object or its JSON). */
export type SignPayload =
  | { kind: 'message'; message: string }
  | { kind: 'typedData'; typedData: Record<string, unknown> | string }

export interface SignState {
  payload: SignPayload
  options: SignMessageUIOptions
  /** idle: on screen, waiting for 'Sign and continue'; success: 'Success' for 1400 ms. */
  status: 'idle' | 'signing' | 'success' | 'error'
  error: string | null
}

/** A request as the wallet frame takes it: every quantity a hex string (crosses as is). */
export interface HexTransactionRequest {
  to?: Hex
  from?: Hex
  data?: Hex
  value?: Hex
  gasLimit?: Hex
  gasPrice?: Hex
  maxPriorityFeePerGas?: Hex
  maxFeePerGas?: Hex
  nonce?: number
  type?: number
  chainId: number
}

/** The frame's populated request (eth_populateTransactionRequest): complete, quantities hex. */
export interface PopulatedRequest extends HexTransactionRequest {
  from: Hex
  value: Hex
  gasLimit: Hex
  nonce: number
  type: number
}

export interface TransactionState {
  request: HexTransactionRequest
  options: TransactionUIOptions
  /**
   * idle: not prepared yet; preparing: populate, balance and price under way; ready: may be
   * submitted; failed: the preparation failed (prepareError); submitting: signing, sending and
   * waiting for the receipt (closing blocked); complete: the receipt is in.
   */
  status: 'idle' | 'preparing' | 'ready' | 'failed' | 'submitting' | 'complete'
  prepared: PopulatedRequest | null
  /** The wallet's balance in wei, null when it could not be read. */
  balance: bigint | null
  /** The chain's native coin in US dollars, null without a price source (503). */
  usdPrice: number | null
  prepareError: string | null
  submitError: string | null
  receipt: TransactionReceipt | null
}
