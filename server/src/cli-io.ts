/**
 * What a `latch` command prints to and reads its environment from. Its own file, below cli.ts
 * and every command file, so a command needs nothing from the dispatcher that calls it.
 */
import type { Env } from './config.ts'

export interface CliIo {
  out(text: string): void
  err(text: string): void
  env: Env
}
