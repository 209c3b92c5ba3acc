/**
 * `npx tsx scripts/trace-main-thread.ts <trace.json> [--from-url <part>] [--min <ms>]`: reads a
 * Chromium trace (from `npm run bench -- frames --cold-only --trace <dir>`) and prints what the
 * page's renderer main thread did, task by task: when (ms after the navigation of the first
 * document whose URL contains `--from-url`, else after the first task), how long, and the
 * named work inside (parsing, script evaluation and calls with their URL, style, layout, paint).
 * Then the totals by kind of work. Tasks shorter than `--min` (1 ms by default) are summed up
 * but not listed.
 */
import { mainThread, type Node, readTrace, type TraceEvent, tree, urlOf } from './trace-read.ts'

const NAMED = new Set([
  'ParseHTML',
  'EvaluateScript',
  'v8.compile',
  'v8.compileModule',
  'v8.evaluateModule',
  'FunctionCall',
  'EventDispatch',
  'TimerFire',
  'FireAnimationFrame',
  'RunMicrotasks',
  'V8.GCScavenger',
  'MajorGC',
  'MinorGC',
  'UpdateLayoutTree',
  'Layout',
  'PrePaint',
  'Paint',
  'Layerize',
  'Commit',
  'ParseAuthorStyleSheet',
  'CommitLoad',
  'ResourceSendRequest',
  'ResourceReceiveResponse',
  'ResourceFinish',
  'HTMLDocumentParser::FinishParsing',
  'DocumentLoader::CommitNavigation',
  'FrameLoader::CommitNavigation',
  'v8.callFunction',
  'v8.run',
])

function usage(): never {
  console.error(
    'usage: npx tsx scripts/trace-main-thread.ts <trace.json> [--from-url <part>] [--min <ms>]',
  )
  process.exit(2)
}

function option(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag)
  return i < 0 ? undefined : args[i + 1]
}

const args = process.argv.slice(2)
const file = args[0]
if (!file || file.startsWith('--')) usage()
const fromUrl = option(args, '--from-url')
const minMs = Number(option(args, '--min') ?? 1)

const events = readTrace(file)

const { busiest, onThread } = mainThread(events)

const navigations = events.filter(
  (e) =>
    (e.name === 'navigationStart' || e.name === 'CommitLoad') &&
    `${e.pid}:${e.tid}` === busiest &&
    (!fromUrl || JSON.stringify(e.args ?? {}).includes(fromUrl)),
)
const origin = navigations[0]?.ts ?? onThread[0]?.ts ?? 0
const ms = (us: number) => us / 1000

/** The named events under a node, outermost first, down to `depth` named levels. */
function named(node: Node, depth: number, out: { event: TraceEvent; depth: number }[], level = 0) {
  for (const child of node.children) {
    if (NAMED.has(child.event.name)) {
      out.push({ event: child.event, depth: level })
      if (level + 1 < depth) named(child, depth, out, level + 1)
    } else named(child, depth, out, level)
  }
  return out
}

const totals = new Map<string, number>()
let hidden = 0
let hiddenMs = 0
for (const root of tree(onThread)) {
  const parts = named(root, 3, [])
  for (const p of parts) {
    if (p.depth === 0)
      totals.set(p.event.name, (totals.get(p.event.name) ?? 0) + ms(p.event.dur ?? 0))
  }
  const taskMs = ms(root.event.dur ?? 0)
  if (taskMs < minMs) {
    hidden++
    hiddenMs += taskMs
    continue
  }
  console.log(
    `${ms(root.event.ts - origin)
      .toFixed(0)
      .padStart(6)} +${taskMs.toFixed(1).padStart(6)}  ${root.event.name}`,
  )
  for (const p of parts) {
    if (ms(p.event.dur ?? 0) < 1) continue
    const url = urlOf(p.event)
    console.log(
      `${' '.repeat(16 + 2 * p.depth)}${p.event.name}${url ? ` ${url}` : ''} ${ms(p.event.dur ?? 0).toFixed(1)}`,
    )
  }
}
console.log(`(${hidden} shorter tasks, ${hiddenMs.toFixed(1)} ms in all)`)
console.log('totals by kind (outermost named events):')
for (const [name, total] of [...totals.entries()].sort((a, b) => b[1] - a[1])) {
  console.log(`  ${total.toFixed(1).padStart(8)} ms  ${name}`)
}
