/**
 * The machine's processes as /proc/<pid>/stat lists them, for the scripts that count CPU
 * seconds (cpu-seconds.ts for a command, file-cpu.ts per test file). Linux only.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const TICKS = 100

export interface ProcessStat {
  pid: number
  parent: number
  session: number
  name: string
  /** The pid and the process's start time: pids are reused, this is not. */
  key: string
  /** User and system CPU seconds so far (not its children's). */
  cpu: number
}

/** Every process readable now; one that ends while it is read is left out. */
export function readProcesses(): ProcessStat[] {
  const out: ProcessStat[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    const close = stat.lastIndexOf(')')
    // Fields after the name: state, ppid, pgrp, session, ... utime (12th), stime (13th), ...
    // starttime (20th).
    const fields = stat.slice(close + 2).split(' ')
    out.push({
      pid: Number(entry),
      parent: Number(fields[1]),
      session: Number(fields[3]),
      name: stat.slice(stat.indexOf('(') + 1, close),
      key: `${entry}:${fields[19]}`,
      cpu: (Number(fields[11]) + Number(fields[12])) / TICKS,
    })
  }
  return out
}
