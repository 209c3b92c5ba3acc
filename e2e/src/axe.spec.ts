/**
 * expectAccessible (axe.ts) runs axe once per distinct document in a spec file: a document
 * identical to one that passed is not checked again, and any change in it is.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { expectAccessible } from './axe.ts'
import { launchChromium, WAIT_MS, withTimeout } from './harness.ts'

let browser: Browser
beforeAll(async () => {
  browser = await withTimeout(launchChromium(), WAIT_MS, 'launching Chromium')
})
afterAll(async () => {
  await browser?.close()
})

const ACCESSIBLE = `<!doctype html><html lang="en"><head><title>Sign in</title></head>
<body><main><h1>Sign in</h1><button type="button">Continue</button></main></body></html>`
/** The same page with an image that has no text alternative (axe: image-alt). */
const INACCESSIBLE = ACCESSIBLE.replace('</main>', '<img src="data:,"></main>')

async function pageWith(html: string): Promise<Page> {
  const page = await browser.newPage()
  await page.setContent(html)
  return page
}

/** Whether axe was injected into the page, i.e. whether expectAccessible ran it there. */
const axeRan = (page: Page) => page.evaluate(() => 'axe' in window)

test('behavior: a document identical to one that passed is not checked again; a changed one is, and its violation fails', async () => {
  const first = await pageWith(ACCESSIBLE)
  await expectAccessible(first, 'the first page')
  expect(await axeRan(first)).toBe(true)

  const same = await pageWith(ACCESSIBLE)
  await expectAccessible(same, 'the same page again')
  expect(await axeRan(same)).toBe(false)

  const changed = await pageWith(INACCESSIBLE)
  await expect(expectAccessible(changed, 'the changed page')).rejects.toThrow(/image-alt/)

  // A failure is not remembered as a pass: the same failing document fails again.
  const changedAgain = await pageWith(INACCESSIBLE)
  await expect(expectAccessible(changedAgain, 'the changed page again')).rejects.toThrow(
    /image-alt/,
  )
})

test('behavior: another viewport is another document for axe', async () => {
  await expectAccessible(await pageWith(ACCESSIBLE), 'the page at the default size')
  const narrow = await pageWith(ACCESSIBLE)
  await narrow.setViewportSize({ width: 320, height: 640 })
  await expectAccessible(narrow, 'the page at 320 px')
  expect(await axeRan(narrow)).toBe(true)
})
