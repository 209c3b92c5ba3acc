/**
 * Reading a Chromium trace of a cold open (`npm run bench -- frames --cold-only --trace <dir>`):
 * the page's renderer main thread and its complete events as a tree. For
 * scripts/trace-main-thread.ts (one open, task by task) and scripts/trace-tasks.ts (many opens,
 * by kind of task).
 */

import { readFileSync } from 'node:fs'

export interface TraceEvent {
  name: string
  ph: string
  ts: number
  dur?: number
  pid: number
  tid: number
  args?: { name?: string; data?: Record<string, unknown> }
}

/** A trace file's events. */
export function readTrace(file: string): TraceEvent[] {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents?: TraceEvent[] }
  if (!parsed.traceEvents) throw new Error(`${file}: no trace events`)
  return parsed.traceEvents
}

/** An event's own data: `data`, or `beginData` for events that span a task. */
const eventData = (e: TraceEvent): Record<string, unknown> => {
  const a = (e.args ?? {}) as Record<string, Record<string, unknown> | undefined>
  return a.data ?? a.beginData ?? {}
}

/** The URL an event names, as recorded; '' when it names none. */
export const eventUrl = (e: TraceEvent): string => String(eventData(e).url ?? '')

/**
 * The page's renderer main thread: the one that parsed the most http(s) documents (a trace holds
 * every process of the browser), and its complete events in order of time.
 */
export function mainThread(events: TraceEvent[]): { busiest: string; onThread: TraceEvent[] } {
  const mainThreads = events
    .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
    .map((e) => `${e.pid}:${e.tid}`)
  const count = new Map<string, number>()
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`
    if (mainThreads.includes(key) && e.name === 'ParseHTML' && /^https?:/.test(eventUrl(e))) {
      count.set(key, (count.get(key) ?? 0) + 1)
    }
  }
  const busiest = [...count.entries()].sort((a, b) => b[1] - a[1])[0]?.[0]
  if (!busiest) throw new Error('no renderer main thread in the trace')
  const onThread = events
    .filter((e) => `${e.pid}:${e.tid}` === busiest && e.ph === 'X' && e.dur !== undefined)
    .sort((a, b) => a.ts - b.ts)
  return { busiest, onThread }
}

/** An event's URL as port and path (a build's hash taken out of file names). */
export const urlOf = (e: TraceEvent): string => {
  const d = eventData(e)
  const raw = d.url ?? d.documentLoaderURL ?? d.stackTrace?.toString() ?? ''
  const s = String(raw)
  try {
    const u = new URL(s)
    return `${u.port ? `:${u.port}` : ''}${u.pathname.replace(/-[\w-]{8}\./, '.')}`
  } catch {
    return s.length > 30 ? `${s.slice(0, 30)}…` : s
  }
}

export interface Node {
  event: TraceEvent
  children: Node[]
}

/** The thread's complete events as a tree, by nesting of their time spans. */
export function tree(list: TraceEvent[]): Node[] {
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
