/**
 * `npm run bench -- frames [--runs N]`: what a host page pays for Latch, in headless Chromium on
 * the e2e harness (three origins, real server):
 * - gzip size of the one-line script (sdk.js) and of the ESM entry (latch.js), goal ≤ 6 KB each;
 * - gzip size of the modal's JavaScript fetched before the landing is usable, goal ≤ 90 KB;
 * - time from `login()` to the landing being visible with the preloaded frame: the later of the
 *   host showing the frame and the modal laying out the landing, median over ≥ 20 page loads,
 *   goal ≤ 50 ms.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { HOST_ELEMENT_IDS } from '@latch/shared'
import type { Frame, Response } from 'playwright-core'
import { FRONTEND_DIRS } from '../e2e/src/build.ts'
import { type Harness, type HostPage, startHarness } from '../e2e/src/harness.ts'
import '../e2e/src/window.ts'

const MIN_RUNS = 20
const KB = 1024
const LANDING = '[data-testid="screen-LANDING"]'

const gzipSize = (data: Buffer | string) => gzipSync(data, { level: 9 }).length

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

function parseRuns(args: string[]): number {
  const i = args.indexOf('--runs')
  if (i < 0) return 25
  const n = Number(args[i + 1])
  if (!Number.isInteger(n) || n < MIN_RUNS || n > 1000) {
    throw new Error(`--runs must be an integer from ${MIN_RUNS} to 1000`)
  }
  return n
}

function modalFrame(hp: HostPage, modalOrigin: string): Frame {
  const frame = hp.page.frames().find((f) => f.url().startsWith(modalOrigin))
  if (!frame) throw new Error('the modal frame is not in the page')
  return frame
}

/** Records, inside the modal frame, when the landing first has a laid-out, non-empty box. */
function watchLanding(frame: Frame): Promise<void> {
  return frame.evaluate((selector) => {
    const w = window as unknown as { landingAt: number | null }
    w.landingAt = null
    const check = () => {
      if (w.landingAt !== null) return
      const el = document.querySelector(selector)
      if (el && el.getBoundingClientRect().height > 0 && window.innerHeight > 0) {
        w.landingAt = performance.timeOrigin + performance.now()
      }
    }
    new MutationObserver(check).observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
    })
    new ResizeObserver(check).observe(document.documentElement)
    const timer = setInterval(() => {
      check()
      if (w.landingAt !== null) clearInterval(timer)
    }, 1)
  }, LANDING)
}

/** Calls login() and answers when it started and when the host showed the frame. */
function loginAndWaitShown(hp: HostPage): Promise<{ started: number; shown: number }> {
  return hp.page.evaluate(async (frameId) => {
    const frame = document.querySelector(`[data-testid="${frameId}"]`)
    const latch = window.latch
    if (!frame || !latch) throw new Error('no frame or no window.latch')
    const now = () => performance.timeOrigin + performance.now()
    const started = now()
    latch.login().catch(() => {})
    return new Promise<{ started: number; shown: number }>((resolve, reject) => {
      const visible = () => {
        const box = frame.getBoundingClientRect()
        return (
          box.width > 0 && box.height > 0 && frame.checkVisibility({ visibilityProperty: true })
        )
      }
      const done = () => {
        if (!visible()) return
        observer.disconnect()
        clearInterval(timer)
        clearTimeout(limit)
        resolve({ started, shown: now() })
      }
      const observer = new MutationObserver(done)
      observer.observe(document, { subtree: true, attributes: true, childList: true })
      const timer = setInterval(done, 1)
      const limit = setTimeout(() => reject(new Error('the frame was not shown in 10 s')), 10_000)
      done()
    })
  }, HOST_ELEMENT_IDS.frame)
}

async function landingAt(frame: Frame): Promise<number> {
  const handle = await frame.waitForFunction(
    () => (window as unknown as { landingAt: number | null }).landingAt,
    null,
    { timeout: 10_000, polling: 10 },
  )
  return (await handle.jsonValue()) as number
}

