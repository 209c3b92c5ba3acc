/**
 * `latch csp`: the printed policy, set on a real host page in Chromium, lets a visitor open the
 * modal; the same policy without any one of the printed lines does not.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FRAME_CSS, HOST_ELEMENT_IDS } from '@latch/shared'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildFrontendOnce } from '../../../e2e/src/build.ts'
import { freePort, launchChromium } from '../../../e2e/src/harness.ts'
import { latchScript } from '../../../e2e/src/host-server.ts'
import { latchCli as cli } from '../testing/cli.ts'
import { migratedFolder, migratedMemory } from '../testing/global-setup.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { frameStyleHash, hostPageCsp } from './csp.ts'
import { type RunningLatch, serveLatch } from './serve.ts'

describe('latch csp', () => {
  // The run's migrated database in a folder, for the commands that read an app: the policy's
  // pages are tested here, not a database's creation.
  let dataDir = ''
  beforeAll(async () => {
    dataDir = await migratedFolder(mkdtempSync(join(tmpdir(), 'latch-csp-')))
  })
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  test('behavior: prints the three directives and a whole header; the style hash is that of the SDK’s <style>', async () => {
    const hash = `'sha256-${createHash('sha256').update(FRAME_CSS).digest('base64')}'`
    expect(frameStyleHash()).toBe(hash)
    const { code, out, err } = await cli(
      { DATABASE_URL: 'memory://' },
      'csp',
      '--modal-origin',
      'https://auth.example.com',
    )
    expect({ code, err }).toEqual({ code: 0, err: '' })
    expect(out).toBe(
      `${[
        "# What a host page's Content-Security-Policy needs for Latch (modal https://auth.example.com).",
        '# Add these sources to the directives of your own policy:',
        'script-src https://auth.example.com',
        'frame-src https://auth.example.com',
        `style-src ${hash}`,
        '# Or, for a page that loads nothing else from elsewhere, the whole header:',
        `Content-Security-Policy: default-src 'self'; script-src 'self' https://auth.example.com; frame-src https://auth.example.com; style-src 'self' ${hash}; object-src 'none'; base-uri 'self'`,
      ].join('\n')}\n`,
    )
    // LATCH_MODAL_ORIGIN, as serve is configured, when no flag is given; --json for scripts.
    const json = await cli(
      { DATABASE_URL: 'memory://', LATCH_MODAL_ORIGIN: 'https://auth.example.org' },
      'csp',
      '--json',
    )
    expect(json.code).toBe(0)
    expect(JSON.parse(json.out)).toMatchObject({
      modalOrigin: 'https://auth.example.org',
      directives: { 'script-src': ['https://auth.example.org'], 'style-src': [hash] },
      pages: [],
    })
  })

  test('behavior: the SDK build injects that very text, so the hash matches what browsers see', async () => {
    const dirs = await buildFrontendOnce()
    for (const file of ['sdk.js', 'latch.js']) {
      const built = readFileSync(join(dirs.sdk, file), 'utf8')
      expect(built).toContain(FRAME_CSS)
    }
  }, 300_000)

  test('refusal: no modal origin, a bad one, or an unknown app', async () => {
    const none = await cli({ DATABASE_URL: 'memory://', LATCH_MODAL_ORIGIN: '' }, 'csp')
    expect(none.code).toBe(2)
    expect(none.err).toContain("csp needs the modal's public origin")
    for (const bad of ['https://*.example.com', 'https://auth.example.com/path', 'ftp://x.y']) {
      const res = await cli({ DATABASE_URL: 'memory://' }, 'csp', '--modal-origin', bad)
      expect(res.code).toBe(2)
      expect(res.err).toMatch(/^--modal-origin: '/)
      expect(res.out).toBe('')
    }
    const unknown = await cli(
      { LATCH_DATA_DIR: dataDir, LATCH_SECRET: TEST_SECRET, DATABASE_URL: '' },
      'csp',
      '--app',
      'a'.repeat(25),
      '--modal-origin',
      'https://auth.example.com',
    )
    expect(unknown.code).toBe(1)
    expect(unknown.err).toContain(`No app with id '${'a'.repeat(25)}'`)
  })

  test('behavior: with --app, names the pages the policy is for (the app’s registered origins)', async () => {
    const env = { LATCH_DATA_DIR: dataDir, LATCH_SECRET: TEST_SECRET, DATABASE_URL: '' }
    const created = await cli(
      env,
      'apps',
      'create',
      '--name',
      'Shop',
      '--origin',
      'https://www.example.com',
      '--json',
    )
    expect(created.code).toBe(0)
    const { id } = JSON.parse(created.out) as { id: string }
    const res = await cli(env, 'csp', '--app', id, '--modal-origin', 'https://auth.example.com')
    expect(res.code).toBe(0)
    expect(res.out.split('\n')[0]).toBe(
      "# What a host page's Content-Security-Policy needs for Latch (modal https://auth.example.com), on https://www.example.com.",
    )
  })
})

describe('the printed policy on a real host page', () => {
  let latch: RunningLatch
  let browser: Browser
  let page: Server
  let hostUrl = ''
  let appId = ''
  let policy: ReturnType<typeof hostPageCsp>
  /** Path -> the Content-Security-Policy that page is served with. */
  const policies = new Map<string, string>()

  beforeAll(async () => {
    const dirs = await buildFrontendOnce()
    const modalPort = await freePort()
    latch = await serveLatch({
      ...migratedMemory(),
      env: {
        DATABASE_URL: 'memory://',
        LATCH_SECRET: TEST_SECRET,
        LATCH_API_PORT: '0',
        LATCH_MODAL_PORT: String(modalPort),
        LATCH_MODAL_DIR: dirs.modal,
        LATCH_SDK_DIR: dirs.sdk,
        LATCH_WALLET_FRAME_DIR: dirs.walletFrame,
      },
      migrate: true,
      log: () => {},
    })
    const modalUrl = latch.modal?.url ?? ''
    page = createServer((req, res) => {
      const csp = policies.get(new URL(req.url ?? '/', 'http://x').pathname)
      if (csp === undefined) {
        res.writeHead(404).end()
        return
      }
      res.writeHead(200, { 'content-type': 'text/html', 'content-security-policy': csp })
      res.end(
        `<!doctype html><html><head><title>Host</title></head><body><button ${HOST_ELEMENT_IDS.loginAttribute}>Sign in</button>${latchScript(modalUrl, appId, false)}</body></html>`,
      )
    })
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve))
    hostUrl = `http://localhost:${(page.address() as AddressInfo).port}`
    const app = await latch.api?.admin.createApp({
      name: 'CSP',
      allowedOrigins: [hostUrl],
      loginMethods: ['email'],
    })
    appId = app?.id ?? ''
    // What `latch csp --app` prints for this app, from the CLI's own code.
    policy = hostPageCsp(new URL(modalUrl).origin)
    const whole = policy.example
    const without = (directive: string, source: string) =>
      whole
        .split('; ')
        .map((d) => (d.startsWith(`${directive} `) ? d.replace(` ${source}`, '') : d))
        .join('; ')
    policies.set('/printed', whole)
    policies.set('/no-script', without('script-src', policy.modalOrigin))
    policies.set('/no-frame', without('frame-src', policy.modalOrigin).replace('frame-src; ', ''))
    policies.set('/no-style', without('style-src', frameStyleHash()))
    browser = await launchChromium()
  }, 300_000)

  afterAll(async () => {
    await browser?.close()
    if (page) await new Promise((resolve) => page.close(resolve))
    await latch?.close()
  })

  /**
   * Loads a page, clicks Sign in, and reports what the browser refused and what showed. With
   * `refusal` (the start of the violation a refusal test expects), the page is first waited on
   * until the browser reports that violation: what it refused then never loads, so the checks
   * after it look once instead of waiting for something that cannot come. Without the violation
   * (the policy let it through), they wait as for a page that works, and the test's assertions
   * on the violations fail.
   */
  async function visit(path: string, refusal?: string) {
    const patienceMs = 20_000
    const context = await browser.newContext()
    try {
      const tab = await context.newPage()
      await tab.addInitScript(() => {
        const seen: string[] = []
        ;(window as unknown as { violations: string[] }).violations = seen
        document.addEventListener('securitypolicyviolation', (e) => {
          seen.push(`${e.effectiveDirective} ${e.blockedURI}`)
        })
      })
      // Waits for the load event: the SDK's classic script has run, or was refused, by then.
      await tab.goto(`${hostUrl}${path}`)
      const refused =
        refusal !== undefined &&
        (await tab
          .waitForFunction(
            (start) =>
              (window as unknown as { violations: string[] }).violations.some((v) =>
                v.startsWith(start),
              ),
            refusal,
            { timeout: patienceMs },
          )
          .then(() => true)
          .catch(() => false))
      const sdk = refused
        ? await tab.evaluate(() => 'latch' in window)
        : await tab
            .waitForFunction(() => 'latch' in window, undefined, { timeout: patienceMs })
            .then(() => true)
            .catch(() => false)
      let emailField = false
      let dialogOpen = false
      let frameBorder = ''
      if (sdk) {
        await tab.getByRole('button', { name: 'Sign in' }).click()
        const dialog = `[data-testid="${HOST_ELEMENT_IDS.dialog}"][open]`
        const email = tab
          .frameLocator(`[data-testid="${HOST_ELEMENT_IDS.frame}"]`)
          .getByTestId('email-input')
        if (refused) {
          dialogOpen = (await tab.locator(dialog).count()) > 0
          emailField = (await email.count()) > 0
        } else {
          dialogOpen = await tab
            .waitForSelector(dialog, { timeout: patienceMs })
            .then(() => true)
            .catch(() => false)
          emailField = await email
            .waitFor({ timeout: patienceMs })
            .then(() => true)
            .catch(() => false)
        }
        // The SDK's style takes the frame's border off (a browser's own default is 2px inset).
        frameBorder = await tab
          .locator(`[data-testid="${HOST_ELEMENT_IDS.frame}"]`)
          .evaluate((f) => getComputedStyle(f).borderTopWidth)
          .catch(() => '')
      }
      const violations = await tab.evaluate(
        () => (window as unknown as { violations: string[] }).violations,
      )
      return { sdk, dialogOpen, emailField, frameBorder, violations }
    } finally {
      await context.close()
    }
  }

  test('behavior: under the printed policy the visitor opens the modal: sdk.js runs, the SDK’s style applies, the modal frame loads', async () => {
    const seen = await visit('/printed')
    expect(seen).toEqual({
      sdk: true,
      dialogOpen: true,
      emailField: true,
      frameBorder: '0px',
      violations: [],
    })
  }, 90_000)

  test('refusal: without the script-src line, sdk.js is refused and nothing of Latch runs', async () => {
    const seen = await visit('/no-script', `script-src-elem ${policy.modalOrigin}/sdk.js`)
    expect(seen.sdk).toBe(false)
    expect(seen.violations).toContain(`script-src-elem ${policy.modalOrigin}/sdk.js`)
  }, 90_000)

  test('refusal: without the frame-src line, the modal frame is refused', async () => {
    const seen = await visit('/no-frame', 'frame-src ')
    expect(seen.sdk).toBe(true)
    expect(seen.emailField).toBe(false)
    expect(seen.violations.some((v) => v.startsWith('frame-src '))).toBe(true)
  }, 90_000)

  test('refusal: without the style hash, the SDK’s style is refused and the frame keeps the browser’s border', async () => {
    const seen = await visit('/no-style')
    expect(seen.violations).toContain('style-src-elem inline')
    expect(seen.frameBorder).toBe('2px')
  }, 90_000)
})
