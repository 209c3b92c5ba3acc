/**
 * The Chromium every browser spec runs in: Playwright's own `--disable-features` list survives
 * the one the harness passes (Chromium reads only the last such switch), the address bar's
 * popup and the background work are off, and what the specs rely on stays: a cross-site frame
 * runs in a renderer of its own (site isolation) and gets no storage (Chromium's policy).
 * Chromium tells its command line over the DevTools protocol only with `--enable-automation`,
 * which these browsers get and no spec's does.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { chromium } from 'playwright-core'
import { afterEach, expect, test } from 'vitest'
import {
  CHROMIUM_ARGS,
  CHROMIUM_BACKGROUND_FEATURES_OFF,
  CHROMIUM_PATH,
  CHROMIUM_UI_FEATURES_OFF,
  launchChromium,
  PLAYWRIGHT_FEATURES_OFF,
  withTimeout,
} from './harness.ts'

let browser: Browser | undefined
let server: Server | undefined

afterEach(async () => {
  await browser?.close()
  browser = undefined
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  server = undefined
})

/** The browser's command line (Browser.getBrowserCommandLine). */
async function commandLine(launched: Browser): Promise<string[]> {
  const session = await launched.newBrowserCDPSession()
  const { arguments: args } = (await session.send('Browser.getBrowserCommandLine')) as {
    arguments: string[]
  }
  return args
}

/** The features the browser runs without: those of the last `--disable-features` it was given. */
async function featuresOff(launched: Browser): Promise<string[]> {
  const last = (await commandLine(launched))
    .filter((arg) => arg.startsWith('--disable-features='))
    .at(-1)
  return (last ?? '').slice('--disable-features='.length).split(',').filter(Boolean)
}

test("behavior: the harness repeats the installed Playwright's list of features off, exactly", async () => {
  browser = await withTimeout(
    chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [...CHROMIUM_ARGS, '--enable-automation'],
    }),
    40_000,
    'launching Chromium',
  )
  expect(await featuresOff(browser)).toEqual(PLAYWRIGHT_FEATURES_OFF)
})

test("behavior: a harness browser runs without Playwright's features, the address bar's popup and the spare renderer, and with site isolation", async () => {
  browser = await launchChromium(['--enable-automation'])
  const off = await featuresOff(browser)
  expect(off).toEqual(expect.arrayContaining(PLAYWRIGHT_FEATURES_OFF))
  expect(off).toEqual(expect.arrayContaining(CHROMIUM_UI_FEATURES_OFF))
  expect(off).toEqual(expect.arrayContaining(CHROMIUM_BACKGROUND_FEATURES_OFF))
  expect(off).toContain('ThirdPartyStoragePartitioning')
  expect(off).toContain('SpareRendererForSitePerProcess')
  expect(off).not.toContain('SitePerProcess')
  const args = await commandLine(browser)
  expect(args).toEqual(expect.arrayContaining(CHROMIUM_ARGS))
  for (const weaker of [
    '--disable-site-isolation-trials',
    '--single-process',
    '--in-process-gpu',
  ]) {
    expect(args).not.toContain(weaker)
  }
  expect(args.some((arg) => arg.startsWith('--renderer-process-limit'))).toBe(false)
})

test('behavior: in a harness browser a cross-site frame is out of process and gets no storage', async () => {
  // One server on 127.0.0.1; the page is reached as localhost, its frame as 127.0.0.1: two sites.
  let port = 0
  server = createServer((request, response) => {
    response.setHeader('content-type', 'text/html')
    if (request.url === '/frame') {
      response.end(`<script>
        try { localStorage.setItem('k', '1'); window.storage = 'granted' }
        catch (e) { window.storage = e.name }
      </script>`)
      return
    }
    response.end(`<iframe src="http://127.0.0.1:${port}/frame"></iframe>`)
  })
  const listening = server
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve))
  port = (listening.address() as AddressInfo).port
  browser = await launchChromium()
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`http://localhost:${port}/`, { timeout: 15_000 })
  const frame = page.frames().find((f) => f.url().endsWith('/frame'))
  if (!frame) throw new Error('the cross-site frame did not load')
  expect(await frame.evaluate(() => (window as unknown as { storage: string }).storage)).toBe(
    'SecurityError',
  )
  const session = await browser.newBrowserCDPSession()
  const { targetInfos } = (await session.send('Target.getTargets')) as {
    targetInfos: { type: string; url: string }[]
  }
  expect(targetInfos).toContainEqual(
    expect.objectContaining({ type: 'iframe', url: `http://127.0.0.1:${port}/frame` }),
  )
})
