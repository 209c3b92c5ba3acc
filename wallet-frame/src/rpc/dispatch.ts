/**
 * The frame's `latch:wallet:rpc`: sign a message (EIP-191), sign typed data (EIP-712), fill a
 * transaction request as ethers v6 populates one, and sign a transaction (legacy with EIP-155,
 * EIP-2930, EIP-1559). This file sends each method to its part; ethers encodes and signs, and
 * the parts (call.ts, message.ts, typed-data.ts, transaction.ts, populate.ts) check every input
 * strictly first (ethers coerces some values, e.g. a bool from any truthy value, and infers what
 * it is not told), so what is signed is exactly what was asked or nothing. The key is rebuilt from its shares for
 * each signature, held by a SigningKey made for that one signature, and zeroed after; chain reads
 * go through the API's proxy. Whatever the modal asks is signed: the modal's review screens are
 * where the user decides (README.md, "What the modal can make the frame sign"). The one refusal
 * of intent: typed data bound to the account itself, as its delegate's batches are, which only
 * the frame's own batch review signs (typed-data.ts).
 */
import { type Hex, LatchError } from '@latch/shared'
import { bad, isWallet, paramList, type RpcCall, type RpcDeps } from './call.ts'
import { messageBytes, signDigest, signPersonalMessage } from './message.ts'
import { populate } from './populate.ts'
import { signableFields, signTransactionFields, txObject } from './transaction.ts'
import { signableTypedDataDigest } from './typed-data.ts'

/** Answers one `latch:wallet:rpc` call: `{ response }` or a LatchError. */
export function walletRpc(deps: RpcDeps) {
  return async (call: RpcCall): Promise<{ response: unknown }> => {
    const { method, params } = call.request
    const key = { address: call.address, accessToken: call.accessToken }
    switch (method) {
      case 'eth_sign':
      case 'personal_sign': {
        // eth_sign names the address first, personal_sign the message first; both sign EIP-191
        // (docs/behaviour.md, "Deviations").
        const list = paramList(params, method, '[address, message]', 2)
        const [address, message] = method === 'eth_sign' ? list : [list[1], list[0]]
        if (!isWallet(address, call.address, `${method}: the address`)) {
          throw bad(`${method}: the address is not this wallet's`)
        }
        const bytes = messageBytes(message)
        return { response: await deps.wallet.withKey(key, (k) => signPersonalMessage(bytes, k)) }
      }
      case 'eth_signTypedData_v4': {
        const [address, data] = paramList(params, method, '[address, typed data]', 2)
        if (!isWallet(address, call.address, `${method}: the address`)) {
          throw bad(`${method}: the address is not this wallet's`)
        }
        // Refused when bound to this account (its delegate's batches): see typed-data.ts.
        const digest = signableTypedDataDigest(data, call.address)
        return {
          response: await deps.wallet.withKey(key, (k) => signDigest(digest, k).serialized as Hex),
        }
      }
      case 'eth_populateTransactionRequest':
        return { response: await populate(deps, call, txObject(params, method, call.address)) }
      case 'eth_signTransaction': {
        const fields = signableFields(txObject(params, method, call.address))
        return {
          response: await deps.wallet.withKey(key, (k) => signTransactionFields(fields, k)),
        }
      }
      default:
        throw LatchError.of('rpc_unsupported_method', {
          message: `The in-app wallet does not support ${method.slice(0, 64)}`,
        })
    }
  }
}
