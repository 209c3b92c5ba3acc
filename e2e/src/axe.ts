/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules) inside a page or the modal's frame and fails with a
 * readable list of violations. The flows call it on every screen they reach (`visit` in
 * flows.ts), so each screen a spec walks through is held to it (each distinct document once per
 * run: see `passed`).
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { HOST_ELEMENT_IDS } from '@latch/shared'
import type { Frame, Page } from 'playwright-core'
import { runAxePassesDir } from './axe-passes.ts'
import { WAIT_MS, withTimeout } from './harness.ts'

export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] as const

let source: string | undefined
/** axe-core's browser build, read once per run. */
export function axeSource(): string {
  source ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
  return source
}

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string; summary: string }[]
}

/** One line per offending element: rule, impact, selector and axe's own explanation. */
export function formatViolations(where: string, violations: AxeViolation[]): string {
  const lines = violations.flatMap((v) =>
    v.nodes.map(
      (n) =>
        `- ${v.id} (${v.impact ?? 'n/a'}): ${v.help}\n    at ${n.target}\n    ${n.summary.replaceAll('\n', '\n    ')}`,
    ),
  )
  return `axe found ${violations.length} violation(s) on ${where}:\n${lines.join('\n')}`
}

/**
 * Runs in the page (serialized by the driver): axe over this document only (each document is
 * checked on its own: the modal's frame is cross-origin to the page), its violations as plain
 * data.
 */
export async function runAxeInPage(tags: string[]): Promise<AxeViolation[]> {
  type AxeNode = { target: unknown[]; failureSummary?: string }
  type AxeResult = { id: string; impact?: string | null; help: string; nodes: AxeNode[] }
  const axe = (
    window as unknown as {
      axe: { run(ctx: Document, o: unknown): Promise<{ violations: AxeResult[] }> }
    }
  ).axe
  const result = await axe.run(document, {
    runOnly: { type: 'tag', values: tags },
    resultTypes: ['violations'],
    iframes: false,
  })
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact ?? null,
    help: v.help,
    nodes: v.nodes.map((n) => ({
      target: n.target.map(String).join(' '),
      summary: n.failureSummary ?? '',
    })),
  }))
}

/** The violations axe reports for the document of a page or frame (nothing thrown). */
export async function axeViolations(target: Page | Frame): Promise<AxeViolation[]> {
  // Evaluated over the debugging protocol, so the modal's Content-Security-Policy does not apply.
  const loaded = await target.evaluate('typeof window.axe === "object"')
  if (!loaded) await target.evaluate(axeSource())
  return withTimeout(target.evaluate(runAxeInPage, [...AXE_TAGS]), WAIT_MS, 'the axe run')
}

/** Each page's modal frame as last found (modalFrame). */
const modalFrames = new WeakMap<Page, Frame>()

/**
 * The modal's frame inside a host page (playwright's Frame, which axe is evaluated in). Found
 * through the host page's iframe element once, then kept until Playwright reports it detached
 * (a reload, a navigation of the page, the element removed): finding it costs two round trips
 * to the browser, and the flows ask for it on every screen they visit.
 */
export async function modalFrame(page: Page): Promise<Frame> {
  const known = modalFrames.get(page)
  if (known && !known.isDetached()) return known
  const handle = await page.locator(`[data-testid="${HOST_ELEMENT_IDS.frame}"]`).elementHandle()
  const frame = await handle?.contentFrame()
  await handle?.dispose()
  if (!frame) throw new Error('the modal frame is not on the page')
  modalFrames.set(page, frame)
  return frame
}

/**
 * What axe's verdict on a document depends on: its markup (the theme's tokens are in the root's
 * style attribute, the build's stylesheets in its links and style elements), the viewport and
 * the emulated media. Left out:
 * - what no WCAG A or AA rule of axe reads: scripts, module preloads, metadata other than the
 *   viewport's and a refresh, a frame's address;
 * - the words: a text, or an attribute that names or labels an element, becomes `a` unless it
 *   is blank (then empty). The rules judge whether an element has a name or text, its colours
 *   and size, never which words it says nor how many; most screens show the app's name, a
 *   visitor's own address or a count, whose words and punctuation differ from one visitor or
 *   app to the next, so each app's and visitor's screen was a new document;
 * - the ids' spelling (React's differ between a rendered and a hydrated page): each id is
 *   renamed by its order in the document, and every reference to it with it, so which element
 *   labels or describes which, and a duplicate id, are kept.
 */
