/**
 * `npm run bench -- frames [--runs N]`: what a host page pays for Latch, in headless Chromium on
 * the e2e harness (three origins, real server):
 * - gzip size of the one-line script (sdk.js) and of the ESM entry (latch.js), goal ≤ 6 KB each;
 * - gzip size of the modal's JavaScript fetched before the landing is usable, goal ≤ 90 KB, for
 *   the React DOM build and the Preact one (LATCH_MODAL_RENDERER, modal-app/renderer.ts);
 * - time from `login()` to the landing on screen with the preloaded frame: the latest of the
 *   host showing the frame, the modal laying out the landing and the frame's first contentful
 *   paint (which a hidden frame does not have), median over ≥ 20 page loads, goal ≤ 50 ms;
 * - the cold open on a phone's CPU: from navigation of the demo page to the landing's e-mail
 *   field on screen after `login()` (the modal frame's first contentful paint), in a fresh
 *   browser context per load with the CPU throttled
 *   4x (host page and modal frame in one renderer, as on Android), median and spread over ≥ 7
 *   loads, goal ≤ 300 ms with the landing rendered by the modal server (modal-app/ssr.ts), ≤ 500 ms
 *   rendered by the client; the React DOM build with server rendering on and off and the Preact
 *   build alternate in one run (each one's servers in a child of their own), reported each and
 *   as ratios. The servers run in
 *   child processes (cold-open-servers.ts); its Chromium is driven over a bare DevTools pipe (cdp-pipe.ts), with only the Page domain on
 *   while a page loads, so the bench adds no work of its own to the thread it measures, and
 *   runs without the address bar's popup, which headless Chromium would otherwise load in a
 *   renderer of its own for every fresh context, on the cores the page needs.
 * `--cold-only` measures the cold open alone and prints its steps; with it, `--save-build <dir>`
 * keeps this tree's build and `--compare <dir>` alternates cold opens between a kept build (A)
 * and this tree (B); `--trace <dir>` writes a Chromium trace of each cold open there (open it in
 * DevTools' Performance panel, or read it with scripts/trace-main-thread.ts), `--profile <dir>`
 * a V8 sampling profile (DevTools' .cpuprofile). Tracing and profiling slow the opens down.
 * With `--cold-only`, `--plain-page` alternates each build's opens of the demo page with opens
 * of a plain integrator's page (the one-line script and a sign-in button), so the demo page's
 * own share of the open shows apart from Latch's; `--plain-only` opens the plain page alone (more
 * opens of it in the same time, for a change to Latch's own share). `--floor` alternates them
 * with opens of the floor (cold-open-floor.ts): the plain page and the server-rendered landing
 * with no script at all, the frame shown from the HTML; what Latch's JavaScript adds is the
 * difference.
 * `--login-methods a,b,…` gives the cold opens' app other login methods than e-mail alone (the
 * e-mail field must be on the landing's first section, so not `wallet` when wallets come first).
 */
import { fork } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { HOST_ELEMENT_IDS } from '@latch/shared'
import type { Frame, Page, Response } from 'playwright-core'
import { buildFrontendOnce, buildModalOnce, FRONTEND_DIRS } from '../e2e/src/build.ts'
import {
  CHROMIUM_ARGS,
  CHROMIUM_UI_FEATURES_OFF,
  type Harness,
  type HostPage,
  startHarness,
  withTimeout,
} from '../e2e/src/harness.ts'
import '../e2e/src/window.ts'
import { type ModalRenderer, modalRenderer } from '../modal-app/renderer.ts'
import { type CdpClient, launchCdpChromium, waitForEvent } from './cdp-pipe.ts'
import { FLOOR_MARKER } from './cold-open-floor.ts'
import type { ColdOpenServers } from './cold-open-servers.ts'

const MIN_RUNS = 20
const MIN_COLD_RUNS = 7
/**
 * Cold opens of each build made first and not counted. The first page of a freshly started
 * Chromium and the first requests to freshly started servers pay what a phone's running browser
 * and a serving Latch paid long before (the browser's first renderer and font reads, the
 * servers' first compilation and their app lookup's first miss): 700-1,100 ms where the opens
 * after it read 400-650 ms. Each counted open still gets a fresh browser context.
 */
const WARM_UP_OPENS = 1
/**
 * The cold open's app signs in by e-mail alone unless `--login-methods a,b,…` names others
 * (`npm start`'s demo app has e-mail and SMS, and each social provider given a client id).
 */
const COLD_OPEN_LOGIN_METHODS = 'email'
/** Chromium's CPU throttling for the cold open: a mid-range phone is about 4x slower. */
const CPU_THROTTLE = 4
const KB = 1024
const LANDING = '[data-testid="screen-LANDING"]'
/** What `--trace` records: the main thread's tasks, scripts, parsing, style, layout and paint. */
const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'v8.execute',
  'blink',
  'loading',
  'toplevel',
  'v8',
  'disabled-by-default-v8.compile',
]

const gzipSize = (data: Buffer | string) => gzipSync(data, { level: 9 }).length

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

