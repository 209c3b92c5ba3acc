/**
 * The programmatic entry: `startServer()` opens the database, builds the app and listens.
 * `npm start`, the CLI and the end-to-end harness all start the API through it.
 */
import type { AddressInfo } from 'node:net'
import type { ServerAppConfig } from '@latch/shared'
import type { Kysely } from 'kysely'
import { createApi } from './api.ts'
import {
  type AppInput,
  createAppRecord,
  listApps,
  toServerAppConfig,
  updateAppRecord,
} from './apps/service.ts'
import {
  type Config,
  ConfigError,
  type Env,
  insecureOriginMessage,
  isSecureOrigin,
  loadConfig,
} from './config.ts'
import { type Clock, type Deps, type Log, systemClock } from './context.ts'
import { createSecrets } from './crypto.ts'
import { openDatabase, type PgliteSource } from './db/index.ts'
import { createDelivery } from './delivery.ts'
import { createKeyStore } from './keys.ts'
import { listen } from './listen.ts'
import { databaseReadiness, type ReadinessCheck, withProbes } from './ops/health.ts'
import { createLogger, secretValues } from './ops/log.ts'
import { createMetrics, smsSpend, withMetrics } from './ops/metrics.ts'
import { migrationState } from './ops/migrations.ts'
import { closeGracefully } from './ops/shutdown.ts'
import { createPriceSource } from './price/source.ts'
import { startSweeper } from './sweep.ts'
import { upgradeWalletRecords } from './wallets/reseal.ts'
import { startWebhookWorker } from './webhooks/worker.ts'

export { createAppSecret } from './admin/secrets.ts'
export { createApi } from './api.ts'
export type { AppInput, AppRecord } from './apps/service.ts'
export type { Config } from './config.ts'
export { ConfigError, loadConfig } from './config.ts'
export type { Clock, Deps, Log } from './context.ts'

export interface StartOptions {
  port?: number
  host?: string
  /** Overrides process.env, key by key. */
  env?: Env
  /** Where log lines go (default: stdout). Codes printed without SMTP/Twilio arrive here. */
  log?: Log
  /** Time source (tests move it forward). */
  clock?: Clock
  /**
   * Bring the database schema up to date at start (the default, for `npm start` and tests).
   * False: refuse to start unless the schema is current (`latch serve` without `--migrate`).
   */
  migrate?: boolean
  /** A PGlite data folder (dumpDataDir) an in-memory database starts from, e.g. a migrated one. */
  pgliteData?: Blob
  /** Where an in-memory database comes from instead of a new PGlite (openDatabase's). */
  pglite?: PgliteSource
}

export interface Admin {
  createApp(input: AppInput): Promise<ServerAppConfig>
  updateApp(id: string, patch: Partial<AppInput>): Promise<ServerAppConfig>
}

export interface RunningServer {
  url: string
  /** Stops at once: open connections are cut (tests, the demo). */
  close(): Promise<void>
  /**
   * Stops accepting, lets requests under way finish within `deadlineMs`, then closes the
   * database pool (SIGTERM in `latch serve`). Resolves with whether all finished in time.
   */
  shutdown(deadlineMs: number): Promise<boolean>
  /** Whether the database answers and its schema is current (what /readyz answers). */
  ready: ReadinessCheck
  admin: Admin
  deps: Deps
}

export interface Services {
  deps: Deps
  admin: Admin
  close(): Promise<void>
}

const defaultLog: Log = (line) => console.log(line)

/** Production admits host pages on https: (or loopback) only: refuses the first other origin. */
function checkAllowedOrigins(config: Config, origins: readonly string[] | undefined): void {
  if (!config.production || !origins) return
  const bad = origins.find((o) => URL.canParse(o) && !isSecureOrigin(o))
  if (bad !== undefined) throw new ConfigError(insecureOriginMessage('the allowed origin', bad))
}

/** SMTP_URL's password as written (percent-encoded) and as sent. */
function smtpPassword(smtpUrl: string | null): string[] {
  if (!smtpUrl || !URL.canParse(smtpUrl)) return []
  const written = new URL(smtpUrl).password
  try {
    return [written, decodeURIComponent(written)]
  } catch {
    return [written]
  }
}

