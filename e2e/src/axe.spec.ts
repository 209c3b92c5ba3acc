/**
 * expectAccessible (axe.ts) runs axe once per distinct document in a run: a document of the
 * same snapshot as one that passed (the same markup, with other words or other id spellings),
 * in this worker or another of the run, is not checked again; any other change is, and so is
 * the same document in another run.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { expectAccessible, forgetWorkerPasses } from './axe.ts'
import { removeAxePasses } from './axe-passes.ts'
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

/** A labelled field and a button: `words` for the texts, `ids` for the field's id. */
const form = (words: { label: string; button: string }, ids: { field: string; label: string }) =>
  `<!doctype html><html lang="en"><head><title>Sign in</title></head><body><main><h1>Sign in</h1>
<label for="${ids.label}">${words.label}</label><input id="${ids.field}" type="email">
<button type="button">${words.button}</button></main></body></html>`

test('behavior: the same screen with other words or other id spellings is not checked again; an emptied name or a broken label reference is, and fails', async () => {
  const first = await pageWith(
    form({ label: 'visitor-1@example.com', button: 'Continue' }, { field: 'r0', label: 'r0' }),
  )
  await expectAccessible(first, 'the form')
  expect(await axeRan(first)).toBe(true)

  // Another visitor's address and another spelling of the same ids: the same document for axe.
  const other = await pageWith(
    form({ label: 'visitor-73@example.org', button: 'Proceed' }, { field: 'R3b', label: 'R3b' }),
  )
  await expectAccessible(other, 'the form for another visitor')
  expect(await axeRan(other)).toBe(false)

  // The button without a name, and the label naming no field: both checked, both refused.
  const unnamed = await pageWith(
    form({ label: 'visitor-1@example.com', button: '' }, { field: 'r0', label: 'r0' }),
  )
  await expect(expectAccessible(unnamed, 'the form, its button unnamed')).rejects.toThrow(
    /button-name/,
  )
  const unlabelled = await pageWith(
    form({ label: 'visitor-1@example.com', button: 'Continue' }, { field: 'r0', label: 'r1' }),
  )
  await expect(expectAccessible(unlabelled, 'the form, its label elsewhere')).rejects.toThrow(
    /label/,
  )
})

/** A page no other test of the run shows, so that which run checked it is this test's doing. */
const OWN = ACCESSIBLE.replace('Continue', 'Continue to the shared record')

test("behavior: a document another worker of the run passed is not checked again; another run's pass does not count", async () => {
  await expectAccessible(await pageWith(OWN), 'the page')
  // As in another worker: only the run's record knows the pass.
  forgetWorkerPasses()
  const elsewhere = await pageWith(OWN)
  await expectAccessible(elsewhere, 'the page in another worker')
  expect(await axeRan(elsewhere)).toBe(false)

  forgetWorkerPasses()
  const run = process.env.LATCH_E2E_RUN_ID
  process.env.LATCH_E2E_RUN_ID = `another-run-${process.pid}`
  try {
    const later = await pageWith(OWN)
    await expectAccessible(later, 'the page in another run')
    expect(await axeRan(later)).toBe(true)
  } finally {
    removeAxePasses()
    if (run === undefined) delete process.env.LATCH_E2E_RUN_ID
    else process.env.LATCH_E2E_RUN_ID = run
  }
})