function parseCount(args: string[], flag: string, fallback: number, min: number): number {
  const i = args.indexOf(flag)
  if (i < 0) return fallback
  const n = Number(args[i + 1])
  if (!Number.isInteger(n) || n < min || n > 1000) {
    throw new Error(`${flag} must be an integer from ${min} to 1000`)
  }
  return n
}

function modalFrame(page: Page, modalOrigin: string): Frame {
  const frame = page.frames().find((f) => f.url().startsWith(modalOrigin))
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

/**
 * When the modal frame's first contentful paint was presented: the landing on screen (a frame
 * the host hides gets none, so this is after the show).
 */
async function paintedAt(frame: Frame): Promise<number> {
  const handle = await frame.waitForFunction(
    () => {
      const fcp = performance.getEntriesByName('first-contentful-paint')[0]
      return fcp ? performance.timeOrigin + fcp.startTime : null
    },
    null,
    { timeout: 10_000, polling: 10 },
  )
  return (await handle.jsonValue()) as number
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
    const frame = modalFrame(hp.page, h.modalUrl)
    await watchLanding(frame)
    const { started, shown } = await loginAndWaitShown(hp)
    const laidOut = await landingAt(frame)
    const ms = Math.max(shown, laidOut, await paintedAt(frame)) - started
    // Only what was fetched by now counts: later lazy chunks are not needed for the landing.
    const bodies = await Promise.all(
      scripts.map(async (r) => ({ url: r.url(), body: await r.body() })),
    )
    return { ms, bodies }
  } finally {
    await context.close()
  }
}

/** The host page's promise of both probes' marks, and the modal probe's message key. */
const PROBE_REPORT = '__latchColdOpen'

/**
 * Runs in every frame of a cold-open context before the page's own scripts. In the host page
 * it calls `login()` the moment the one-line script installs `window.latch` and records when
 * the host shows the frame (the dialog open and the frame no longer hidden); in the modal frame
 * it records when the e-mail field first has a laid-out box. Each side reports once, on the
 * console, when it has its mark.
 *
 * The probe must not add work to what it measures: it reads DOM attributes only (never a
 * layout: `getBoundingClientRect` on each mutation forced a layout of the host page inside
 * sdk.js and of the modal inside its first render), learns the field's size from a
 * ResizeObserver (computed in the frame's own rendering update), and is never polled: the bench
 * waits for the console report, so no Playwright script is injected into either frame while the
 * first open runs (its evaluation took ~25 ms of the throttled main thread, right before the
 * frame's document was committed).
 */
function coldOpenProbe(modalOrigin: string, frameTestId: string): string {
  return `(() => {
  const now = () => performance.timeOrigin + performance.now()
  const probe = { start: performance.timeOrigin, login: null, shown: null, field: null, painted: null, error: null, marks: {} }
  window.__coldOpen = probe
  const top = window === window.top
  // The host page gathers both sides' marks; the bench awaits its promise once (no polling).
  let settle
  if (top) {
    const reports = {}
    window[${JSON.stringify(PROBE_REPORT)}] = new Promise((resolve) => { settle = resolve })
    window.addEventListener('message', (e) => {
      const report = e.data && e.data[${JSON.stringify(PROBE_REPORT)}]
      if (report) take('modal', report)
    })
    var take = (side, report) => {
      if (report.error) return settle(JSON.stringify({ error: report.error }))
      reports[side] ??= report
      if (reports.host && reports.modal) settle(JSON.stringify(reports))
    }
  }
  const report = () => top ? take('host', probe) : parent.postMessage({ ${JSON.stringify(PROBE_REPORT)}: probe }, '*')
  // Where the time goes: the first send of each penpal message (handshake over the window,
  // calls and replies over the port), in either frame, on the shared clock.
  const mark = (name) => { if (!(name in probe.marks)) probe.marks[name] = now() }
  const label = (d) => d && d.namespace === 'penpal' ? d.type + (d.methodPath ? ' ' + d.methodPath.join('.') : '') : null
  const sendPort = MessagePort.prototype.postMessage
  MessagePort.prototype.postMessage = function (d, ...rest) {
    const l = label(d)
    if (l) mark('send ' + l)
    return sendPort.call(this, d, ...rest)
  }
  window.addEventListener('message', (e) => { const l = label(e.data); if (l) mark('recv ' + l) }, true)
  const watch = (check) => {
    const observer = new MutationObserver(() => { if (check()) observer.disconnect() })
    observer.observe(document, { subtree: true, childList: true, attributes: true })
  }
  if (window === window.top) {
    let installed
    const go = (latch) => {
      probe.login = now()
      latch.login().catch(() => {})
      // The SDK may mount its frame a little later: looked up on each change.
      const check = () => {
        const frame = document.querySelector('[data-testid="${frameTestId}"]')
        if (!frame) return false
        const dialog = frame.closest('dialog')
        const open = dialog ? dialog.open : frame.style.display !== 'none'
        if (open && frame.getAttribute('aria-hidden') !== 'true') {
          probe.shown = now()
          report()
        }
        return probe.shown !== null
      }
      if (!check()) watch(check)
    }
    Object.defineProperty(window, 'latch', {
      configurable: true,
      get: () => installed,
      set: (latch) => {
        installed = latch
        if (probe.login === null) go(latch)
      },
    })
    window.addEventListener('load', () => {
      if (probe.login !== null) return
      // The floor's page (cold-open-floor.ts) has no Latch: its frame is shown from the HTML.
      if (!document.querySelector('meta[name="${FLOOR_MARKER}"]')) {
        probe.error = 'the page loaded without installing window.latch'
      }
      report()
    })
  } else if (location.origin === ${JSON.stringify(modalOrigin)}) {
    // On screen: the frame's first contentful paint, which a frame the host still hides (its
    // dialog closed, visibility hidden) does not have; the time the browser presented it.
    const done = () => { if (probe.field !== null && probe.painted !== null) report() }
    new PerformanceObserver((list, observer) => {
      const fcp = list.getEntries().find((e) => e.name === 'first-contentful-paint')
      if (!fcp) return
      probe.painted = performance.timeOrigin + fcp.startTime
      observer.disconnect()
      done()
    }).observe({ type: 'paint', buffered: true })
    // A fast first render lays the field out while the host still hides the frame: its size is
    // what tells, from the frame's rendering update, not a DOM change.
    const sized = new ResizeObserver((entries) => {
      if (probe.field !== null) return
      if (entries.some((e) => e.contentRect.height > 0)) {
        probe.field = now()
        sized.disconnect()
        done()
      }
    })
    let observed = null
    watch(() => {
      const field = document.querySelector('[data-testid="email-input"]')
      if (field && field !== observed) {
        observed = field
        sized.observe(field)
      }
      return probe.field !== null
    })
  }
})()`
}

