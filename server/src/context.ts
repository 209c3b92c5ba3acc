/** The dependencies every route and service receives. */
import type { Config } from './config.ts'
import type { Secrets } from './crypto.ts'
import type { Db } from './db/index.ts'
import type { Delivery } from './delivery.ts'
import type { KeyStore } from './keys.ts'
import type { Logger } from './ops/log.ts'
import type { Metrics } from './ops/metrics.ts'
import type { PriceSource } from './price/source.ts'

export interface Clock {
  now(): Date
}

/** One line of server log; the caller may replace it. */
export type Log = (line: string) => void

export interface Deps {
  db: Db
  config: Config
  keys: KeyStore
  clock: Clock
  log: Log
  secrets: Secrets
  delivery: Delivery
  price: PriceSource
  /** Structured lines and request lines (ops/log.ts); `log` is its `line`. */
  logger: Logger
  /** Null unless LATCH_METRICS=1 (ops/metrics.ts). */
  metrics: Metrics | null
}

export const systemClock: Clock = { now: () => new Date() }
