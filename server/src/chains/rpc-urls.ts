/**
 * Which node serves a chain for an app: the app's own (`apps update --rpc-url`), else the
 * operator's (LATCH_RPC_URL_<chainId>), else the public default of shared/src/chains.ts.
 */
import { getChain, LatchError } from '@latch/shared'
import type { AppRecord } from '../apps/service.ts'
import type { Config } from '../config.ts'

export function rpcUrlFor(
  config: Pick<Config, 'rpcUrls'>,
  app: Pick<AppRecord, 'rpcUrls'> | null,
  chainId: number,
): string {
  const chain = getChain(chainId)
  if (!chain) throw LatchError.of('unsupported_chain')
  const key = String(chainId)
  return app?.rpcUrls[key] ?? config.rpcUrls[key] ?? chain.rpcUrl
}
