import type { HostAppConfig } from '@latch/shared'

/**
 * The landing's part of the page's configuration, for the frame's query, so that the modal server
 * can render the landing before the modal's JavaScript runs (modal-app/src/startup/landing-query.ts
 * reads it with the modal's rules): one JSON array of the appearance, the login methods in order and
 * the locale. The page's look, nothing personal, nothing secret (an appearance with more than the
 * theme, the accent colour and wallets first, a logo or a palette, the server refuses). Empty when
 * the configuration says more about the landing than the query carries (texts, legal links, an
 * inline modal, `inline` being its element's id): the landing then renders client-side.
 */
export function landingQuery(c: HostAppConfig = {}, inline?: string | null): string {
  return c.texts || c.legal || inline
    ? ''
    : `&ssr=${encodeURIComponent(JSON.stringify([c.appearance, c.loginMethods, c.locale]))}`
}
