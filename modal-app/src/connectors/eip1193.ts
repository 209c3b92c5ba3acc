/**
 * What the connectors that speak EIP-1193 to a wallet share (the host page's browser wallets,
 * injected.ts; Coinbase Wallet's SDK, coinbase-sdk.ts; WalletConnect, walletconnect.ts): the
 * connection request and the listeners of the wallet's events.
 */
import {
  DEFAULT_CHAIN_ID,
  type Hex,
  type InjectedWalletEvent,
  isSupportedChainId,
  LatchError,
} from '@latch/shared'
import { getAddress } from 'ethers/address'
import type { Connection } from './types.ts'

/** The wallet's first account, checksummed; wallet_not_connected for anything else. */
export function firstAccount(accounts: unknown): Hex {
  const first: unknown = Array.isArray(accounts) ? accounts[0] : undefined
  if (typeof first !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(first)) {
    throw LatchError.of('wallet_not_connected')
  }
  try {
    // A wallet answers lower case or checksummed; mixed case with a wrong checksum is refused.
    return getAddress(first) as Hex
  } catch {
    throw LatchError.of('wallet_not_connected')
  }
}

/**
 * Asks the wallet for its accounts (its prompt; the first request, so a wallet that opens a
 * window does so inside the visitor's click), then its chain; a chain Latch cannot verify on is
 * switched to the default one.
 */
export async function requestConnection(
  send: (method: string, params?: unknown) => Promise<unknown>,
  onAddress: (address: Hex) => void = () => {},
): Promise<Connection> {
  const address = firstAccount(await send('eth_requestAccounts'))
  onAddress(address)
  let chainId = Number.parseInt(String(await send('eth_chainId')), 16)
  if (!isSupportedChainId(chainId)) {
    await send('wallet_switchEthereumChain', [{ chainId: `0x${DEFAULT_CHAIN_ID.toString(16)}` }])
    chainId = DEFAULT_CHAIN_ID
  }
  return { address, chainId }
}

/** The handlers of a connector's wallet events: `on` subscribes (and returns the unsubscribe). */
export function walletEventListeners(): {
  on(event: InjectedWalletEvent, handler: (payload: unknown) => void): () => void
  emit(event: InjectedWalletEvent, payload: unknown): void
} {
  const listeners = new Map<InjectedWalletEvent, Set<(payload: unknown) => void>>()
  return {
    on(event, handler) {
      const set = listeners.get(event) ?? new Set()
      set.add(handler)
      listeners.set(event, set)
      return () => set.delete(handler)
    },
    emit(event, payload) {
      for (const handler of [...(listeners.get(event) ?? [])]) handler(payload)
    },
  }
}
