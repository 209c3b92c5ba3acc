/**
 * ModalMethods.rpc: the host page's EIP-1193 provider (host-sdk/src/provider/) forwards chain
 * reads here, and the modal sends them through the API's chain proxy with the session's token
 * (docs/behaviour.md "Chain reads": the node and its key stay on the server). Only the proxy's
 * read methods pass: eth_sendRawTransaction is left out, so anything the host page broadcasts
 * for the visitor goes through the review screen (eth_sendTransaction). EIP-5792's `wallet_`
 * methods go on to calls.ts. Loaded lazily.
 */
import {
  CHAIN_RPC_METHODS,
  CLIENT_NAME,
  isSupportedChainId,
  LatchError,
  proxyRpc,
} from '@latch/shared'
import { runtime } from '../runtime.ts'
import { store } from '../store.ts'

/**
 * The chains the app's wallet may use (ServerAppConfig.chains, `apps update --chains`); before
 * the app's configuration is known (no call is served then), every chain Latch knows.
 */
export const appChains = (): readonly number[] | undefined => store.getState().app?.config.chains

/** What the provider may read: the proxy's allowlist without the broadcast. */
export const PROVIDER_READ_METHODS: readonly string[] = CHAIN_RPC_METHODS.filter(
  (m) => m !== 'eth_sendRawTransaction',
)

/** At most this many params, as the proxy's body cap would refuse anything larger anyway. */
const MAX_PARAMS = 8

export async function chainRead(chainId: unknown, method: unknown, params?: unknown) {
  // EIP-5792 comes by name the same way, so the landing carries no entry of its own for it.
  if (typeof method === 'string' && method.startsWith('wallet_')) {
    return import('./calls.ts').then((m) => m.walletCalls(method, params))
  }
  if (typeof method !== 'string' || !PROVIDER_READ_METHODS.includes(method)) {
    throw LatchError.of('rpc_unsupported_method', {
      message: `The in-app wallet does not support ${String(method).slice(0, 64)}`,
    })
  }
  if (!isSupportedChainId(chainId, appChains())) throw LatchError.of('unsupported_chain')
  const list = params === undefined ? [] : params
  if (!Array.isArray(list) || list.length > MAX_PARAMS) throw LatchError.of('rpc_invalid_params')
  const token = await runtime().session.getAccessToken()
  // The proxy serves signed-in users only (the operator's node is not an open relay).
  if (!token) throw LatchError.of('rpc_unauthorized')
  const { apiUrl, appId } = runtime()
  return proxyRpc({ apiUrl, appId, chainId, accessToken: token, clientName: CLIENT_NAME })(
    method,
    list,
  )
}
