// @vitest-environment node
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type RunningServer, startServer } from '../server/src/index.ts'
import { migratedMemory } from '../server/src/testing/global-setup.ts'
import { inlineScriptHashes, type ModalServer, startModalServer } from './server.ts'
import { landingConfigFromQuery } from './src/startup/landing-query.ts'

/** The built page's shape (build.ts): a React DOM build marks its root as hydrating. */
const INDEX = (root: string) =>
  '<!doctype html><html lang="en"><head><meta name="latch-api-url" content="" />' +
  '<script type="module" crossorigin src="/assets/index-abc.js"></script>' +
  '<link rel="stylesheet" crossorigin href="/assets/index-abc.css">' +
  `</head><body>${root}<div class="latch-spinner"></div></div><!--/latch-root--></body></html>`
const CSS = '.latch-modal{color:var(--latch-fg)}'

let dir: string
let api: RunningServer
let modal: ModalServer
let appId: string

const directives = (csp: string) =>
  new Map(
    csp.split(';').map((d) => {
      const [name = '', ...values] = d.trim().split(' ')
      return [name, values] as const
    }),
  )
/** The frame's query as the host SDK writes it (host-sdk/src/landing-query.ts). */
const landing = (appearance: unknown = null, methods: unknown = null, locale: unknown = null) =>
  `&ssr=${encodeURIComponent(JSON.stringify([appearance, methods, locale]))}`
const sha = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

