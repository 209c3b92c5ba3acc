/**
 * `latch serve`: the API (with the wallet frame, its export page and this release's npm packages
 * at /packages/, ops/packages.ts) and the modal origin (the
 * modal page, sdk.js, latch.js, provider.js, the wallet bridge) from one process, each on its
 * own port, from prebuilt assets. `npm start` runs the same code with its build cache's assets
 * and adds the demo host page.
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import {
  HOST_SDK_DIST_DIR,
  MODAL_DIST_DIR,
  type ModalServer,
  startModalServer,
} from '@latch/modal-app/server'
import {
  ConfigError,
  type Env,
  insecureOriginMessage,
  isSecureOrigin,
  logFormatFrom,
} from '../config.ts'
import type { Log } from '../context.ts'
import type { PgliteSource } from '../db/index.ts'
import { type RunningServer, startServer } from '../index.ts'
import { WALLET_FRAME_DIST } from '../wallets/frame.ts'
import { probeAnswer, READY_PATH, type Readiness, type ReadinessCheck } from './health.ts'
import { strictTransportSecurity } from './hsts.ts'
import { createLogger } from './log.ts'
import { closeGracefully, DEFAULT_SHUTDOWN_TIMEOUT_MS } from './shutdown.ts'

export type ServeMode = 'all' | 'api' | 'modal'

export const DEFAULT_MODAL_PORT = 8788
/** The connector origin's port (Coinbase Wallet's frame), when LATCH_CONNECTOR_ORIGIN is set. */
export const DEFAULT_CONNECTOR_PORT = 8789

export interface ServeOptions {
  /** Overrides process.env, key by key. */
  env?: Env
  /** Both origins (default), the API alone (`--api-only`) or the modal alone (`--modal-only`). */
  mode?: ServeMode
  /** Migrate the database at start (`--migrate`); otherwise LATCH_MIGRATE=1 decides. */
  migrate?: boolean
  /** The API's log (codes printed without SMTP/Twilio arrive here). */
  log?: Log
  /** The modal server's log; `log` when absent. */
  modalLog?: Log
  /** A PGlite data folder (dumpDataDir) an in-memory database starts from (startServer's). */
  pgliteData?: Blob
  /** Where an in-memory database comes from instead of a new PGlite (startServer's). */
  pglite?: PgliteSource
}

export interface RunningLatch {
  api: RunningServer | null
  modal: ModalServer | null
  /** What the modal page is told the API is (LATCH_PUBLIC_URL, else the API's local URL). */
  apiPublicUrl: string | null
  /** A line in the log, in LATCH_LOG_FORMAT (`serve`'s own lines: listening, stopping). */
  log: Log
  /** Stops accepting, lets requests under way finish within `deadlineMs`, closes the pool. */
  shutdown(deadlineMs?: number): Promise<boolean>
  /** Stops at once. */
  close(): Promise<void>
}

const nonEmpty = (value: string | undefined) => value?.trim() || null

function port(env: Env, name: string, fallback: number): number {
  const raw = nonEmpty(env[name])
  if (raw === null) return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new ConfigError(`${name} must be a port number from 0 to 65535, got '${raw}'`)
  }
  return n
}

/** LATCH_SHUTDOWN_TIMEOUT_MS: how long SIGTERM waits for requests under way. */
export function shutdownTimeoutMs(env: Env): number {
  const raw = nonEmpty(env.LATCH_SHUTDOWN_TIMEOUT_MS)
  if (raw === null) return DEFAULT_SHUTDOWN_TIMEOUT_MS
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0 || n > 600_000) {
    throw new ConfigError(
      `LATCH_SHUTDOWN_TIMEOUT_MS must be an integer from 0 to 600000, got '${raw}'`,
    )
  }
  return n
}

/**
 * LATCH_MODAL_SSR: whether the modal server renders the landing into its page (on by default;
 * modal-app/ssr.ts). A value that is neither on nor off is refused, not guessed.
 */
export function modalSsr(env: Env): boolean {
  const raw = nonEmpty(env.LATCH_MODAL_SSR)
  if (raw === null || /^(1|on|true|yes)$/i.test(raw)) return true
  if (/^(0|off|false|no)$/i.test(raw)) return false
  throw new ConfigError(`LATCH_MODAL_SSR must be on or off, got '${raw}'`)
}

