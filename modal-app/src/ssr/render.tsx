/**
 * The landing rendered on the modal server (server.ts), before the modal's JavaScript arrives:
 * the same shell and screens as the page, with React DOM's server renderer, from the same input
 * the page hydrates with (main.tsx): the app configuration embedded in the page and the host's
 * landing configuration from the frame's query (landing-query.ts), in the visitor's language:
 * the table the page's i18n-load.ts would build for it (the page loads the same before it
 * hydrates, hydrate.tsx).
 *
 * The store and the text table are the module's own, as in the page; a render runs
 * synchronously from setting them to the string, so requests cannot interleave.
 */
import type { HostAppConfig, ServerAppConfig } from '@latch/shared'
import { en, type Locale, loadLocale } from '@latch/shared/i18n'
import { renderToString } from 'react-dom/server'
import { App } from '../App.tsx'
import { initialize } from '../flow/flow.ts'
import { serveCurrentState } from '../hooks.ts'
import { setTable } from '../i18n/i18n.ts'
import { themeTokens } from '../shell/theme.ts'
import { resetStore, store } from '../store.ts'
import { Hydrated } from './hydrate.tsx'

export interface RenderedLanding {
  /** The markup inside the page's root element. */
  html: string
  /** The theme's tokens as one CSS rule: the page's layout effect sets the same values. */
  tokens: string
}

/**
 * The landing for this app, host configuration and language, or null where the page would not
 * show it first (the configuration has no login method the landing can show, and the page
 * shows an error instead).
 */
export async function renderLanding(
  server: ServerAppConfig,
  host: HostAppConfig,
  locale: Locale,
): Promise<RenderedLanding | null> {
  // As i18n-load.ts builds it (no host texts here: the query cannot carry them).
  const loaded = locale === 'en' ? null : await loadLocale(locale)
  const table = { ...en, ...loaded?.m, ...loaded?.e }
  resetStore()
  try {
    initialize(server, host)
  } catch {
    return null
  }
  const app = store.getState().app
  if (!app) return null
  setTable(table, locale)
  serveCurrentState()
  let html: string
  try {
    // The tree the page hydrates (hydrate.tsx), so that both give the same ids; its layout
    // effect, the page's `done`, does not run on the server.
    html = renderToString(
      <Hydrated done={() => {}}>
        <App />
      </Hydrated>,
    )
  } finally {
    setTable(en, 'en')
    resetStore()
  }
  const tokens = Object.entries(themeTokens(app.theme, app.accentColor, app.palette))
    .map(([name, value]) => `${name}:${value}`)
    .join(';')
  return { html, tokens: `:root{${tokens}}` }
}
