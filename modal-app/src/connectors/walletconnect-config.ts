/**
 * Where the WalletConnect connector finds its settings, without loading WalletConnect: the
 * app's Cloud project id (the host's configuration, else the server's) and the relay the modal
 * server names in the page (`<meta name="latch-walletconnect-relay-url">`, which the server's
 * CSP admits in connect-src). Without a project id the option says so instead of failing late.
 */
import type { ServerAppConfig } from '@latch/shared'

/** WalletConnect's public relay: what the modal uses unless the modal server names another. */
export const DEFAULT_WALLETCONNECT_RELAY_URL = 'wss://relay.walletconnect.org'
export const WALLETCONNECT_RELAY_META = 'latch-walletconnect-relay-url'

/** Cloud project ids are 32 hex characters; anything else that is not a plain token is refused. */
const PROJECT_ID = /^[A-Za-z0-9_-]{1,128}$/

export interface WalletConnectSettings {
  projectId: string
  relayUrl: string
}

/** The project id, or null when the app has none (or one no relay would accept). */
export function walletConnectProjectId(
  config: Pick<ServerAppConfig, 'walletConnectCloudProjectId'> | null | undefined,
): string | null {
  const id = config?.walletConnectCloudProjectId?.trim() ?? ''
  return PROJECT_ID.test(id) ? id : null
}

/**
 * The relay of this page: a ws: or wss: URL without credentials from the meta tag, else the
 * public relay. Anything else falls back too: the CSP would refuse it anyway.
 */
export function walletConnectRelayUrl(doc: Document | null = globalThis.document ?? null): string {
  const raw = doc
    ?.querySelector(`meta[name="${WALLETCONNECT_RELAY_META}"]`)
    ?.getAttribute('content')
  if (!raw || !URL.canParse(raw)) return DEFAULT_WALLETCONNECT_RELAY_URL
  const url = new URL(raw)
  if ((url.protocol !== 'wss:' && url.protocol !== 'ws:') || url.username || url.password) {
    return DEFAULT_WALLETCONNECT_RELAY_URL
  }
  return url.href.replace(/\/+$/, '')
}

/** Both settings, or null when WalletConnect is not configured for this app. */
export function walletConnectSettings(
  config: Pick<ServerAppConfig, 'walletConnectCloudProjectId'> | null | undefined,
  doc?: Document | null,
): WalletConnectSettings | null {
  const projectId = walletConnectProjectId(config)
  return projectId ? { projectId, relayUrl: walletConnectRelayUrl(doc) } : null
}
