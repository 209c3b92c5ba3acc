/** The dependencies every route and service receives. */
import type { Clock, Log } from './clock.ts'
import type { Config } from './config.ts'
import type { Secrets } from './crypto.ts'
import type { Db } from './db/index.ts'
import type { Delivery } from './delivery.ts'
import type { KeyStore } from './keys.ts'
import type { Logger } from './ops/log.ts'
import type { Metrics } from './ops/metrics.ts'
import type { PriceSource } from './price/source.ts'

export { type Clock, type Log, systemClock } from './clock.ts'

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
