/**
 * Each test file's CPU seconds beside its wall time: a Vitest setup file that the projects
 * running in child processes load when LATCH_FILE_CPU names an output file (vite.config.ts).
 *
 *   LATCH_FILE_CPU=/tmp/files.tsv npx vitest run
 *
 * Appends one line per file: CPU seconds, wall seconds (from the file's first hook to its
 * last, its servers' start and stop included), the file's path. The CPU is the worker's and
 * every process under it (Chromium's, the other browsers', spawned servers and tools), each
 * counted at its last sample: /proc is read every 200 ms and at the file's start and end. A
 * file whose CPU is well under its wall time mostly waits (scripts/test-order.ts). What runs
 * outside the worker's process tree is not counted: the run's PostgreSQL (its backends serve
 * the server tests on PostgreSQL) and Vitest's own process. Linux only.
 */
import { appendFileSync } from 'node:fs'
import { afterAll, beforeAll, expect } from 'vitest'
import { readProcesses } from './proc-stat.ts'

const OUTPUT = process.env.LATCH_FILE_CPU

/**
 * Per process of the worker's tree (pid and start time, as pids are reused): its CPU seconds
 * when last seen. On globalThis: a worker that runs several files (isolate: false) loads this
 * module once per file, and the sampler started by the first must feed the later ones.
 */
const state = globalThis as { latchFileCpu?: { seen: Map<string, number> } }
state.latchFileCpu ??= { seen: new Map() }
const seen = state.latchFileCpu.seen

function sample(): void {
  const rows = readProcesses()
  const children = new Map<number, number[]>()
  for (const { pid, parent } of rows) children.set(parent, [...(children.get(parent) ?? []), pid])
  const byPid = new Map(rows.map((row) => [row.pid, row]))
  for (const pending = [process.pid]; pending.length > 0; ) {
    const pid = pending.pop() as number
    const own = byPid.get(pid)
    if (own) seen.set(own.key, Math.max(seen.get(own.key) ?? 0, own.cpu))
    pending.push(...(children.get(pid) ?? []))
  }
}

const total = () => [...seen.values()].reduce((sum, seconds) => sum + seconds, 0)

if (OUTPUT) {
  const sampler = globalThis as { latchFileCpuTimer?: NodeJS.Timeout }
  sampler.latchFileCpuTimer ??= setInterval(sample, 200)
  // The worker may exit while it runs.
  sampler.latchFileCpuTimer.unref()
  let cpuAtStart = 0
  let startedAt = 0
  beforeAll(() => {
    sample()
    cpuAtStart = total()
    startedAt = Date.now()
  })
  afterAll(() => {
    sample()
    const file = expect.getState().testPath ?? 'unknown'
    const wall = (Date.now() - startedAt) / 1000
    appendFileSync(OUTPUT, `${(total() - cpuAtStart).toFixed(2)}\t${wall.toFixed(2)}\t${file}\n`)
  })
}
