/**
 * `npx tsx scripts/trace-tasks.ts <trace.json>...`: what the page's renderer main thread did
 * from the host page's commit to the cold open's end (the last first contentful paint: the
 * modal frame's), over many traced opens (`npm run bench -- frames --cold-only --trace <dir>`;
 * pass one build's or page's files, e.g. `<dir>/cold-open-0-*.json`). Each task counts under
 * the first kind of work found in it (the order of `KINDS`), up to the paint; prints each kind's
 * median over the opens, and how much of the time to the paint the thread was busy.
 */
import { eventUrl, mainThread, type Node, readTrace, type TraceEvent, tree } from './trace-read.ts'

/** Where an event's URL points: `sdk.js`, the modal's built scripts, the host page, the frame. */
type Place = 'sdk' | 'assets' | 'host' | 'frame' | 'other'

/** The kinds of task, tried in this order on the events inside each task. */
const KINDS: { kind: string; names: string[]; place?: (p: Place) => boolean }[] = [
  { kind: 'sdk.js', names: ['EvaluateScript'], place: (p) => p === 'sdk' },
  {
    kind: "the frame's parse with its inline scripts",
    names: ['EvaluateScript'],
    place: (p) => p === 'frame',
  },
  { kind: "the host page's scripts", names: ['EvaluateScript'] },
  {
    kind: 'a message from the other frame (the painted landing: the show)',
    names: ['HandlePostMessage'],
  },
  { kind: "the host page's parse", names: ['ParseHTML'], place: (p) => p === 'host' },
  { kind: "the frame's parse", names: ['ParseHTML'] },
  { kind: 'document commits', names: ['DocumentLoader::CommitNavigation'] },
  { kind: 'timers', names: ['TimerFire'] },
  { kind: 'animation frames and the rendering after them', names: ['FireAnimationFrame'] },
  {
    kind: 'rendering updates (style, layout, paint)',
    names: ['WebFrameWidgetImpl::UpdateLifecycle', 'UpdateLayoutTree', 'Layout', 'Paint'],
  },
  { kind: 'modules evaluated', names: ['v8.evaluateModule'] },
  { kind: 'other script calls', names: ['FunctionCall', 'v8.callFunction'] },
]
const OTHER = 'other tasks'

function flatten(node: Node, out: TraceEvent[] = []): TraceEvent[] {
  for (const child of node.children) {
    out.push(child.event)
    flatten(child, out)
  }
  return out
}

interface OpenTasks {
  /** The host page's commit → the last first contentful paint, ms. */
  span: number
  busy: number
  byKind: Map<string, number>
}

function readOpen(file: string): OpenTasks {
  const events = readTrace(file)
  const { onThread } = mainThread(events)
  const paints = events.filter((e) => e.name === 'firstContentfulPaint').map((e) => e.ts)
  const end = Math.max(...paints)
  // The host page parses first: its origin tells the host page from the frame.
  const firstParse = onThread.find((e) => e.name === 'ParseHTML' && /^https?:/.test(eventUrl(e)))
  if (!firstParse || !Number.isFinite(end)) throw new Error(`${file}: no page or no paint`)
  const hostOrigin = new URL(eventUrl(firstParse)).origin
  const start = onThread.find((e) => e.name === 'CommitLoad')?.ts ?? firstParse.ts
  const place = (e: TraceEvent): Place => {
    const url = eventUrl(e)
    if (/\/sdk\.js(\?|$)/.test(url)) return 'sdk'
    if (url.includes('/assets/')) return 'assets'
    if (!/^https?:/.test(url)) return 'other'
    return new URL(url).origin === hostOrigin ? 'host' : 'frame'
  }
  const byKind = new Map<string, number>()
  let busy = 0
  for (const root of tree(onThread)) {
    const task = root.event
    const taskEnd = Math.min(task.ts + (task.dur ?? 0), end)
    const from = Math.max(task.ts, start)
    if (task.name !== 'RunTask' || taskEnd <= from) continue
    const ms = (taskEnd - from) / 1000
    busy += ms
    const inside = flatten(root)
    const kind =
      KINDS.find(({ names, place: where }) =>
        inside.some((e) => names.includes(e.name) && (!where || where(place(e)))),
      )?.kind ?? OTHER
    byKind.set(kind, (byKind.get(kind) ?? 0) + ms)
  }
  return { span: (end - start) / 1000, busy, byKind }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const files = process.argv.slice(2)
if (files.length === 0) {
  console.error('usage: npx tsx scripts/trace-tasks.ts <trace.json>...')
  process.exit(2)
}
const opens = files.map(readOpen)
const fmt = (n: number) => n.toFixed(1).padStart(7)
console.log(
  `${opens.length} opens: the host page's commit → the frame's paint, median ${median(opens.map((o) => o.span)).toFixed(0)} ms; the main thread busy ${median(opens.map((o) => o.busy)).toFixed(0)} ms, idle ${median(opens.map((o) => o.span - o.busy)).toFixed(0)} ms (medians)`,
)
console.log('median ms by kind of task:')
const kinds = [...KINDS.map((k) => k.kind), OTHER]
for (const kind of kinds) {
  const value = median(opens.map((o) => o.byKind.get(kind) ?? 0))
  if (value > 0) console.log(`${fmt(value)}  ${kind}`)
}
