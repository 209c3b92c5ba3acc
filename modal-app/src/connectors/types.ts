/**
 * The connector mechanism: one shape for every way of reaching an external wallet. Browser
 * wallets in the host page are `injected` (injected.ts); WalletConnect, Coinbase Wallet's SDK
 * and Phantom's deep links join on the same shape.
 */
import type { Hex, InjectedWalletEvent } from '@latch/shared'

export type ConnectorType = 'injected' | 'wallet_connect' | 'coinbase_wallet' | 'phantom'

export interface ConnectorInfo {
  /** Unique among the connectors on screen (an injected wallet: its EIP-6963 uuid). */
  id: string
  name: string
  /** A data:image URI, or '' for none. */
  icon: string
  type: ConnectorType
  /** Which wallet this is, as the server records it (e.g. 'metamask'); 'unknown' when unsure. */
  walletClientType: string
  /**
   * Its connect() takes a connection started by a click inside its own connector frame
   * (Coinbase Wallet): choosing it, and Retry, show the interstitial that frame's button is on.
   */
  needsFrameClick?: boolean
}

/** disconnected → connecting → connected (the wallet's connection as the screen shows it). */
export type ConnectionStatus = 'disconnected' | 'connecting' | 'connected'

export interface Connection {
  /** EIP-55. */
  address: Hex
  chainId: number
}

export interface Connector extends ConnectorInfo {
  readonly status: ConnectionStatus
  /** Asks the wallet for its account (the wallet's own prompt) and the chain it is on. */
  connect(): Promise<Connection>
  /** An EIP-1193 request; refused with 'Connector not initialized' before connect(). */
  request(method: string, params?: unknown): Promise<unknown>
  /** The wallet's events; answers the unsubscribe. */
  on(event: InjectedWalletEvent, handler: (payload: unknown) => void): () => void
}
