/**
 * The Chromium every browser spec runs in: Playwright's own `--disable-features` list survives
 * the one the harness passes (Chromium reads only the last such switch), and the address bar's
 * popup is off. Chromium tells its command line over the DevTools protocol only with
 * `--enable-automation`, which these two browsers get and no spec's does.
 */
import type { Browser } from 'playwright-core'
import { chromium } from 'playwright-core'
import { afterEach, expect, test } from 'vitest'
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  CHROMIUM_UI_FEATURES_OFF,
  launchChromium,
  PLAYWRIGHT_FEATURES_OFF,
  withTimeout,
} from './harness.ts'

let browser: Browser | undefined

afterEach(async () => {
  await browser?.close()
  browser = undefined
})

/** The features the browser runs without: those of the last `--disable-features` it was given. */
async function featuresOff(launched: Browser): Promise<string[]> {
  const session = await launched.newBrowserCDPSession()
  const { arguments: args } = (await session.send('Browser.getBrowserCommandLine')) as {
    arguments: string[]
  }
  const last = args.filter((arg) => arg.startsWith('--disable-features=')).at(-1) ?? ''
  return last.slice('--disable-features='.length).split(',').filter(Boolean)
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

test("behavior: a harness browser runs without Playwright's features and the address bar's popup", async () => {
  browser = await launchChromium(['--enable-automation'])
  const off = await featuresOff(browser)
  expect(off).toEqual(expect.arrayContaining(PLAYWRIGHT_FEATURES_OFF))
  expect(off).toEqual(expect.arrayContaining(CHROMIUM_UI_FEATURES_OFF))
  expect(off).toContain('ThirdPartyStoragePartitioning')
})