interface ColdOpen {
  /** Navigation of the host page → the e-mail field visible. */
  total: number
  /** Navigation of the modal frame → the e-mail field visible. */
  frame: number
  /** Navigation of the host page → the one-line script installed `window.latch`. */
  sdk: number
  /** Navigation of the host page → navigation of the modal frame: the host page's share. */
  host: number
  /** Steps of the modal's first open, ms after the modal frame's navigation. */
  steps: Record<string, number>
}

interface ColdProbe {
  start: number
  login: number | null
  shown: number | null
  field: number | null
  /** The modal frame's first contentful paint (presented): the landing on screen. */
  painted: number | null
  error: string | null
  marks: Record<string, number>
}

/**
 * Resolves with the host's and the modal's probe once both reported (or one failed): waits for
 * the host page's commit, then awaits the probe's promise in it with one evaluation. Neither
 * the Runtime domain nor a binding is enabled while the page loads: with Runtime on, telling
 * the client of each new script context took ~11 ms of the throttled main thread for the host
 * page alone.
 */
async function probeReports(cdp: CdpClient, sessionId: string, hostUrl: string) {
  const committed = waitForEvent(
    cdp,
    (event) => {
      if (event.sessionId !== sessionId || event.method !== 'Page.frameNavigated') return
      const frame = event.params.frame as { parentId?: string; url: string }
      return !frame.parentId && frame.url.startsWith(hostUrl) ? true : undefined
    },
    20_000,
    'the host page committing',
  )
  return {
    navigated: committed,
    reports: committed.then(async () => {
      const { result, exceptionDetails } = await cdp.send<{
        result: { value?: string }
        exceptionDetails?: { text: string }
      }>(
        'Runtime.evaluate',
        { expression: `window.${PROBE_REPORT}`, awaitPromise: true, returnByValue: true },
        sessionId,
      )
      if (exceptionDetails || typeof result.value !== 'string') {
        throw new Error(`cold open: no probe report (${exceptionDetails?.text ?? 'no value'})`)
      }
      const reports = JSON.parse(result.value) as
        | { error: string }
        | { host: ColdProbe; modal: ColdProbe }
      if ('error' in reports) throw new Error(`cold open: ${reports.error}`)
      return reports
    }),
  }
}

/** Resource timing, navigation timing and paints of a frame: the steps' raw marks. */
function modalTimingSteps(): Record<string, number> {
  const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming
  const steps: Record<string, number> = {
    'html received': nav.responseEnd,
    'html first byte': nav.responseStart,
    'html requested': nav.requestStart,
    'dom interactive': nav.domInteractive,
    'scripts run (DOMContentLoaded)': nav.domContentLoadedEventStart,
  }
  for (const r of performance.getEntriesByType('resource') as PerformanceResourceTiming[]) {
    // Cross-origin answers without Timing-Allow-Origin (the API's) read 0: only the end is real.
    if (r.requestStart === 0) {
      steps[`${new URL(r.name).pathname} received`] = r.responseEnd
      continue
    }
    const file = new URL(r.name).pathname.replace(/-[\w-]{8}\./, '.')
    steps[`${file} received`] = r.responseEnd
    steps[`${file} requested`] = r.requestStart
    steps[`${file} first byte`] = r.responseStart
  }
  for (const p of performance.getEntriesByType('paint')) steps[p.name] = p.startTime
  return steps
}

