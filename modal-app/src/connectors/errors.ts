/** What a failed wallet connection shows (docs/behaviour.md, "AWAITING_CONNECTION"). */
import { type ErrorCode, isLatchError, LatchError, rpcErrorCode } from '@latch/shared'

/** Which request failed: the connection (eth_requestAccounts) or the signature. */
export type WalletStage = 'connect' | 'sign'

const rpcCodeOf = (e: unknown): number | undefined => {
  if (isLatchError(e)) return e.rpcCode
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined
  return typeof code === 'number' ? code : undefined
}

const messageOf = (e: unknown): string => {
  const message = typeof e === 'object' && e !== null ? (e as { message?: unknown }).message : ''
  return typeof message === 'string' ? message : ''
}

/**
 * -32002 means the wallet already shows a prompt somewhere: a connection still waiting, a
 * request still waiting, or a locked wallet. Wallets tell them apart only in their text.
 */
function pendingVariant(message: string, stage: WalletStage): ErrorCode {
  if (/lock/i.test(message)) return 'rpc_wallet_locked'
  if (/connect|eth_requestAccounts|permission/i.test(message) || stage === 'connect') {
    return 'rpc_connection_pending'
  }
  return 'rpc_request_pending'
}

/**
 * A failure of the wallet connection as the catalogue error it shows. The wallet's own text is
 * never shown (an extension chooses it); its code picks the catalogue's. The API's errors
 * (e.g. 'User already exists for this address') and ours pass as they are.
 */
export function walletError(e: unknown, stage: WalletStage): LatchError {
  const rpc = rpcCodeOf(e)
  if (rpc === 4001) {
    return LatchError.of(stage === 'sign' ? 'signature_rejected' : 'wallet_request_rejected', {
      cause: e,
    })
  }
  if (rpc === -32002) return LatchError.of(pendingVariant(messageOf(e), stage), { cause: e })
  if (rpc !== undefined) {
    const code = rpcErrorCode(rpc)
    if (code) return LatchError.of(code, { cause: e })
  }
  // The API answers no details: the wallet's texts for it are the catalogue's.
  if (isLatchError(e) && e.code === 'linked_to_another_user') {
    return LatchError.of('wallet_linked_to_another_user', { cause: e })
  }
  if (isLatchError(e)) return e
  return LatchError.of('wallet_login_failed', { cause: e })
}