async function load(server: ModalServer, query: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/${query}`, {
    headers: { 'accept-language': 'en-US,en;q=0.9', ...headers },
    signal: AbortSignal.timeout(10_000),
  })
  expect(res.status).toBe(200)
  const html = await res.text()
  const csp = directives(res.headers.get('content-security-policy') ?? '')
  const rendered = /<div id="root" data-latch-hydrate data-latch-ssr="([^"]*)">/.exec(html)
  return { html, csp, rendered: rendered !== null, res }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'latch-modal-ssr-'))
  await mkdir(join(dir, 'dist/assets'), { recursive: true })
  await mkdir(join(dir, 'preact/assets'), { recursive: true })
  await writeFile(join(dir, 'dist/index.html'), INDEX('<div id="root" data-latch-hydrate>'))
  await writeFile(join(dir, 'preact/index.html'), INDEX('<div id="root">'))
  for (const build of ['dist', 'preact']) {
    await writeFile(join(dir, build, 'assets/index-abc.css'), CSS)
    await writeFile(join(dir, build, 'assets/index-abc.js'), '')
  }
  api = await startServer({
    port: 0,
    host: '127.0.0.1',
    env: { DATABASE_URL: 'memory://', LATCH_SECRET: 'modal-server-test-secret-0123456789abcdef' },
    log: () => {},
    ...migratedMemory(),
  })
  appId = (
    await api.admin.createApp({
      name: 'Rendered',
      allowedOrigins: ['https://shop.example.com'],
      loginMethods: ['email', 'wallet'],
      appearance: { showWalletLoginFirst: false },
    })
  ).id
  modal = await startModalServer({
    apiUrl: api.url,
    distDir: join(dir, 'dist'),
    sdkDir: join(dir, 'dist'),
    ssr: true,
  })
}, 60_000)

afterAll(async () => {
  await modal?.close()
  await api?.close()
  await rm(dir, { recursive: true, force: true })
})

describe('the landing rendered on the server', () => {
  test('behavior: the landing, its styles inline and the holding script, each allowed by its hash and nothing inline else', async () => {
    const page = await load(modal, `?app=${appId}${landing()}`)
    expect(page.rendered).toBe(true)
    expect(page.html).toContain('data-testid="screen-LANDING"')
    expect(page.html).toContain('data-testid="email-input"')
    expect(page.html).toContain('aria-label="Log in to Rendered"')
    // The e-mail section first and open, the wallet one after it.
    expect(page.html.indexOf('section-email-toggle')).toBeLessThan(
      page.html.indexOf('section-wallet-toggle'),
    )
    // The stylesheet inline with the theme's tokens, no longer a request away.
    expect(page.html).not.toContain('<link rel="stylesheet"')
    const style = /<style>([\s\S]*?)<\/style>/.exec(page.html)?.[1] ?? ''
    expect(style).toContain(CSS)
    expect(style).toContain('--latch-accent:#676FFF')
    expect(page.csp.get('style-src-elem')).toEqual(["'self'", sha(style)])
    // Style attributes and React's CSSOM as before; no other inline style element applies.
    expect(page.csp.get('style-src')).toEqual(["'self'", "'unsafe-inline'"])
    const scripts = inlineScriptHashes(page.html)
    expect(scripts).toHaveLength(1)
    expect(page.csp.get('script-src')).toEqual(["'self'", ...scripts])
    // The entry is fetched at once but run by the inline script after the first frame (from
    // this origin: 'self' allows it, no more).
    expect(page.html).not.toContain('<script type="module"')
    expect(page.html).toContain(
      '<link rel="modulepreload" crossorigin href="/assets/index-abc.js" data-latch-entry>',
    )
    expect(page.csp.get('frame-ancestors')).toEqual(['https://shop.example.com'])
    expect(page.res.headers.get('cache-control')).toBe('no-store')
  })

  test('behavior: the host’s theme, accent, method order and wallets first shape the rendered landing', async () => {
    const page = await load(
      modal,
      `?app=${appId}${landing(
        { theme: 'dark', accentColor: '#ff0000', showWalletLoginFirst: true },
        ['wallet', 'email'],
      )}`,
    )
    expect(page.rendered).toBe(true)
    expect(page.html.indexOf('section-wallet-toggle')).toBeLessThan(
      page.html.indexOf('section-email-toggle'),
    )
    expect(page.html).toContain('--latch-bg:#1E1E1D')
    expect(page.html).toContain('--latch-accent:#ff0000')
    // The configuration it rendered with, for the page to hydrate with.
    expect(page.html).toContain(
      `data-latch-ssr="${JSON.stringify({
        appearance: { theme: 'dark', accentColor: '#ff0000', showWalletLoginFirst: true },
        loginMethods: ['wallet', 'email'],
      }).replace(/"/g, '&quot;')}"`,
    )
    const only = await load(modal, `?app=${appId}${landing(null, ['email'])}`)
    expect(only.html).not.toContain('section-wallet')
  })

  test.each([
    ['no landing configuration', ''],
    ['no JSON', '&ssr=1'],
    ['no array of three', `&ssr=${encodeURIComponent('[null,null]')}`],
    ['a theme that is no setting', landing({ theme: 'red' })],
    ['an accent that is no colour', landing({ accentColor: '"><script>' })],
    ['a logo (more than the query carries)', landing({ logo: 'https://x.example/l.png' })],
    ['a palette', landing({ palette: { background: '#000000' } })],
    ['a repeated parameter', `${landing()}${landing()}`],
    ['an unknown method', landing(null, ['email', 'fax'])],
    ['a repeated method', landing(null, ['email', 'email'])],
    ['e-mail and SMS (the rules warn)', landing(null, ['email', 'sms'])],
    ['social without a code method (the rules refuse)', landing(null, ['google'])],
    ['a locale that is no tag', landing(null, null, '<x>')],
    ['an oversized value', landing(null, Array(80).fill('email'))],
  ])(
    'refusal: %s: the page as built, rendered client-side, its policy as without',
    async (_, query) => {
      const page = await load(modal, `?app=${appId}${query}`)
      expect(page.rendered).toBe(false)
      expect(page.html).toContain('<link rel="stylesheet"')
      expect(page.html).not.toContain('<style>')
      expect(page.csp.has('style-src-elem')).toBe(false)
      expect(inlineScriptHashes(page.html)).toEqual([])
    },
  )

  test.each([
    // The browser's languages, by preference, as the page's navigator.languages.
    ['de', 'ltr', '', 'fr-CH;q=0.5, de-DE,en;q=0.8', 'Bei Rendered anmelden', 'Senden'],
    ['ar', 'rtl', '', 'ar', 'سجّل الدخول إلى Rendered', 'إرسال'],
    // The host's locale wins over the browser's, as it does in the modal.
    ['ar', 'rtl', 'ar', 'de-DE', 'سجّل الدخول إلى Rendered', 'إرسال'],
    ['en', 'ltr', 'en', 'de-DE', 'Log in to Rendered', 'Submit'],
    // A locale Latch does not ship: English, as the modal speaks (its init warns the host).
    ['en', 'ltr', 'xx', 'de-DE', 'Log in to Rendered', 'Submit'],
    ['en', 'ltr', '', '', 'Log in to Rendered', 'Submit'],
  ])(
    'behavior: rendered in %s (%s) for the locale "%s" and Accept-Language "%s"',
    async (lang, dir, locale, accept, label, submit) => {
      const page = await load(modal, `?app=${appId}${landing(null, null, locale || null)}`, {
        'accept-language': accept,
      })
      expect(page.rendered).toBe(true)
      expect(page.html).toContain(`<html lang="${lang}" dir="${dir}">`)
      expect(page.html).toContain(`aria-label="${label}"`)
      expect(page.html).toMatch(new RegExp(`data-testid="email-submit"[^>]*>${submit}<`))
      // Kept apart from the other languages' renders.
      const again = await load(modal, `?app=${appId}${landing(null, null, locale || null)}`, {
        'accept-language': accept,
      })
      expect(again.html).toBe(page.html)
    },
  )

  test('refusal: an unknown app, a build that does not hydrate (Preact), or the switch off: client-side', async () => {
    const preact = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'preact'),
      sdkDir: join(dir, 'preact'),
      ssr: true,
    })
    const off = await startModalServer({
      apiUrl: api.url,
      distDir: join(dir, 'dist'),
      sdkDir: join(dir, 'dist'),
      ssr: false,
    })
    try {
      for (const page of [
        await load(modal, `?app=${'c'.repeat(25)}${landing()}`),
        await load(preact, `?app=${appId}${landing()}`),
        await load(off, `?app=${appId}${landing()}`),
      ]) {
        expect(page.rendered).toBe(false)
        // The page as built: its entry script runs as the page loads.
        expect(page.html).toContain(
          '<script type="module" crossorigin src="/assets/index-abc.js"></script>',
        )
        expect(page.html).not.toContain('data-latch-entry')
      }
    } finally {
      await preact.close()
      await off.close()
    }
  })

  test('behavior: renders are kept per app, settings, language and landing configuration; an operator’s change shows within the app lookup’s 2 s', async () => {
    const id = (
      await api.admin.createApp({
        name: 'Before',
        allowedOrigins: ['https://shop.example.com'],
        loginMethods: ['email'],
      })
    ).id
    const first = await load(modal, `?app=${id}${landing()}`)
    expect(first.html).toContain('aria-label="Log in to Before"')
    // The same request, the same page (the kept render).
    expect((await load(modal, `?app=${id}${landing()}`)).html).toBe(first.html)
    // Another app, another landing configuration: renders of their own.
    expect((await load(modal, `?app=${appId}${landing()}`)).html).toContain('Log in to Rendered')
    expect((await load(modal, `?app=${id}${landing({ theme: 'dark' })}`)).html).toContain(
      '--latch-bg:#1E1E1D',
    )
    const changedAt = Date.now()
    await api.admin.updateApp(id, {
      name: 'After',
      loginMethods: ['email', 'wallet'],
    })
    // The settings' version is in the key: the first page load after the lookup refreshed
    // (its 2 s, and the one stale answer it serves meanwhile) shows the change.
    await expect
      .poll(async () => (await load(modal, `?app=${id}${landing()}`)).html, {
        timeout: 10_000,
        interval: 200,
      })
      .toContain('aria-label="Log in to After"')
    expect(Date.now() - changedAt).toBeLessThan(5_000)
    const after = await load(modal, `?app=${id}${landing()}`)
    expect(after.html).toContain('section-wallet-toggle')
  })
})

describe('the landing configuration in the frame’s query', () => {
  const parse = (query: string) => landingConfigFromQuery(new URLSearchParams(query))
  test('behavior: what the rules take, as the host configuration', () => {
    expect(
      parse(landing({ theme: '#112233', accentColor: '#abc' }, ['email', 'google'], 'pt-BR')),
    ).toEqual({
      appearance: { theme: '#112233', accentColor: '#abc' },
      loginMethods: ['email', 'google'],
      locale: 'pt-BR',
    })
    expect(parse(landing())).toEqual({})
    expect(parse(landing({}))).toEqual({})
    expect(parse(landing({ showWalletLoginFirst: 'yes' }))).toBeNull()
    expect(parse(landing(null, 'email'))).toBeNull()
    expect(parse(landing(null, null, 7))).toBeNull()
    // A background between light and dark: the rules warn, the client tells the host.
    expect(parse(landing({ theme: '#777777' }))).toBeNull()
  })
})
