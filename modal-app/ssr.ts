/**
 * The modal server's side of the server-rendered landing (server.ts): decides whether a page
 * request gets it, renders it (src/ssr/render.tsx, React DOM's server renderer, loaded once),
 * keeps the renders, and writes them into the page with their styles inline and the script that
 * holds the visitor's actions until hydration (src/ssr/before-hydration.ts). That script also
 * starts the page's JavaScript, after the first frame: the entry script is left as a preload.
 *
 * A page gets the landing only when all of these hold, else the page as built (the landing
 * renders client-side as it always did):
 * - the build hydrates (React DOM: build.ts marks the root element `data-latch-hydrate`);
 * - the frame's query carries the host's landing configuration and the rules take it
 *   (src/startup/landing-query.ts);
 * - the app is known (its configuration is embedded in the page, the one the page hydrates with).
 *
 * The landing is in the visitor's language, picked as the page picks it (i18n-load.ts) from the
 * host's locale, else from Accept-Language (the browser's languages, which the page reads as
 * `navigator.languages`); the page's `lang` and `dir` say it, and the page hydrates in it.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join, normalize, sep } from 'node:path'
import type { HostAppConfig, ServerAppConfig } from '@latch/shared'
import { isRtl, type Locale, pickLocale } from '@latch/shared/i18n'
import {
  BEFORE_HYDRATION_SCRIPT,
  ENTRY_ATTR,
  SERVER_RENDERED_ATTR,
} from './src/ssr/before-hydration.ts'
import { acceptedLanguages, landingConfigFromQuery } from './src/startup/landing-query.ts'

/** The root element of a build whose page hydrates, up to the marker after it (index.html). */
const HYDRATING_ROOT = /<div id="root" data-latch-hydrate>[\s\S]*?<!--\/latch-root-->/
/** The page's language as built (index.html): a rendered page says the one it is in. */
const HTML_LANG = /<html lang="en">/
/** The build's stylesheet link (Vite's), inlined in a rendered page. */
const STYLESHEET = /<link rel="stylesheet"[^>]*href="(\/assets\/[^"]+\.css)"[^>]*>/
/**
 * The build's entry script (Vite's, in the head). A module script runs once the page is parsed,
 * before its first frame, so React's start and the hydration would hold the rendered landing off
 * the screen: in a rendered page it becomes a preload that the inline script starts after that
 * frame.
 */
const ENTRY_SCRIPT = /<script type="module"([^>]*?) src="(\/assets\/[^"]+\.js)"([^>]*)><\/script>/
/** Renders kept, the oldest dropped first: per app, settings, language and landing config. */
const RENDER_CACHE_MAX = 200

export interface LandingRequest {
  distDir: string
  appId: string
  /** The app's public configuration as the page embeds it. */
  config: Record<string, unknown>
  query: URLSearchParams
  acceptLanguage: string | undefined
}

export interface LandingRenderer {
  /** The page with the landing in it, and the CSP hashes of its inline styles; null: not here. */
  page(
    index: string,
    request: LandingRequest,
  ): Promise<{ html: string; styleHashes: string[] } | null>
}

interface Rendered {
  root: string
  style: string
  styleHash: string
}

const escapeAttr = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64')

export function createLandingRenderer(log: (line: string) => void): LandingRenderer {
  // Loaded at the first page that needs it: React DOM's server renderer and the modal's screens.
  let renderer: Promise<typeof import('./src/ssr/render.tsx')> | null = null
  const cache = new Map<string, Promise<Rendered | null>>()
  const stylesheets = new Map<string, Promise<string | null>>()
  const stylesheet = (distDir: string, href: string) => {
    const path = normalize(join(distDir, href))
    if (!path.startsWith(distDir + sep)) return Promise.resolve(null)
    // Hashed names: a rebuild's stylesheet has another name.
    let css = stylesheets.get(path)
    if (!css) {
      css = readFile(path, 'utf8').catch(() => null)
      if (stylesheets.size > 16) stylesheets.clear()
      stylesheets.set(path, css)
    }
    return css
  }
  const render = async (
    server: ServerAppConfig,
    host: HostAppConfig,
    locale: Locale,
    css: string,
  ): Promise<Rendered | null> => {
    renderer ??= import('./src/ssr/render.tsx')
    const landing = await (await renderer).renderLanding(server, host, locale)
    if (!landing) return null
    // `</` cannot end the element: the build's CSS and the tokens (colours checked by the rules).
    const style = `${css}${landing.tokens}`.replace(/<\//g, '<\\/')
    return { root: landing.html, style, styleHash: `'sha256-${sha256(style)}'` }
  }
  return {
    async page(index, request) {
      const root = HYDRATING_ROOT.exec(index)
      const link = STYLESHEET.exec(index)
      const host = landingConfigFromQuery(request.query)
      if (!root || !link?.[1] || !host || !HTML_LANG.test(index)) return null
      const locale = pickLocale(
        host.locale ? [host.locale] : acceptedLanguages(request.acceptLanguage),
      )
      const css = await stylesheet(request.distDir, link[1])
      if (css === null) return null
      // The app's settings as served (their digest is their version: a change the lookup
      // brings, within its 2 s, is a new key), the language, the landing config.
      const key = [
        request.appId,
        sha256(JSON.stringify(request.config)),
        locale,
        JSON.stringify(host),
        link[1],
      ].join('\n')
      let rendered = cache.get(key)
      if (rendered) {
        // Most recently used last.
        cache.delete(key)
      } else {
        rendered = render(request.config as unknown as ServerAppConfig, host, locale, css).catch(
          (e) => {
            log(`modal server: the landing of app ${request.appId} did not render: ${String(e)}`)
            cache.delete(key)
            return null
          },
        )
        if (cache.size >= RENDER_CACHE_MAX) {
          const oldest = cache.keys().next().value
          if (oldest !== undefined) cache.delete(oldest)
        }
      }
      cache.set(key, rendered)
      const done = await rendered
      if (!done) return null
      const html = index
        .replace(HTML_LANG, () => `<html lang="${locale}" dir="${isRtl(locale) ? 'rtl' : 'ltr'}">`)
        .replace(STYLESHEET, () => `<style>${done.style}</style>`)
        // Fetched at once as before; run by the inline script once the landing is on screen.
        .replace(
          ENTRY_SCRIPT,
          (_, before: string, src: string, after: string) =>
            `<link rel="modulepreload"${before} href="${src}"${after} ${ENTRY_ATTR}>`,
        )
        .replace(
          HYDRATING_ROOT,
          () =>
            // The host configuration it was rendered with: the page hydrates with the same.
            `<div id="root" data-latch-hydrate ${SERVER_RENDERED_ATTR}="${escapeAttr(JSON.stringify(host))}">${done.root}</div>` +
            `<script>${BEFORE_HYDRATION_SCRIPT}</script>`,
        )
      return { html, styleHashes: [done.styleHash] }
    },
  }
}