/** Everything but the listener: database, keys, delivery. The CLI uses it for `apps`. */
export async function openServices(
  opts: Omit<StartOptions, 'port' | 'host'> = {},
): Promise<Services> {
  const env: Env = { ...process.env, ...opts.env }
  const config = loadConfig(env)
  const logger = createLogger(opts.log ?? defaultLog, config.logFormat, {
    secrets: secretValues([
      config.secret,
      config.secretPrevious,
      ...smtpPassword(config.smtpUrl),
      config.twilio?.authToken,
      config.metrics?.token,
      config.adminKey,
    ]),
  })
  const log = logger.line
  const secrets = createSecrets(config.secret, config.secretPrevious)
  const database = await openDatabase(config, {
    migrate: opts.migrate ?? true,
    secrets,
    ...(opts.pgliteData ? { pgliteData: opts.pgliteData } : {}),
    ...(opts.pglite ? { pglite: opts.pglite } : {}),
  })
  if (opts.migrate === false) {
    const { pending } = await migrationState(database.db as Kysely<unknown>).catch(
      async (e: unknown) => {
        await database.close()
        throw e
      },
    )
    if (pending.length > 0) {
      await database.close()
      throw new ConfigError(
        `The database schema is not current: ${pending.length} migration(s) pending (${pending.join(', ')}). Run: npm run latch -- migrate, or start with --migrate (LATCH_MIGRATE=1)`,
      )
    }
  }
  const clock = opts.clock ?? systemClock
  const keys = createKeyStore({
    db: database.db,
    secrets,
    clock,
    issuer: config.issuer,
    accessTokenTtlS: config.accessTokenTtlS,
    log,
  })
  const delivery = createDelivery(config, log)
  const deps: Deps = {
    db: database.db,
    config,
    keys,
    clock,
    log,
    secrets,
    delivery,
    price: createPriceSource(config.priceUrl, clock),
    logger,
    metrics: config.metrics
      ? createMetrics({
          ...(database.poolStats ? { pool: database.poolStats } : {}),
          sms: { spend: smsSpend(database.db, clock, config.smsBudget), budget: config.smsBudget },
        })
      : null,
  }
  const admin: Admin = {
    createApp: async (input) => {
      checkAllowedOrigins(config, input.allowedOrigins)
      return toServerAppConfig(deps, await createAppRecord(deps, input))
    },
    updateApp: async (id, patch) => {
      checkAllowedOrigins(config, patch.allowedOrigins)
      return toServerAppConfig(deps, await updateAppRecord(deps, id, patch))
    },
  }
  return {
    deps,
    admin,
    async close() {
      delivery.close()
      await database.close()
    },
  }
}

/**
 * Starts the API. Port 0 picks a free port; `url` names the one chosen.
 * @example const api = await startServer({ port: 0, env: { DATABASE_URL: 'memory://' } })
 */
export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const services = await openServices(opts)
  const { deps } = services
  const ready = databaseReadiness(deps.db as Kysely<unknown>)
  const upgraded = await upgradeWalletRecords(deps)
  if (upgraded > 0) deps.log(`[latch] sealed ${upgraded} wallet record(s) again with their place`)
  if (deps.config.production) {
    // Apps made before production (or under an older version) may still list http: pages.
    // The CLI opens services without this check, so `apps update` can still fix them.
    try {
      for (const app of await listApps(deps)) {
        const bad = app.allowedOrigins.find((o) => !isSecureOrigin(o))
        if (bad !== undefined) {
          throw new ConfigError(
            `${insecureOriginMessage(`app ${app.id}'s allowed origin`, bad)}; change it with: npm run latch -- apps update ${app.id} --remove-origin ${bad}`,
          )
        }
      }
    } catch (e) {
      await services.close()
      throw e
    }
  }
  const host = opts.host ?? deps.config.host
  const port = opts.port ?? deps.config.port
  const api = createApi(deps)
  const stopSweeping = startSweeper(deps.db, deps.clock, deps.log, {
    analyticsRetentionDays: deps.config.analyticsRetentionDays,
    auditRetentionDays: deps.config.auditRetentionDays,
  })
  // Every API process delivers webhooks; the sweeper's stop stops that loop too.
  const stopWebhooks = startWebhookWorker(deps)
  const stopSweeper = () => {
    stopSweeping()
    void stopWebhooks()
  }
  let server: Awaited<ReturnType<typeof listen>>
  try {
    const metrics = deps.metrics
    const token = deps.config.metrics?.token
    const fetch = metrics && token ? withMetrics(api.fetch, metrics, token) : api.fetch
    server = await listen(withProbes(fetch, ready), port, host, deps.log, deps.config.http)
  } catch (e) {
    stopSweeper()
    await services.close()
    throw e
  }
  const address = server.address() as AddressInfo
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${urlHost}:${address.port}`
  if (deps.config.secretGenerated && deps.config.dataDir) {
    deps.log(`[latch] using the generated secret in ${deps.config.dataDir}`)
  }
  let closing: Promise<void> | undefined
  return {
    url,
    admin: services.admin,
    deps,
    ready,
    async shutdown(deadlineMs) {
      stopSweeper()
      if (closing) {
        await closing
        return true
      }
      const inTime = closeGracefully(server, deadlineMs)
      closing = inTime.then(() => services.close())
      await closing
      return inTime
    },
    close() {
      stopSweeper()
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Keep-alive sockets would hold close() open; end them.
        server.closeAllConnections()
      }).then(() => services.close())
      return closing
    },
  }
}