/**
 * Follows the main-world contexts of a page's frames (Runtime's context events), so the bench
 * can evaluate in the modal frame once the open is over. Stop it with the returned `stop`.
 */
function trackFrameContexts(cdp: CdpClient, sessionId: string) {
  const byOrigin = new Map<string, number>()
  const stop = cdp.on((event) => {
    if (event.sessionId !== sessionId || event.method !== 'Runtime.executionContextCreated') return
    const c = event.params.context as {
      id: number
      origin: string
      auxData?: { isDefault?: boolean }
    }
    if (c.auxData?.isDefault) byOrigin.set(c.origin, c.id)
  })
  return {
    stop,
    /** Evaluates `fn()` in the newest main world of the frame at `origin`. */
    async evaluate<T>(origin: string, fn: () => T): Promise<T> {
      const contextId = byOrigin.get(origin)
      if (contextId === undefined) throw new Error(`no frame of ${origin} in the page`)
      const { result, exceptionDetails } = await cdp.send<{
        result: { value?: T }
        exceptionDetails?: { text: string }
      }>(
        'Runtime.evaluate',
        { expression: `(${fn.toString()})()`, contextId, returnByValue: true },
        sessionId,
      )
      if (exceptionDetails || result.value === undefined) {
        throw new Error(`evaluating in ${origin}: ${exceptionDetails?.text ?? 'no value'}`)
      }
      return result.value
    },
  }
}

/** Ends tracing and writes the trace, read from its stream, to `path`. */
async function saveTrace(cdp: CdpClient, path: string): Promise<void> {
  const complete = waitForEvent(
    cdp,
    (e) => (e.method === 'Tracing.tracingComplete' ? String(e.params.stream) : undefined),
    60_000,
    'the trace',
  )
  await cdp.send('Tracing.end')
  const handle = await complete
  const chunks: string[] = []
  for (;;) {
    const { data, eof } = await cdp.send<{ data: string; eof: boolean }>('IO.read', { handle })
    chunks.push(data)
    if (eof) break
  }
  await cdp.send('IO.close', { handle })
  writeFileSync(path, chunks.join(''))
}

/**
 * One cold open: a fresh browser context (empty cache, no cookies, no stored session), the CPU
 * throttled, the demo page loaded and `login()` called at once; answers navigation → e-mail
 * field on screen (the latest of the host showing the frame, the field being laid out and the
 * frame's first contentful paint, which a frame only has once shown: the pixels). Only
 * the probe and its one binding are in the pages while it runs.
 */
async function coldOpenOnce(
  h: ColdOpenServers,
  cdp: CdpClient,
  record: { trace?: string; profile?: string } = {},
): Promise<ColdOpen> {
  const { trace, profile } = record
  const stops: (() => void)[] = []
  const { browserContextId } = await cdp.send<{ browserContextId: string }>(
    'Target.createBrowserContext',
    { disposeOnDetach: true },
  )
  try {
    const { targetId } = await cdp.send<{ targetId: string }>('Target.createTarget', {
      url: 'about:blank',
      browserContextId,
    })
    const { sessionId } = await cdp.send<{ sessionId: string }>('Target.attachToTarget', {
      targetId,
      flatten: true,
    })
    // The probe script needs the Page domain (Runtime is enabled only once the open is over).
    await cdp.send('Page.enable', {}, sessionId)
    await cdp.send(
      'Page.addScriptToEvaluateOnNewDocument',
      { source: coldOpenProbe(h.modalUrl, HOST_ELEMENT_IDS.frame) },
      sessionId,
    )
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_THROTTLE }, sessionId)
    if (trace) {
      await cdp.send('Tracing.start', {
        transferMode: 'ReturnAsStream',
        traceConfig: { includedCategories: TRACE_CATEGORIES },
      })
    }
    if (profile) {
      await cdp.send('Profiler.enable', {}, sessionId)
      await cdp.send('Profiler.setSamplingInterval', { interval: 100 }, sessionId)
      await cdp.send('Profiler.start', {}, sessionId)
    }
    const probes = await probeReports(cdp, sessionId, h.hostUrl)
    await cdp.send('Page.navigate', { url: h.hostUrl }, sessionId)
    const { host, modal } = await withTimeout(probes.reports, 20_000, 'the cold-open probes')
    if (trace) await saveTrace(cdp, trace)
    if (profile) {
      const { profile: samples } = await cdp.send<{ profile: unknown }>(
        'Profiler.stop',
        {},
        sessionId,
      )
      writeFileSync(profile, JSON.stringify(samples))
    }
    // On screen: shown by the host, laid out, and presented (the frame's first contentful
    // paint, which comes only once the host shows the frame).
    const end = Math.max(host.shown ?? 0, modal.field ?? 0, modal.painted ?? 0)
    const contexts = trackFrameContexts(cdp, sessionId)
    stops.push(contexts.stop)
    await cdp.send('Runtime.enable', {}, sessionId)
    const steps = await contexts.evaluate(new URL(h.modalUrl).origin, modalTimingSteps)
    // The host page's own timing (sdk.js fetched and run), on the modal's clock.
    const hostSteps = await contexts.evaluate(new URL(h.hostUrl).origin, modalTimingSteps)
    for (const [name, at] of Object.entries(hostSteps)) {
      if (!name.startsWith('first-')) steps[`host page: ${name}`] = at + host.start - modal.start
    }
    for (const [side, p] of [
      ['host', host],
      ['modal', modal],
    ] as const) {
      for (const [name, at] of Object.entries(p.marks)) steps[`${side} ${name}`] = at - modal.start
    }
    steps['modal e-mail field laid out'] = (modal.field ?? Number.NaN) - modal.start
    steps['host shows the frame'] = (host.shown ?? Number.NaN) - modal.start
    steps['host login()'] = (host.login ?? Number.NaN) - modal.start
    // The modal's own share: from the frame's navigation (its time origin) on.
    return {
      total: end - host.start,
      frame: end - modal.start,
      sdk: (host.login ?? Number.NaN) - host.start,
      host: modal.start - host.start,
      steps,
    }
  } finally {
    for (const stop of stops) stop()
    await cdp.send('Target.disposeBrowserContext', { browserContextId }).catch(() => {})
  }
}

