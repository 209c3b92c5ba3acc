/**
 * The wallet frame, served by the API origin at /apps/{appId}/embedded-wallets: the only code
 * that ever holds key material (README.md). main.ts is the page; these modules are its parts,
 * exported for the server's tests, which drive the frame's own code against the real API.
 */
export * from './keys.ts'
export * from './passcode.ts'
export * from './passkey.ts'
export type { KeyHolder, RpcCall, RpcDeps } from './rpc/call.ts'
export { checkedAddress } from './rpc/call.ts'
export { walletRpc } from './rpc/dispatch.ts'
export { signPersonalMessage } from './rpc/message.ts'
export type { PopulatedTransaction } from './rpc/populate.ts'
export type { TxFields } from './rpc/transaction.ts'
export { signTransactionFields } from './rpc/transaction.ts'
export type { TypedData } from './rpc/typed-data.ts'
export { typedDataDigest } from './rpc/typed-data.ts'
export * from './wallet.ts'
