/**
 * `npx tsx scripts/trace-main-thread.ts <trace.json> [--from-url <part>] [--min <ms>]`: reads a
 * Chromium trace (from `npm run bench -- frames --cold-only --trace <dir>`) and prints what the
 * page's renderer main thread did, task by task: when (ms after the navigation of the first
 * document whose URL contains `--from-url`, else after the first task), how long, and the
 * named work inside (parsing, script evaluation and calls with their URL, style, layout, paint).
 * Then the totals by kind of work. Tasks shorter than `--min` (1 ms by default) are summed up
 * but not listed.
 */
import { readFileSync } from 'node:fs'

interface TraceEvent {
  name: string
  ph: string
  ts: number
  dur?: number
  pid: number
  tid: number
  args?: { name?: string; data?: Record<string, unknown> }
}

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

const parsed = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents?: TraceEvent[] }
const events = parsed.traceEvents ?? []

const mainThreads = events
  .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
  .map((e) => `${e.pid}:${e.tid}`)
// The page's renderer: the main thread that parsed http(s) documents (a trace holds every
// process of the browser).
const count = new Map<string, number>()
for (const e of events) {
  const key = `${e.pid}:${e.tid}`
  const url = (e.args as { beginData?: { url?: string } } | undefined)?.beginData?.url ?? ''
  if (mainThreads.includes(key) && e.name === 'ParseHTML' && /^https?:/.test(url)) {
    count.set(key, (count.get(key) ?? 0) + 1)
  }
}
const busiest = [...count.entries()].sort((a, b) => b[1] - a[1])[0]?.[0]
if (!busiest) throw new Error('no renderer main thread in the trace')
const onThread = events
  .filter((e) => `${e.pid}:${e.tid}` === busiest && e.ph === 'X' && e.dur !== undefined)
  .sort((a, b) => a.ts - b.ts)

const urlOf = (e: TraceEvent): string => {
  const a = (e.args ?? {}) as Record<string, Record<string, unknown> | undefined>
  const d = a.data ?? a.beginData ?? {}
  const raw = d.url ?? d.documentLoaderURL ?? d.stackTrace?.toString() ?? ''
  const s = String(raw)
  try {
    const u = new URL(s)
    return `${u.port ? `:${u.port}` : ''}${u.pathname.replace(/-[\w-]{8}\./, '.')}`
  } catch {
    return s.length > 30 ? `${s.slice(0, 30)}…` : s
  }
}

const navigations = events.filter(
  (e) =>
    (e.name === 'navigationStart' || e.name === 'CommitLoad') &&
    `${e.pid}:${e.tid}` === busiest &&
    (!fromUrl || JSON.stringify(e.args ?? {}).includes(fromUrl)),
)
const origin = navigations[0]?.ts ?? onThread[0]?.ts ?? 0
const ms = (us: number) => us / 1000

interface Node {
  event: TraceEvent
  children: Node[]
}

/** The thread's complete events as a tree, by nesting of their time spans. */
function tree(list: TraceEvent[]): Node[] {
  const roots: Node[] = []
  const stack: Node[] = []
  for (const event of list) {
    const end = event.ts + (event.dur ?? 0)
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as Node
      if (
        event.ts < top.event.ts + (top.event.dur ?? 0) &&
        end <= top.event.ts + (top.event.dur ?? 0)
      )
        break
      stack.pop()
    }
    const node: Node = { event, children: [] }
    const parent = stack[stack.length - 1]
    if (parent) parent.children.push(node)
    else roots.push(node)
    stack.push(node)
  }
  return roots
}

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