/**
 * Features the cold opens' Chromium runs without (one `--disable-features`: Chromium reads only
 * the last). Chrome on Android isolates only sites a visitor signs in to, so on a phone the
 * cross-site modal frame first renders in the host page's process, on its main thread; desktop
 * Chromium gives it a process of its own, which the page's CPU throttling would not reach. Site
 * isolation off makes the throttle cover both, as on the phone. And headless Chromium builds the
 * address bar's suggestion popup (a WebUI app, `chrome://omnibox-popup.top-chrome`) for every
 * new window, so for every cold open's fresh browser context: a renderer of its own that was
 * busy loading it through the whole open (~0.5 s of CPU), on the 2 cores the throttled page
 * needs. A phone's browser opening a page does not; nothing here has an address bar.
 */
const COLD_OPEN_DISABLED_FEATURES = [
  'IsolateOrigins',
  'site-per-process',
  ...CHROMIUM_UI_FEATURES_OFF,
]

/** The browser for cold opens, driven over a bare DevTools pipe (cdp-pipe.ts). */
function launchPhoneLikeChromium(): Promise<CdpClient> {
  return withTimeout(
    launchCdpChromium([
      ...CHROMIUM_ARGS,
      '--disable-site-isolation-trials',
      `--disable-features=${COLD_OPEN_DISABLED_FEATURES.join(',')}`,
      'about:blank',
    ]),
    40_000,
    'launching Chromium for the cold opens',
  )
}

/**
 * `runs` cold opens of each build's servers, alternated (A, B, A, B, …) so that each build
 * meets the same load of the shared cores; answers one list per build, in `builds`' order.
 */
async function coldOpens(
  builds: ColdOpenServers[],
  runs: number,
  recordDirs: { trace?: string; profile?: string } = {},
): Promise<ColdOpen[][]> {
  const cdp = await launchPhoneLikeChromium()
  try {
    const times: ColdOpen[][] = builds.map(() => [])
    for (let i = -WARM_UP_OPENS; i < runs; i++) {
      for (const [b, servers] of builds.entries()) {
        if (i < 0) {
          await coldOpenOnce(servers, cdp, {})
          continue
        }
        const name = `cold-open-${b}-${i}`
        const { trace, profile } = recordDirs
        times[b]?.push(
          await coldOpenOnce(servers, cdp, {
            trace: trace && join(trace, `${name}.json`),
            profile: profile && join(profile, `${name}.cpuprofile`),
          }),
        )
      }
    }
    return times
  } finally {
    await cdp.close()
  }
}

/**
 * Starts the servers of one build in a child process (cold-open-servers.ts): the cold opens'
 * HTML and assets are then served by an event loop of their own, as in production, not by the
 * one that drives Chromium here. Answers their URLs and how to stop them.
 */
