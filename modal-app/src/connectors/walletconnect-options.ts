/**
 * The options WalletConnect's provider is built with, in the connector frame (frame/main.ts)
 * from the app's project id and the relay its page names. Apart from walletconnect.ts so the
 * frame's bundle does not carry the modal's side.
 */
import { CHAINS, DEFAULT_CHAIN_ID } from '@latch/shared'
import type { WalletConnectSettings } from './walletconnect-config.ts'

/** What the provider is built with: the settings, our own UI, no telemetry. */
export interface ProviderOptions {
  projectId: string
  relayUrl: string
  showQrModal: false
  telemetryEnabled: false
  optionalChains: [number, ...number[]]
  rpcMap: Record<string, string>
  metadata: { name: string; description: string; url: string; icons: string[] }
}

/**
 * The provider's options. Every supported chain is optional (the wallet picks the one it is
 * on; the message then names it). rpcMap: the public nodes of shared/src/chains.ts, so the
 * provider never falls back to WalletConnect's RPC with the project id. The connector sends
 * only wallet requests through it (accounts, signatures); the modal's chain reads go through
 * the API's chain proxy (server README, "Chain reads"), whose node keys stay on the server.
 */
export function providerOptions(
  settings: WalletConnectSettings,
  metadata: { name: string; url: string },
): ProviderOptions {
  const ids = CHAINS.map((c) => c.id).filter((id) => id !== DEFAULT_CHAIN_ID)
  return {
    projectId: settings.projectId,
    relayUrl: settings.relayUrl,
    showQrModal: false,
    telemetryEnabled: false,
    optionalChains: [DEFAULT_CHAIN_ID, ...ids],
    rpcMap: Object.fromEntries(CHAINS.map((c) => [String(c.id), c.rpcUrl])),
    metadata: { name: metadata.name || 'Latch', description: '', url: metadata.url, icons: [] },
  }
}
