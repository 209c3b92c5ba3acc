/**
 * The app configuration request, started by a small script inlined in the modal page's head
 * (build.ts) while the bundle still loads; startup.ts takes its answer over. On a phone the
 * bundle takes a few hundred milliseconds to arrive and run: the configuration, which the host
 * connection waits for, arrives meanwhile.
 */
import { apiUrlFromMeta, appIdFromHash } from './origin.ts'

/**
 * What the request needs from @latch/shared. Passed in rather than imported: the shared barrel
 * would drag zod into an inline script (build.ts hands in the values at build time).
 */
export interface ClientConstants {
  apiPrefix: string
  appIdHeader: string
  clientHeader: string
  clientName: string
}

/** A request the inline script started: for which URL, and its answer. */
export interface EarlyRequest {
  url: string
  response: Promise<Response>
}

/** Where the inline script leaves its request for the bundle. */
export const EARLY_CONFIG_KEY = 'latchEarlyConfig'

/** The JSON data block the modal server embeds when it has the app's configuration (server.ts). */
export const EMBEDDED_CONFIG_ID = 'latch-app-config'

/** The query that makes the modal's page the passkey window (passkey-window.ts, main.tsx). */
export const PASSKEY_WINDOW_QUERY = 'latch-passkey-window'

/**
 * The query that makes the modal's page the window a visitor signs in again in, where the
 * browser refused the wallet credential in the cross-site frames (credential-window.ts).
 */
export const CREDENTIAL_WINDOW_QUERY = 'latch-credential-window'

/**
 * The configuration the modal server put in the page, as the answer the API would give, if it
 * is there and for this app; null otherwise. The server embeds the API's answer of at most 30 s
 * ago (the age of its frame-ancestors header), its allowed origins being the header's.
 */
export function embeddedConfig(doc: Document, appId: string): Response | null {
  const element = doc.getElementById(EMBEDDED_CONFIG_ID)
  // Another app's configuration (a `?app=` query that differs from the fragment) is not taken.
  if (!element || element.getAttribute('data-app-id') !== appId) return null
  const json = element.textContent ?? ''
  return json ? new Response(json, { headers: { 'content-type': 'application/json' } }) : null
}

type EarlyWindow = Window & { [EARLY_CONFIG_KEY]?: EarlyRequest }

/** The configuration URL of an app: the one startup.ts requests through the API client. */
export function appConfigUrl(apiUrl: string, apiPrefix: string, appId: string): string {
  return `${apiUrl.replace(/\/+$/, '')}${apiPrefix}/apps/${encodeURIComponent(appId)}`
}

/**
 * Leaves the configuration for startup: the one embedded in the page when the server had it,
 * else a request started as the API client would make it (the same URL and the
 * headers, api.ts), if the page has an app id and an API URL.
 */
export function startEarlyConfig(win: Window, client: ClientConstants): void {
  const appId = appIdFromHash(win.location.hash)
  const apiUrl = apiUrlFromMeta(win.document)
  if (!appId || !apiUrl) return
  const url = appConfigUrl(apiUrl, client.apiPrefix, appId)
  const embedded = embeddedConfig(win.document, appId)
  if (embedded) {
    ;(win as EarlyWindow)[EARLY_CONFIG_KEY] = { url, response: Promise.resolve(embedded) }
    return
  }
  const headers = { [client.appIdHeader]: appId, [client.clientHeader]: client.clientName }
  const response = win.fetch(url, { headers, credentials: 'include' })
  // Handled by whoever takes it; a page that never does must not log an unhandled rejection.
  response.catch(() => {})
  ;(win as EarlyWindow)[EARLY_CONFIG_KEY] = { url, response }
}

/**
 * The early request's answer, once, if it was made for exactly this URL; null otherwise (no
 * inline script, or a fragment or API URL changed since), and the caller asks itself.
 */
export function takeEarlyConfig(win: Window, url: string): Promise<Response> | null {
  const early = (win as EarlyWindow)[EARLY_CONFIG_KEY]
  delete (win as EarlyWindow)[EARLY_CONFIG_KEY]
  return early && early.url === url ? early.response : null
}
