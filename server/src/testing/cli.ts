/** Test support: one `latch` command run in process, as a terminal would run it. */
import { runCli } from '../cli.ts'
import type { Env } from '../config.ts'

export interface CliRun {
  code: number
  /** What the command printed, each line ending in a newline. */
  out: string
  err: string
}

/** Runs `latch <argv…>` with `env` and resolves with its exit code and what it printed. */
export async function latchCli(env: Env, ...argv: string[]): Promise<CliRun> {
  let out = ''
  let err = ''
  const code = await runCli(argv, {
    out: (t) => {
      out += `${t}\n`
    },
    err: (t) => {
      err += `${t}\n`
    },
    env,
  })
  return { code, out, err }
}