/** Where each part's build is read from: the environment's folder, else the package's dist. */
export function assetDirs(env: Env): { modal: string; sdk: string; walletFrame: string } {
  const dir = (name: string, fallback: string) => {
    const value = nonEmpty(env[name])
    return value ? resolve(value) : fallback
  }
  return {
    modal: dir('LATCH_MODAL_DIR', MODAL_DIST_DIR),
    sdk: dir('LATCH_SDK_DIR', HOST_SDK_DIST_DIR),
    walletFrame: dir('LATCH_WALLET_FRAME_DIR', WALLET_FRAME_DIST),
  }
}

/** The built files `mode` serves that are missing, as absolute paths. */
export function missingAssets(env: Env, mode: ServeMode): string[] {
  const dirs = assetDirs(env)
  const files: string[] = []
  if (mode !== 'modal') {
    files.push(join(dirs.walletFrame, 'index.html'), join(dirs.walletFrame, 'export.html'))
  }
  if (mode !== 'api') {
    files.push(join(dirs.modal, 'index.html'))
    for (const name of ['sdk.js', 'latch.js', 'wallet-bridge.js', 'provider.js']) {
      files.push(join(dirs.sdk, name))
    }
  }
  return files.filter((file) => !existsSync(file))
}

/** The modal-only process is ready when the API it points at is. */
function remoteReadiness(apiBase: string): ReadinessCheck {
  return async (): Promise<Readiness> => {
    try {
      const res = await fetch(`${apiBase}${READY_PATH}`, { signal: AbortSignal.timeout(2_000) })
      await res.body?.cancel()
      return res.ok ? { ready: true } : { ready: false, reason: 'the API is not ready' }
    } catch {
      return { ready: false, reason: 'the API is unreachable' }
    }
  }
}

/**
 * Starts what `mode` names. Refuses, before opening anything, when the built assets are
 * missing (naming the command that builds them) and, with NODE_ENV=production, what the API
 * refuses (config.ts) plus a modal pointed at a plain-http API.
 */