/** One page load: the modal JS fetched until the landing is usable, and login() -> visible. */
async function measureOnce(h: Harness, recordScripts: boolean) {
  const scripts: Response[] = []
  const context = await h.browser.newContext()
  // tsx keeps function names with a `__name` helper that the page does not have.
  await context.addInitScript('globalThis.__name = (target) => target')
  try {
    if (recordScripts) {
      context.on('response', (response) => {
        const url = new URL(response.url())
        const isSdk = url.pathname === '/sdk.js' || url.pathname === '/latch.js'
        if (url.origin === h.modalUrl && !isSdk && response.request().resourceType() === 'script') {
          scripts.push(response)
        }
      })
    }
    const hp = await h.open({ context })
    const frame = modalFrame(hp, h.modalUrl)
    await watchLanding(frame)
    const { started, shown } = await loginAndWaitShown(hp)
    const laidOut = await landingAt(frame)
    const ms = Math.max(shown, laidOut) - started
    // Only what was fetched by now counts: later lazy chunks are not needed for the landing.
    const bodies = await Promise.all(
      scripts.map(async (r) => ({ url: r.url(), body: await r.body() })),
    )
    return { ms, bodies }
  } finally {
    await context.close()
  }
}

function table(rows: [string, string, string][]): string {
  const head: [string, string, string] = ['measure', 'value', 'goal']
  const all = [head, ...rows]
  const widths = [0, 1, 2].map((i) => Math.max(...all.map((r) => r[i as 0 | 1 | 2].length)))
  const line = (r: [string, string, string]) =>
    `| ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`
  return [line(head), rule, ...rows.map(line)].join('\n')
}

/** Runs the benchmark and prints a table. */
export default async function run(args: string[] = []): Promise<void> {
  const runs = parseRuns(args)
  console.log(`[bench frames] starting the harness, then ${runs} page loads in headless Chromium…`)
  const h = await startHarness()
  try {
    const sdk = readFileSync(join(FRONTEND_DIRS.sdk, 'sdk.js'))
    const esm = readFileSync(join(FRONTEND_DIRS.sdk, 'latch.js'))

    const times: number[] = []
    let modalScripts: { url: string; body: Buffer }[] = []
    for (let i = 0; i < runs; i++) {
      const { ms, bodies } = await measureOnce(h, i === 0)
      if (i === 0) modalScripts = bodies
      times.push(ms)
    }
    times.sort((a, b) => a - b)
    const modalGzip = modalScripts.reduce((sum, s) => sum + gzipSize(s.body), 0)
    const modalRaw = modalScripts.reduce((sum, s) => sum + s.body.length, 0)
    const kb = (n: number) => `${(n / KB).toFixed(1)} KB`
    const ms = (n: number) => `${n.toFixed(1)} ms`

    console.log('')
    console.log(
      table([
        ['host script sdk.js (gzip)', kb(gzipSize(sdk)), '≤ 6 KB'],
        ['host ESM entry latch.js (gzip)', kb(gzipSize(esm)), '≤ 6 KB'],
        [
          `modal JS before the landing (gzip, ${modalScripts.length} file(s), ${kb(modalRaw)} raw)`,
          kb(modalGzip),
          '≤ 90 KB',
        ],
        [`login() → landing visible, median of ${runs}`, ms(percentile(times, 50)), '≤ 50 ms'],
        ['login() → landing visible, p90', ms(percentile(times, 90)), ''],
        [
          'login() → landing visible, min / max',
          `${ms(times[0] ?? 0)} / ${ms(times.at(-1) ?? 0)}`,
          '',
        ],
      ]),
    )
    for (const s of modalScripts) {
      console.log(`  ${new URL(s.url).pathname}: ${kb(gzipSize(s.body))} gzip`)
    }
  } finally {
    await h.close()
  }
}