function snapshot(target: Page | Frame): Promise<string> {
  return target.evaluate(() => {
    const shape = (text: string) => (/\S/u.test(text) ? 'a' : '')
    const copy = document.documentElement.cloneNode(true) as HTMLElement
    const unread = 'script, link[rel="modulepreload"], meta:not([name="viewport"], [http-equiv])'
    for (const element of copy.querySelectorAll(unread)) element.remove()
    for (const frame of copy.querySelectorAll('iframe[src]')) frame.setAttribute('src', '')
    const worded = ['aria-label', 'aria-valuetext', 'title', 'alt', 'placeholder', 'value']
    const referring = [
      'for',
      'aria-labelledby',
      'aria-describedby',
      'aria-controls',
      'aria-owns',
      'aria-activedescendant',
      'aria-errormessage',
      'aria-details',
      'headers',
      'list',
      'form',
    ]
    const ids = new Map<string, string>()
    for (const element of copy.querySelectorAll('[id]')) {
      const id = element.id
      if (!ids.has(id)) ids.set(id, `id${ids.size}`)
      element.id = ids.get(id) ?? id
    }
    const rename = (value: string) =>
      value
        .split(/\s+/)
        .map((token) => ids.get(token) ?? token)
        .join(' ')
    for (const element of copy.querySelectorAll('*')) {
      for (const name of worded) {
        const value = element.getAttribute(name)
        if (value !== null) element.setAttribute(name, shape(value))
      }
      for (const name of referring) {
        const value = element.getAttribute(name)
        if (value !== null) element.setAttribute(name, rename(value))
      }
      const href = element.getAttribute('href')
      if (href?.startsWith('#')) element.setAttribute('href', `#${rename(href.slice(1))}`)
    }
    const texts = document.createTreeWalker(copy, NodeFilter.SHOW_TEXT)
    for (let node = texts.nextNode(); node; node = texts.nextNode()) {
      if (node.parentElement?.tagName !== 'STYLE') (node as Text).data = shape((node as Text).data)
    }
    return [
      copy.outerHTML,
      innerWidth,
      innerHeight,
      devicePixelRatio,
      matchMedia('(prefers-color-scheme: dark)').matches,
      matchMedia('(prefers-reduced-motion: reduce)').matches,
    ].join('\n')
  })
}

/**
 * Documents axe passed in this run, by their snapshot: in this worker (its spec files share this
 * module) and in the run's other workers (axe-passes.ts: a file per snapshot). The same screen
 * in the same state recurs in most specs (the landing before every sign-in), in every worker;
 * axe's verdict on documents of the same snapshot is the same, so it runs once per distinct
 * one. Injecting axe into a new document and running it took 165-460 ms on the landing.
 */
const passed = new Set<string>()

/** Forgets this worker's passes (not the run's): for the spec of the sharing itself. */
export function forgetWorkerPasses(): void {
  passed.clear()
}

/**
 * Fails with every violation axe finds on the page or frame; `where` names it in the message.
 * @example await expectAccessible(await modalFrame(hp.page), 'the code screen')
 */
export async function expectAccessible(target: Page | Frame, where: string): Promise<void> {
  const before = await snapshot(target)
  const key = createHash('sha256').update(before).digest('hex')
  if (passed.has(key)) return
  const dir = runAxePassesDir()
  const shared = join(dir, key)
  if (existsSync(shared)) {
    passed.add(key)
    return
  }
  const violations = await axeViolations(target)
  if (violations.length > 0) throw new Error(formatViolations(where, violations))
  // Kept only if the document did not change while axe ran: the pass is then the snapshot's.
  if ((await snapshot(target)) === before) {
    passed.add(key)
    mkdirSync(dir, { recursive: true })
    writeFileSync(shared, where)
  }
}

/** axe over the modal's frame in a host page, e.g. once an error shows on a screen. */
export async function expectModalAccessible(page: Page, where: string): Promise<void> {
  await expectAccessible(await modalFrame(page), where)
}