export async function serveLatch(options: ServeOptions = {}): Promise<RunningLatch> {
  const env: Env = { ...process.env, ...options.env }
  const mode = options.mode ?? 'all'
  const log = options.log ?? ((line: string) => console.log(line))
  const logFormat = logFormatFrom(env)
  const production = env.NODE_ENV === 'production'
  const missing = missingAssets(env, mode)
  if (missing.length > 0) {
    throw new ConfigError(
      `Latch's built assets are missing (${missing.join(', ')}). Build them with: npm run build (or point LATCH_MODAL_DIR, LATCH_SDK_DIR and LATCH_WALLET_FRAME_DIR at a build)`,
    )
  }
  const dirs = assetDirs(env)
  const ssr = modalSsr(env)
  const modalPort = port(env, 'LATCH_MODAL_PORT', DEFAULT_MODAL_PORT)
  const modalHost = nonEmpty(env.LATCH_MODAL_HOST) ?? '127.0.0.1'
  const publicUrl = nonEmpty(env.LATCH_PUBLIC_URL)
  if (mode === 'modal' && publicUrl === null) {
    throw new ConfigError(
      "--modal-only needs LATCH_PUBLIC_URL, the API's public origin the modal page calls (e.g. https://api.example.com)",
    )
  }
  if (production && mode !== 'modal' && !nonEmpty(env.LATCH_MODAL_ORIGIN)) {
    // Without it CORS admits no page: the modal could not call the API, and every sign-in
    // would fail in the browser rather than here.
    throw new ConfigError(
      "NODE_ENV=production needs LATCH_MODAL_ORIGIN, the modal's public origin (e.g. https://auth.example.com): the API admits browser calls from it alone",
    )
  }
  if (production && publicUrl !== null && !isSecureOrigin(publicUrl)) {
    throw new ConfigError(insecureOriginMessage('LATCH_PUBLIC_URL', publicUrl))
  }
  // Coinbase Wallet's SDK runs on an origin of its own (docs/architecture.md, "Connect-only,
  // Coinbase Wallet and Phantom"): a second listener, offered only when its public origin is given.
  const connectorOrigin = nonEmpty(env.LATCH_CONNECTOR_ORIGIN)
  const modalOrigin = nonEmpty(env.LATCH_MODAL_ORIGIN)
  if (connectorOrigin !== null && mode !== 'api') {
    if (production && !isSecureOrigin(connectorOrigin)) {
      throw new ConfigError(insecureOriginMessage('LATCH_CONNECTOR_ORIGIN', connectorOrigin))
    }
    if (production && modalOrigin === null) {
      throw new ConfigError(
        "LATCH_CONNECTOR_ORIGIN needs LATCH_MODAL_ORIGIN, the modal's public origin: the only page that may frame Coinbase Wallet's connector frame",
      )
    }
  }

  let api: RunningServer | null = null
  if (mode !== 'modal') {
    const apiEnv: Env = { ...options.env }
    // On one machine without a proxy the modal's origin is its own port: CORS must admit it.
    if (mode === 'all' && !nonEmpty(env.LATCH_MODAL_ORIGIN) && !production && modalPort !== 0) {
      apiEnv.LATCH_MODAL_ORIGIN = `http://${modalHost}:${modalPort}`
    }
    api = await startServer({
      env: apiEnv,
      log,
      migrate: options.migrate === true || env.LATCH_MIGRATE === '1',
      ...(options.pgliteData ? { pgliteData: options.pgliteData } : {}),
      ...(options.pglite ? { pglite: options.pglite } : {}),
    })
  }

  let modal: RunningLatch['modal'] = null
  const apiPublicUrl = publicUrl ?? api?.url ?? null
  if (mode !== 'api' && apiPublicUrl !== null) {
    // The modal server reads app settings from the API: in this process the local address,
    // split across machines LATCH_API_INTERNAL_URL (else the public one).
    const lookup = api?.url ?? nonEmpty(env.LATCH_API_INTERNAL_URL) ?? apiPublicUrl
    const ready = api?.ready ?? remoteReadiness(lookup.replace(/\/+$/, ''))
    const relay = nonEmpty(env.LATCH_WALLETCONNECT_RELAY_URL)
    const keys = nonEmpty(env.LATCH_COINBASE_KEYS_URL)
    // The modal's own public origin; split across machines it may be unset, and the API's
    // public URL says whether the site is served over https.
    const hsts = strictTransportSecurity(
      production,
      nonEmpty(env.LATCH_MODAL_ORIGIN) ?? apiPublicUrl,
    )
    try {
      modal = await startModalServer({
        host: modalHost,
        port: modalPort,
        apiUrl: apiPublicUrl,
        lookupApiUrl: lookup,
        distDir: dirs.modal,
        sdkDir: dirs.sdk,
        log: createLogger(options.modalLog ?? log, logFormat).line,
        probe: (pathname) => probeAnswer(pathname, ready),
        ...(relay ? { walletConnectRelayUrl: relay } : {}),
        ...(keys ? { coinbaseKeysUrl: keys } : {}),
        ...(hsts ? { strictTransportSecurity: hsts } : {}),
        ...(modalOrigin ? { modalOrigin } : {}),
        // The landing rendered into the modal page (modal-app/ssr.ts) unless turned off.
        ...(ssr ? {} : { ssr: false }),
        ...(connectorOrigin
          ? {
              connectorOrigin,
              connectorPort: port(env, 'LATCH_CONNECTOR_PORT', DEFAULT_CONNECTOR_PORT),
              connectorHost: modalHost,
            }
          : {}),
      })
    } catch (e) {
      await api?.close()
      throw e
    }
  }

  return {
    api,
    modal,
    apiPublicUrl,
    log: api?.deps.log ?? createLogger(log, logFormat).line,
    async shutdown(deadlineMs = shutdownTimeoutMs(env)) {
      // Both drain side by side within one deadline; the modal has no pool to close.
      const inTime = await Promise.all([
        api ? api.shutdown(deadlineMs) : true,
        modal ? closeGracefully(modal.server, deadlineMs) : true,
        modal?.connector ? closeGracefully(modal.connector.server, deadlineMs) : true,
      ])
      return inTime.every(Boolean)
    },
    async close() {
      await Promise.all([api?.close(), modal?.close()])
    },
  }
}