async function forkServers(
  dirs: { modal: string; sdk: string },
  loginMethods: string,
  /** The modal server renders the landing (modal-app/ssr.ts); off: the client renders it. */
  ssr = true,
  /** Also serve the floor (cold-open-floor.ts). */
  floor = false,
) {
  const child = fork(fileURLToPath(new URL('./cold-open-servers.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      LATCH_BENCH_MODAL_DIR: dirs.modal,
      LATCH_BENCH_SDK_DIR: dirs.sdk,
      LATCH_BENCH_LOGIN_METHODS: loginMethods,
      LATCH_BENCH_SSR: ssr ? 'on' : 'off',
      LATCH_BENCH_FLOOR: floor ? 'on' : 'off',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const stop = async () => {
    if (child.connected) child.disconnect()
    await withTimeout(exited, 10_000, 'stopping the cold-open servers').catch(() => {
      child.kill('SIGKILL')
    })
  }
  try {
    const servers = await withTimeout(
      new Promise<ColdOpenServers>((resolve, reject) => {
        child.once('message', (m) => resolve(m as ColdOpenServers))
        void exited.then((code) => reject(new Error(`the cold-open servers exited (${code})`)))
      }),
      // PGlite's first start and tsx's compile: minutes when other test runs hold the cores.
      240_000,
      'starting the cold-open servers',
    )
    return { servers, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** The cold opens summed up: each measure's median, spread and values in the order measured. */
function summarize(cold: ColdOpen[]) {
  const describe = (pick: (c: ColdOpen) => number) => {
    const values = cold.map(pick)
    const sorted = [...values].sort((a, b) => a - b)
    return {
      median: percentile(sorted, 50),
      spread: spread(sorted),
      order: values.map((n) => n.toFixed(0)).join(', '),
    }
  }
  return {
    total: describe((c) => c.total),
    frame: describe((c) => c.frame),
    sdk: describe((c) => c.sdk),
    host: describe((c) => c.host),
  }
}

/** Each step's median over the runs that reached it, in order of time. */
function medianSteps(cold: ColdOpen[]): [string, number][] {
  const names = new Set(cold.flatMap((c) => Object.keys(c.steps)))
  return [...names]
    .map((name): [string, number] => {
      const values = cold
        .map((c) => c.steps[name])
        .filter((n): n is number => n !== undefined && Number.isFinite(n))
        .sort((a, b) => a - b)
      return [name, percentile(values, 50)]
    })
    .sort((a, b) => a[1] - b[1])
}

/**
 * The load average, and how long one core takes for a fixed loop of arithmetic right now (ms,
 * best of 3): this virtual machine's speed drifts by a third within an hour (the same build's
 * cold open read 460 and 830 ms), and the loop's figure says which speed a run met.
 */
const load = () => {
  let best = Number.POSITIVE_INFINITY
  for (let round = 0; round < 3; round++) {
    const started = performance.now()
    let x = 0
    for (let i = 0; i < 20_000_000; i++) x = (x * 31 + i) % 1_000_003
    if (x < 0) console.log(x)
    best = Math.min(best, performance.now() - started)
  }
  const average = loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')
  return `${average}, reference loop ${best.toFixed(0)} ms`
}

function spread(sorted: number[]): string {
  const ms = (n: number) => `${n.toFixed(0)} ms`
  return `${ms(sorted[0] ?? Number.NaN)}–${ms(sorted.at(-1) ?? Number.NaN)}`
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

function flagText(args: string[], flag: string, what: string): string | undefined {
  const i = args.indexOf(flag)
  if (i < 0) return undefined
  const value = args[i + 1]
  if (!value || value.startsWith('--')) throw new Error(`${flag} needs ${what}`)
  return value
}

function flagValue(args: string[], flag: string): string | undefined {
  const value = flagText(args, flag, 'a folder')
  return value === undefined ? undefined : resolve(value)
}

type FrontendDirs = { modal: string; sdk: string }

/** A build saved by `--save-build`: its modal page and its SDK. */
const savedBuild = (dir: string): FrontendDirs => ({
  modal: join(dir, 'modal'),
  sdk: join(dir, 'sdk'),
})

/** The step medians of each build side by side, in the order of the first build's times. */
function printSteps(labels: string[], cold: ColdOpen[][]): void {
  const perBuild = cold.map((c) => new Map(medianSteps(c)))
  const order = medianSteps(cold.flat()).map(([name]) => name)
  console.log(`  steps in the modal frame, median ms after its navigation (${labels.join(' | ')}):`)
  for (const name of order) {
    const cells = perBuild.map((m) => (m.get(name)?.toFixed(0) ?? '-').padStart(5))
    console.log(`    ${cells.join(' ')}  ${name}`)
  }
}

/**
 * `--cold-only`: the first open alone, for trying a change to it. The servers run in a child
 * process; `--compare <folder>` alternates the cold opens between a build saved earlier with
 * `--save-build <folder>` (A) and this tree's build (B), so both meet the same load.
 */
async function runColdOnly(args: string[], coldRuns: number, methods: string): Promise<void> {
  const compare = flagValue(args, '--compare')
  const save = flagValue(args, '--save-build')
  const trace = flagValue(args, '--trace')
  const profile = flagValue(args, '--profile')
  for (const dir of [trace, profile]) if (dir) mkdirSync(dir, { recursive: true })
  if (compare && !existsSync(join(savedBuild(compare).modal, 'index.html'))) {
    throw new Error(`${compare} holds no saved build (make one with --save-build)`)
  }
  console.log(
    `[bench frames] building the frontend, then ${coldRuns} cold opens${compare ? ' of each build, alternated,' : ''} (CPU ${CPU_THROTTLE}x slower, login methods ${methods}) in headless Chromium, after ${WARM_UP_OPENS} not counted…`,
  )
  const built = await buildFrontendOnce()
  // Copied out at once: an e2e run of another engineer may rebuild the shared cache meanwhile.
  const dirs = savedBuild(mkdtempSync(join(tmpdir(), 'latch-bench-build-')))
  cpSync(built.modal, dirs.modal, { recursive: true })
  cpSync(built.sdk, dirs.sdk, { recursive: true })
  if (save) {
    cpSync(dirs.modal, savedBuild(save).modal, { recursive: true })
    cpSync(dirs.sdk, savedBuild(save).sdk, { recursive: true })
    console.log(`  this build saved in ${save}`)
  }
  const builds = [
    ...(compare ? [{ label: `A (${compare})`, dirs: savedBuild(compare) }] : []),
    { label: compare ? 'B (this tree)' : 'this tree', dirs },
  ]
  const running: Awaited<ReturnType<typeof forkServers>>[] = []
  try {
    // One after the other: each makes its data folder from the same template.
    const floor = args.includes('--floor')
    for (const build of builds) running.push(await forkServers(build.dirs, methods, true, floor))
    // `--plain-page`: each build's opens of the demo page alternate with opens of an
    // integrator's plain page (host-server.ts's /plain: the one-line script, a sign-in button),
    // which tells the demo page's own share of the open from Latch's.
    const pages = args.includes('--plain-only')
      ? ['/plain']
      : args.includes('--plain-page')
        ? ['', '/plain']
        : ['']
    // `--floor`: and opens of each build's floor (cold-open-floor.ts: the plain page and the
    // rendered landing with no script at all), which tells what Latch's scripts add.
    const targets = running.flatMap((r) => [
      ...pages.map((page) => ({ ...r.servers, hostUrl: `${r.servers.hostUrl}${page}` })),
      ...(r.servers.floor ? [r.servers.floor] : []),
    ])
    const labels = builds.flatMap((b) => [
      ...pages.map((page) =>
        pages.length > 1 || page || floor ? `${b.label}, ${page ? 'plain' : 'demo'} page` : b.label,
      ),
      ...(floor ? [`${b.label}, the floor (plain page, rendered landing, no scripts)`] : []),
    ])
    const before = load()
    const cold = await coldOpens(targets, coldRuns, { trace, profile })
    if (trace) console.log(`  a Chromium trace of each cold open in ${trace} (<name>.json)`)
    if (profile)
      console.log(`  a V8 CPU profile of each cold open in ${profile} (<name>.cpuprofile)`)
    const after = load()
    for (const [b, label] of labels.entries()) {
      const { total, frame, sdk, host } = summarize(cold[b] ?? [])
      console.log(`${label}:`)
      console.log(
        `  cold open, CPU ${CPU_THROTTLE}x: median ${total.median.toFixed(0)} ms, ${total.spread} (in order: ${total.order})`,
      )
      console.log(
        `  in the modal frame: median ${frame.median.toFixed(0)} ms, ${frame.spread} (in order: ${frame.order})`,
      )
      console.log(
        `  on the host page (navigation → the frame's navigation): median ${host.median.toFixed(0)} ms, ${host.spread} (in order: ${host.order}); window.latch installed at ${sdk.median.toFixed(0)} ms (${sdk.spread})`,
      )
    }
    console.log(
      `  load average and machine speed before / after: ${before} / ${after} (${cpus().length} cores)`,
    )
    printSteps(labels, cold)
  } finally {
    for (const r of running) await r.stop()
    rmSync(dirname(dirs.modal), { recursive: true, force: true })
  }
}

/** The JavaScript a built modal page loads before its landing: its index.html's scripts. */
function landingScripts(modalDir: string): { files: number; raw: number; gzip: number } {
  const html = readFileSync(join(modalDir, 'index.html'), 'utf8')
  const files = [...html.matchAll(/<(?:script|link)[^>]+(?:src|href)="\/(assets\/[^"]+\.js)"/g)]
  const bodies = files.map((m) => readFileSync(join(modalDir, m[1] as string)))
  return {
    files: bodies.length,
    raw: bodies.reduce((sum, b) => sum + b.length, 0),
    gzip: bodies.reduce((sum, b) => sum + gzipSize(b), 0),
  }
}

/** Runs the benchmark and prints a table. */
export default async function run(args: string[] = []): Promise<void> {
  const runs = parseCount(args, '--runs', 25, MIN_RUNS)
  const coldRuns = parseCount(args, '--cold-runs', 15, MIN_COLD_RUNS)
  const methods =
    flagText(args, '--login-methods', 'login methods, e.g. email,sms') ?? COLD_OPEN_LOGIN_METHODS
  if (args.includes('--cold-only')) {
    await runColdOnly(args, coldRuns, methods)
    return
  }
  console.log(
    `[bench frames] starting the harness, then ${runs} page loads and ${coldRuns} cold opens (CPU ${CPU_THROTTLE}x slower, login methods ${methods}) in headless Chromium…`,
  )
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
    // Both renderers' builds (modal-app/renderer.ts): the harness's (React DOM unless
    // LATCH_MODAL_RENDERER says otherwise) and the other one's modal with the same SDK.
    const mine = modalRenderer()
    const other: ModalRenderer = mine === 'react' ? 'preact' : 'react'
    // The React DOM build twice: the landing rendered by the modal server (its default) and by
    // the client alone (server rendering off), alternated with the rest in one run.
    const builds: { renderer: ModalRenderer; dirs: FrontendDirs; ssr: boolean }[] = [
      { renderer: mine, dirs: FRONTEND_DIRS, ssr: true },
      {
        renderer: other,
        dirs: { modal: await buildModalOnce(other), sdk: FRONTEND_DIRS.sdk },
        ssr: true,
      },
    ]
    const react = builds.find((b) => b.renderer === 'react')
    if (react) builds.push({ ...react, ssr: false })
    const loadBefore = load()
    // The cold opens get servers of their own (forkServers), one child per build, and alternate
    // between the builds so that both meet the same load of the shared cores.
    const running: Awaited<ReturnType<typeof forkServers>>[] = []
    const coldTimes = await (async () => {
      for (const build of builds) running.push(await forkServers(build.dirs, methods, build.ssr))
      return coldOpens(
        running.map((r) => r.servers),
        coldRuns,
      )
    })().finally(async () => {
      for (const r of running) await r.stop()
    })
    const [cold, coldOther, coldClient] = coldTimes.map((c) => summarize(c))
    if (!cold || !coldOther || !coldClient) throw new Error('the cold opens measured no build')
    const modalGzip = modalScripts.reduce((sum, s) => sum + gzipSize(s.body), 0)
    const modalRaw = modalScripts.reduce((sum, s) => sum + s.body.length, 0)
    const otherLanding = landingScripts(builds[1]?.dirs.modal ?? '')
    const kb = (n: number) => `${(n / KB).toFixed(1)} KB`
    const ms = (n: number) => `${n.toFixed(1)} ms`
    const byRenderer = (r: ModalRenderer) => (r === 'react' ? 'React DOM' : 'Preact')
    const reactCold = mine === 'react' ? cold : coldOther
    const preact = mine === 'react' ? coldOther : cold

    console.log('')
    console.log(
      table([
        ['host script sdk.js (gzip)', kb(gzipSize(sdk)), '≤ 6 KB'],
        ['host ESM entry latch.js (gzip)', kb(gzipSize(esm)), '≤ 6 KB'],
        [
          `modal JS before the landing, ${byRenderer(mine)} (gzip, ${modalScripts.length} file(s), ${kb(modalRaw)} raw)`,
          kb(modalGzip),
          '≤ 90 KB',
        ],
        [
          `modal JS before the landing, ${byRenderer(other)} build (gzip, ${otherLanding.files} file(s), ${kb(otherLanding.raw)} raw)`,
          kb(otherLanding.gzip),
          '≤ 90 KB',
        ],
        [`login() → landing painted, median of ${runs}`, ms(percentile(times, 50)), '≤ 50 ms'],
        ['login() → landing painted, p90', ms(percentile(times, 90)), ''],
        [
          'login() → landing painted, min / max',
          `${ms(times[0] ?? 0)} / ${ms(times.at(-1) ?? 0)}`,
          '',
        ],
        ...[reactCold, coldClient, preact].flatMap((c, i): [string, string, string][] => {
          const name = [
            'React DOM, server-rendered landing',
            'React DOM, client-rendered',
            'Preact',
          ][i]
          return [
            [
              `cold open, ${name}, CPU ${CPU_THROTTLE}x: navigation → landing painted, median of ${coldRuns}`,
              ms(c.total.median),
              i === 0 ? '≤ 300 ms' : i === 1 ? '≤ 500 ms' : '',
            ],
            [`cold open, ${name}, min–max`, c.total.spread, ''],
            [
              `cold open, ${name}, in the modal frame (navigation → landing painted), median`,
              ms(c.frame.median),
              '',
            ],
            [`cold open, ${name}, in the modal frame, min–max`, c.frame.spread, ''],
          ]
        }),
        [
          'cold open, React DOM server-rendered / client-rendered (medians; in the modal frame)',
          `${(reactCold.total.median / coldClient.total.median).toFixed(2)} (${(reactCold.frame.median / coldClient.frame.median).toFixed(2)})`,
          '',
        ],
        [
          'cold open, React DOM / Preact, both client-rendered (medians; in the modal frame)',
          `${(coldClient.total.median / preact.total.median).toFixed(2)} (${(coldClient.frame.median / preact.frame.median).toFixed(2)})`,
          '',
        ],
      ]),
    )
    for (const [name, c] of [
      ['React DOM, server-rendered landing', reactCold],
      ['React DOM, client-rendered', coldClient],
      ['Preact', preact],
    ] as const) {
      console.log(
        `  ${name} cold opens in order (alternated with the others): ${c.total.order} ms (in the frame: ${c.frame.order})`,
      )
    }
    console.log(
      `  load average and machine speed before / after the cold opens: ${loadBefore} / ${load()} (${cpus().length} cores)`,
    )
    for (const s of modalScripts) {
      console.log(`  ${new URL(s.url).pathname}: ${kb(gzipSize(s.body))} gzip`)
    }
  } finally {
    await h.close()
  }
}
