/**
 * Dark mode: the modal's rounded corners and a phone's bottom sheet show the host page behind
 * them, not a black backdrop. Chromium paints an opaque canvas behind an iframe whose document
 * uses another colour scheme than the iframe element; the screenshot's pixels just inside each
 * corner of the modal must equal the page (with the dialog's backdrop) just outside it.
 */
import type { LoginResult } from '@latch/shared'
import type { Page } from 'playwright-core'
import { expect, test } from 'vitest'
import { latchCall, visit } from './flows.ts'
import { useHarness } from './use-harness.ts'

const h = useHarness()

type Rgb = [number, number, number]

/** The pixels at `points` of a screenshot of the page, decoded by the browser itself. */
async function pixels(page: Page, points: [number, number][]): Promise<Rgb[]> {
  const png = (await page.screenshot()).toString('base64')
  const reader = await page.context().newPage()
  try {
    return await reader.evaluate(
      async ({ data, at }) => {
        const image = new Image()
        image.src = `data:image/png;base64,${data}`
        await image.decode()
        const canvas = document.createElement('canvas')
        canvas.width = image.width
        canvas.height = image.height
        const context = canvas.getContext('2d') as CanvasRenderingContext2D
        context.drawImage(image, 0, 0)
        return at.map(([x, y]) => {
          const [r, g, b] = context.getImageData(x, y, 1, 1).data
          return [r, g, b] as [number, number, number]
        })
      },
      { data: png, at: points },
    )
  } finally {
    await reader.close()
  }
}

/** Within 3 of each channel: the same colour, allowing for rounding in compositing. */
const near = (a: Rgb, b: Rgb) => a.every((v, i) => Math.abs(v - (b[i] as number)) <= 3)

const VIEWPORTS = [
  { name: 'desktop', viewport: { width: 1280, height: 800 }, isMobile: false },
  { name: 'phone (390 px)', viewport: { width: 390, height: 844 }, isMobile: true },
]

for (const theme of ['dark', 'light'] as const) {
  for (const device of VIEWPORTS) {
    test(`behavior: in dark mode, a ${theme} modal's corners on a ${device.name} show the host page, not black`, async () => {
      const app =
        theme === 'dark' ? await h().createApp({ appearance: { theme: 'dark' } }) : h().app
      const hp = await h().open({
        appId: app.id,
        contextOptions: {
          colorScheme: 'dark',
          viewport: device.viewport,
          isMobile: device.isMobile,
          hasTouch: device.isMobile,
        },
      })
      const pending = latchCall<LoginResult>(hp.page, 'login')
      await visit(hp, 'LANDING')
      // The frame is sized to the modal: its box is the modal's.
      const frame = hp.page.locator('iframe[data-testid]').first()
      const box = await frame.boundingBox()
      if (!box) throw new Error('the modal frame has no box')
      const inset = 2
      const left = Math.ceil(box.x) + inset
      const right = Math.floor(box.x + box.width) - 1 - inset
      const top = Math.ceil(box.y) + inset
      const bottom = Math.min(Math.floor(box.y + box.height), device.viewport.height) - 1 - inset
      // The page as drawn around the modal (the backdrop over it): above the frame, or beside it.
      const outside: [number, number] =
        box.y >= 4 ? [Math.round(box.x + box.width / 2), Math.floor(box.y) - 3] : [2, 2]
      const points: [number, number][] = [outside, [left, top], [right, top]]
      // A bottom sheet on a phone ends at the screen's edge: its lower corners are not rounded.
      if (!device.isMobile) points.push([left, bottom], [right, bottom])
      const [page, ...corners] = await pixels(hp.page, points)
      for (const [i, corner] of corners.entries()) {
        expect(
          near(corner as Rgb, page as Rgb),
          `corner ${i} ${corner} against the page ${page}`,
        ).toBe(true)
      }
      void pending
    })
  }
}
