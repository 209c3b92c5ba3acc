/**
 * The HTTP side of the contracts: the headers every API request carries and the wallet frame's
 * pages on the API origin, spelled once for the clients that build the URLs and the server that
 * routes them.
 */

/** Headers every API request carries. */
export const APP_ID_HEADER = 'latch-app-id'
export const CLIENT_HEADER = 'latch-client'
/**
 * A refresh's own id: random for each refresh, the same on every retry of it, so a retry whose
 * first answer was lost is recognised as the same request (server/src/sessions/README.md).
 */
export const REFRESH_ID_HEADER = 'latch-refresh-id'

// The wallet frame's pages on the API origin (not under /api/v1). One spelling: the modal builds
// the URLs with walletFramePath/walletExportPath, the server routes WALLET_FRAME_ROUTE and
// WALLET_EXPORT_ROUTE over its `:appId` parameter.
const framePath = (appSegment: string): string => `/apps/${appSegment}/embedded-wallets`

/** The wallet frame's page of an app: `/apps/{appId}/embedded-wallets`. */
export function walletFramePath(appId: string): string {
  return framePath(encodeURIComponent(appId))
}

/** The key export page of an app: `/apps/{appId}/embedded-wallets/export`. */
export function walletExportPath(appId: string): string {
  return `${walletFramePath(appId)}/export`
}

/** walletFramePath and walletExportPath as route patterns over an `:appId` parameter. */
// Written out, not computed: a computed constant is kept in every bundle that imports this
// module (the modal's landing among them), and shared's tests check they equal the builders'.
export const WALLET_FRAME_ROUTE = '/apps/:appId/embedded-wallets'
export const WALLET_EXPORT_ROUTE = '/apps/:appId/embedded-wallets/export'
