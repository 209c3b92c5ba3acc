/**
 * CPU seconds (user and system) of every process a command starts, Chromium's and the other
 * browsers' included, which `time` misses when a process is not waited for by its parent.
 * The machine's speed drifts, so the suite's savings are compared in CPU seconds, before and
 * after alternated (docs/performance.md).
 *
 *   npx tsx scripts/cpu-seconds.ts npx vitest run --project e2e src/email-login.spec.ts
 *
 * Prints `CPU <s>, wall <s>, exit <code>; <the costliest process names>` on stderr at the end
 * and exits with the command's code. Chromium's processes are named by their kind
 * (`chromium:renderer`, `chromium:gpu-process`, `chromium:browser` for the one without a
 * `--type`), as their costs differ in kind: the pages' work against the browser's own. Linux
 * only: it samples /proc every 200 ms and counts each process of the command's tree (children,
 * and whatever joined its session) at its last sample.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { readProcesses } from './proc-stat.ts'

const [command, ...args] = process.argv.slice(2)
if (!command) {
  console.error('usage: npx tsx scripts/cpu-seconds.ts <command> [args...]')
  process.exit(2)
}
const SAMPLE_MS = 200

const child = spawn(command, args, { stdio: 'inherit', detached: true })
const root = child.pid
if (root === undefined) throw new Error(`could not start ${command}`)
const tree = new Set([root])
/** Per process (pid and start time, as pids are reused): its name and its CPU seconds so far. */
const seen = new Map<string, { name: string; cpu: number }>()
const started = Date.now()

function sample(): void {
  const rows = readProcesses()
  for (let grew = true; grew; ) {
    grew = false
    for (const { pid, parent, session } of rows) {
      if (!tree.has(pid) && (tree.has(parent) || session === root)) {
        tree.add(pid)
        grew = true
      }
    }
  }
  for (const { pid, key, name, cpu } of rows) {
    if (!tree.has(pid)) continue
    const known = seen.get(key)
    // Named at each sample: a child of Chromium's zygote shows the zygote's command line until
    // it has set up its own, and an ended one none.
    const named = label(pid, name)
    if (!known || known.cpu <= cpu) {
      seen.set(key, { name: named === name && known ? known.name : named, cpu })
    }
  }
}

/**
 * A process's name in the summary: Chromium's with the kind its command line gives (/proc
 * names them `chromium`, or for a while after their start `exe` or a thread's name).
 */
function label(pid: number, name: string): string {
  let argv: string[]
  try {
    // Chromium's helpers rewrite theirs as one string, the arguments apart by spaces.
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/)
  } catch {
    return name
  }
  if (!/^chrom(e|ium)$/.test(argv[0]?.split('/').pop() ?? '')) return name
  const flag = (prefix: string) => argv.find((a) => a.startsWith(prefix))?.slice(prefix.length)
  const service = flag('--utility-sub-type=')
  return `chromium:${flag('--type=') ?? 'browser'}${service ? `:${service}` : ''}`
}

const timer = setInterval(sample, SAMPLE_MS)
child.on('exit', (code) => {
  clearInterval(timer)
  const byName = new Map<string, number>()
  let total = 0
  for (const { name, cpu } of seen.values()) {
    total += cpu
    byName.set(name, (byName.get(name) ?? 0) + cpu)
  }
  const top = [...byName]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([name, cpu]) => `${name} ${cpu.toFixed(1)}`)
    .join(', ')
  const wall = ((Date.now() - started) / 1000).toFixed(1)
  console.error(`\nCPU ${total.toFixed(1)} s, wall ${wall} s, exit ${code}; ${top}`)
  process.exit(code ?? 1)
})
