/** Server configuration from the environment, and the data folder with its generated secret. */
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { isAbsolute, join, relative, resolve } from 'node:path'
import {
  BaseError,
  CHAINS,
  isSupportedChainId,
  OAUTH_PROVIDERS,
  validateOrigin,
} from '@latch/shared'
import { endpointsFromEnv, type ServerEndpointOverrides } from './oauth/settings.ts'
import { LOG_FORMATS, type LogFormat } from './ops/log.ts'
import { resolveRpId } from './passkeys/rp-id.ts'
import { parseTrustProxy, type TrustProxy } from './trust-proxy.ts'

export type Env = Record<string, string | undefined>

export interface Config {
  port: number
  host: string
  /** The only origin CORS admits (with credentials); null admits none. */
  modalOrigin: string | null
  /**
   * The API's public origin (LATCH_PUBLIC_URL), the base of OAuth redirect URIs; null outside
   * production, where they fall back to the request's own origin.
   */
  publicUrl: string | null
  /**
   * The WebAuthn RP ID of passkeys (LATCH_PASSKEY_RP_ID, else derived: passkeys/rp-id.ts); null
   * when none fits the modal origin, and passkey ceremonies then answer method_not_available.
   */
  passkeyRpId: string | null
  /** Absolute data folder, or null when everything lives in memory. */
  dataDir: string | null
  /** 'memory://' (PGlite in memory), a postgres:// URL, or null for PGlite in the data folder. */
  databaseUrl: string | null
  secret: string
  /**
   * The secret being rotated away from (LATCH_SECRET_PREVIOUS or _FILE): values sealed under
   * it still open until `latch secret rotate` has sealed them again under `secret`.
   */
  secretPrevious: string | null
  /** True when the secret was generated, not given. */
  secretGenerated: boolean
  smtpUrl: string | null
  mailFrom: string
  twilio: { accountSid: string; authToken: string; from: string; apiUrl: string } | null
  priceUrl: string | null
  /** Operator-wide node URL per chain id (LATCH_RPC_URL_<chainId>), under an app's own. */
  rpcUrls: Record<string, string>
  issuer: string
  accessTokenTtlS: number
  /** Seconds a session fork's token lives (LATCH_FORK_TOKEN_TTL; 120 by default, never more). */
  forkTokenTtlS: number
  /** Whose X-Forwarded-For entries name the client (rate limits): nobody, hops, or addresses. */
  trustProxy: TrustProxy
  /** SMS codes sent per app and in all, per hour and per day, before 429 (toll-fraud caps). */
  smsBudget: SmsBudget
  /** Days analytics events are kept before the sweeper deletes them. */
  analyticsRetentionDays: number
  /** Days user-API audit rows are kept (LATCH_AUDIT_RETENTION_DAYS). */
  auditRetentionDays: number
  /** Analytics events an app may record per hour, from all its visitors together. */
  analyticsAppHourly: number
  /** The built wallet frame (LATCH_WALLET_FRAME_DIR); null serves wallet-frame/dist. */
  walletFrameDir: string | null
  /** The npm packages' tarballs (LATCH_PACKAGES_DIR); null serves dist/packages. */
  packagesDir: string | null
  /** OAuth endpoints moved by LATCH_OAUTH_<PROVIDER>_<FIELD> (a stand-in provider, a proxy). */
  oauthEndpoints: ServerEndpointOverrides
  /** PostgreSQL only (PGlite is one connection in process). */
  postgres: PostgresSettings
  /** How long the API's listener waits for a client, and how many it holds at once. */
  http: HttpLimits
  /** LATCH_LOG_FORMAT: human lines (`text`, the default) or one JSON object a line (`json`). */
  logFormat: LogFormat
  /** LATCH_METRICS=1: GET /metrics on the API for the bearer of `token`; null when off. */
  metrics: { token: string } | null
  /**
   * The operator key (LATCH_ADMIN_KEY or _FILE) of the operator API for app settings
   * (apps/operator.ts); null: that API answers 404.
   */
  adminKey: string | null
  production: boolean
}

export interface PostgresSettings {
  /** Connections one process keeps at most (LATCH_PG_POOL_MAX). */
  poolMax: number
  /** Milliseconds a statement may run before PostgreSQL cancels it; 0: no limit (LATCH_PG_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number
  /**
   * Milliseconds a request may wait for a connection (a free one, or a new one opening) before
   * it is answered 503 with Retry-After (LATCH_PG_POOL_WAIT_MS).
   */
  poolWaitMs: number
  /** Requests that may wait for a connection at once; the next is answered 503 at once (LATCH_PG_POOL_QUEUE_MAX). */
  poolQueueMax: number
}

/**
 * The API listener's limits (listen.ts). A client that trickles its headers, or its body, is cut
 * when the time runs out, whatever it still sends; an idle keep-alive connection closes after
 * its timeout; connections over the cap are closed as they arrive.
 */
export interface HttpLimits {
  /** Milliseconds from a request's first byte to the end of its headers (LATCH_HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number
  /** Milliseconds from a request's first byte to the end of its body (LATCH_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number
  /** Milliseconds an idle keep-alive connection stays open (LATCH_KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number
  /** Connections open at once (LATCH_MAX_CONNECTIONS). */
  maxConnections: number
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
}

/**
 * Sized for a 2-core machine: the process's CPU, not the database, is what saturates first, so
 * ten connections keep PostgreSQL busy without queueing in it. A request that waits a second
 * for a connection is better answered 503 at once (the client retries after Retry-After) than
 * queued behind the overload; a hundred waiting is a queue of several hundred milliseconds.
 */
export const DEFAULT_PG_POOL_MAX = 10
export const DEFAULT_PG_POOL_WAIT_MS = 1_000
export const DEFAULT_PG_POOL_QUEUE_MAX = 100
export const DEFAULT_PG_STATEMENT_TIMEOUT_MS = 0

export interface SmsBudget {
  appHourly: number
  appDaily: number
  globalHourly: number
  globalDaily: number
}

export const DEFAULT_SMS_BUDGET: SmsBudget = {
  appHourly: 100,
  appDaily: 1000,
  globalHourly: 500,
  globalDaily: 5000,
}
export const DEFAULT_ANALYTICS_RETENTION_DAYS = 90
/** A year: an operator answering "who deleted this user?" months later still can. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365
export const DEFAULT_ANALYTICS_APP_HOURLY = 20_000
const MAX_BUDGET = 10_000_000

export class ConfigError extends BaseError {
  override readonly name = 'ConfigError'
}

const TWILIO_API_URL = 'https://api.twilio.com'
export const DEFAULT_DATA_DIR = '.latch'
export const DEFAULT_PORT = 8787
export const DEFAULT_ACCESS_TOKEN_TTL_S = 15 * 60
/**
 * A fork token's life (see sessions/service.ts), also its cap: a setting may only shorten it.
 * Two minutes is the time to pick a wallet app and let it open the page; whoever intercepts the
 * link has no longer than that.
 */
export const DEFAULT_FORK_TOKEN_TTL_S = 2 * 60
const MIN_SECRET_LENGTH = 32
/** Long enough that guessing it over HTTP is hopeless (`openssl rand -hex 24` makes 48). */
export const MIN_METRICS_TOKEN_LENGTH = 32

function nonEmpty(value: string | undefined): string | null {
  const v = value?.trim()
  return v ? v : null
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name])
  if (raw === null) return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${raw}'`)
  }
  return n
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = nonEmpty(env[name])
  if (raw === null) return null
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} is not a valid URL: '${raw}'`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got '${parsed.protocol}'`)
  }
  return raw
}

/** LATCH_RPC_URL_<chainId>=<url>: each must name a supported chain and an http(s) URL. */
function rpcUrls(env: Env): Record<string, string> {
  const urls: Record<string, string> = {}
  for (const name of Object.keys(env)) {
    const match = /^LATCH_RPC_URL_(.*)$/.exec(name)
    if (!match) continue
    const chainId = match[1] ?? ''
    if (String(Number(chainId)) !== chainId || !isSupportedChainId(Number(chainId))) {
      throw new ConfigError(
        `${name}: Unsupported chainId '${chainId}' (supported: ${CHAINS.map((c) => c.id).join(', ')})`,
      )
    }
    const value = url(env, name, ['http:', 'https:'])
    if (value) urls[chainId] = value
  }
  return urls
}

/**
 * True for origins a browser counts as secure: https:, or http: on a loopback host (a developer's
 * own machine). Production refuses the others: on plain http a network attacker could read
 * codes and tokens, or serve a page posing as the app.
 */
export function isSecureOrigin(origin: string): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  if (url.protocol === 'https:') return true
  if (url.protocol !== 'http:') return false
  const host = url.hostname
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  )
}

/** The sentence production answers for an origin isSecureOrigin refuses. */
export function insecureOriginMessage(what: string, origin: string): string {
  return `NODE_ENV=production refuses ${what} '${origin}': use https: (plain http: only on localhost, 127.0.0.1 or [::1])`
}

/**
 * The API's public origin and the modal's, each an origin and never a wildcard (both become CSP
 * and CORS sources), and the passkeys' RP ID they imply.
 */
function originsFrom(env: Env): {
  modalOrigin: string | null
  publicUrl: string | null
  passkeyRpId: string | null
} {
  const modalOrigin = url(env, 'LATCH_MODAL_ORIGIN', ['http:', 'https:'])
  const publicUrl = url(env, 'LATCH_PUBLIC_URL', ['http:', 'https:'])
  if (publicUrl !== null) {
    const parsed = new URL(publicUrl)
    // The API answers /api/v1 at its root; a path here would build redirect URIs it never serves.
    if (parsed.pathname !== '/' || parsed.search || parsed.hash || parsed.username) {
      throw new ConfigError(
        `LATCH_PUBLIC_URL must be an origin such as https://auth.example.com, got '${publicUrl}'`,
      )
    }
  }
  // Both become CSP and CORS sources (the modal origin the frames' frame-ancestors and the only
  // page penpal answers): a wildcard there would admit every site.
  for (const [name, value] of [
    ['LATCH_MODAL_ORIGIN', modalOrigin],
    ['LATCH_PUBLIC_URL', publicUrl],
  ] as const) {
    const checked = value === null ? null : validateOrigin(value)
    if (checked && !checked.ok) throw new ConfigError(`${name}: ${checked.error.message}`)
  }
  const rp = resolveRpId({
    configured: nonEmpty(env.LATCH_PASSKEY_RP_ID),
    publicUrl,
    modalOrigin,
  })
  if ('error' in rp) throw new ConfigError(rp.error)
  return { modalOrigin, publicUrl, passkeyRpId: rp.rpId }
}

/** Twilio's account, all three settings or none. */
function twilioFrom(env: Env): Config['twilio'] {
  const sid = nonEmpty(env.TWILIO_ACCOUNT_SID)
  const token = nonEmpty(env.TWILIO_AUTH_TOKEN)
  const from = nonEmpty(env.TWILIO_FROM)
  const twilioSet = [sid, token, from].filter((v) => v !== null).length
  if (twilioSet !== 0 && twilioSet !== 3) {
    throw new ConfigError('TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM go together')
  }
  const apiUrl = url(env, 'TWILIO_API_URL', ['http:', 'https:']) ?? TWILIO_API_URL
  return sid && token && from
    ? { accountSid: sid, authToken: token, from, apiUrl: apiUrl.replace(/\/+$/, '') }
    : null
}

/** What production needs set, and safe: the secret, mail, the public origin, https. */
function refuseUnsafeProduction(s: {
  secret: string | null
  smtpUrl: string | null
  publicUrl: string | null
  modalOrigin: string | null
}): void {
  if (s.secret === null) {
    throw new ConfigError(
      'NODE_ENV=production needs an explicit LATCH_SECRET (or LATCH_SECRET_FILE)',
    )
  }
  if (s.smtpUrl === null) {
    throw new ConfigError(
      'NODE_ENV=production refuses to print e-mail codes to the log: set SMTP_URL',
    )
  }
  // Behind a proxy the Host header is whatever the client sent; OAuth providers would be told
  // to return codes there.
  if (s.publicUrl === null) {
    throw new ConfigError(
      "NODE_ENV=production needs LATCH_PUBLIC_URL, the API's public origin (e.g. https://auth.example.com): OAuth redirect URIs are built from it, never from the request's Host header",
    )
  }
  if (!isSecureOrigin(s.publicUrl)) {
    throw new ConfigError(insecureOriginMessage('LATCH_PUBLIC_URL', s.publicUrl))
  }
  if (s.modalOrigin !== null && !isSecureOrigin(s.modalOrigin)) {
    throw new ConfigError(insecureOriginMessage('LATCH_MODAL_ORIGIN', s.modalOrigin))
  }
}

/**
 * The data folder (PGlite's files and a generated secret; memory needs neither), the server
 * secret (the one given, else the folder's, else one for this process) and the previous one
 * while a rotation is under way. In production no secret lives inside the data folder.
 */
function secretsFrom(
  env: Env,
  given: string | null,
  databaseUrl: string | null,
  production: boolean,
): Pick<Config, 'dataDir' | 'secret' | 'secretPrevious' | 'secretGenerated'> {
  const inMemory = databaseUrl?.startsWith('memory:') ?? false
  const needsDir = (databaseUrl === null || given === null) && !inMemory
  const dataDir = needsDir ? resolve(nonEmpty(env.LATCH_DATA_DIR) ?? DEFAULT_DATA_DIR) : null
  if (production && dataDir && existsSync(join(dataDir, 'secret'))) {
    // One copy of the folder (a backup, a volume snapshot) would hold the database and its key.
    throw new ConfigError(
      `NODE_ENV=production refuses the secret file ${join(dataDir, 'secret')} inside the data folder: keep the secret only in LATCH_SECRET and delete the file`,
    )
  }
  const secretFile = nonEmpty(env.LATCH_SECRET_FILE)
  if (production && dataDir && secretFile && isInside(resolve(secretFile), dataDir)) {
    throw new ConfigError(
      `NODE_ENV=production refuses LATCH_SECRET_FILE ${resolve(secretFile)} inside the data folder: keep the secret apart from the database and its backups`,
    )
  }
  if (dataDir) mkdirSync(dataDir, { recursive: true })
  const secret =
    given ?? (dataDir ? readOrCreateSecret(dataDir) : randomBytes(32).toString('base64url'))

  const secretPrevious = fromEnvOrFile(env, 'LATCH_SECRET_PREVIOUS')
  if (secretPrevious !== null && secretPrevious.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`LATCH_SECRET_PREVIOUS must be at least ${MIN_SECRET_LENGTH} characters`)
  }
  const previousFile = nonEmpty(env.LATCH_SECRET_PREVIOUS_FILE)
  if (production && dataDir && previousFile && isInside(resolve(previousFile), dataDir)) {
    throw new ConfigError(
      `NODE_ENV=production refuses LATCH_SECRET_PREVIOUS_FILE ${resolve(previousFile)} inside the data folder: keep the secret apart from the database and its backups`,
    )
  }
  return {
    dataDir,
    secret,
    secretPrevious: secretPrevious === secret ? null : secretPrevious,
    secretGenerated: given === null,
  }
}

/** The listener's timeouts and connection cap; the headers must fit in the request's time. */
export function httpLimitsFrom(env: Env): HttpLimits {
  const ms = (name: string, fallback: number) => integer(env, name, fallback, 100, 600_000)
  const limits: HttpLimits = {
    headersTimeoutMs: ms('LATCH_HEADERS_TIMEOUT_MS', DEFAULT_HTTP_LIMITS.headersTimeoutMs),
    requestTimeoutMs: ms('LATCH_REQUEST_TIMEOUT_MS', DEFAULT_HTTP_LIMITS.requestTimeoutMs),
    keepAliveTimeoutMs: ms('LATCH_KEEP_ALIVE_TIMEOUT_MS', DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs),
    maxConnections: integer(
      env,
      'LATCH_MAX_CONNECTIONS',
      DEFAULT_HTTP_LIMITS.maxConnections,
      1,
      1_000_000,
    ),
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(
      `LATCH_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed LATCH_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs}): the headers are part of the request`,
    )
  }
  return limits
}

/** The SMS spending limits, per app and in all, per hour and per day. */
function smsBudgetFrom(env: Env): SmsBudget {
  const limit = (name: string, fallback: number) => integer(env, name, fallback, 0, MAX_BUDGET)
  return {
    appHourly: limit('LATCH_SMS_APP_HOURLY', DEFAULT_SMS_BUDGET.appHourly),
    appDaily: limit('LATCH_SMS_APP_DAILY', DEFAULT_SMS_BUDGET.appDaily),
    globalHourly: limit('LATCH_SMS_GLOBAL_HOURLY', DEFAULT_SMS_BUDGET.globalHourly),
    globalDaily: limit('LATCH_SMS_GLOBAL_DAILY', DEFAULT_SMS_BUDGET.globalDaily),
  }
}

/**
 * Reads the configuration. Creates the data folder and its secret file when needed, and
 * refuses, under NODE_ENV=production, to run without an explicit secret or to print codes, with
 * a secret file beside the database, without a public URL, or on plain-http origins.
 */
export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production'
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:', 'memory:'])
  const { modalOrigin, publicUrl, passkeyRpId } = originsFrom(env)
  const smtpUrl = url(env, 'SMTP_URL', ['smtp:', 'smtps:'])
  const twilio = twilioFrom(env)
  const given = secretFromEnv(env)
  if (given !== null && given.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`LATCH_SECRET must be at least ${MIN_SECRET_LENGTH} characters`)
  }
  if (production) refuseUnsafeProduction({ secret: given, smtpUrl, publicUrl, modalOrigin })
  const secrets = secretsFrom(env, given, databaseUrl, production)

  const walletFrameDir = nonEmpty(env.LATCH_WALLET_FRAME_DIR)
  const packagesDir = nonEmpty(env.LATCH_PACKAGES_DIR)
  return {
    port: integer(env, 'LATCH_API_PORT', DEFAULT_PORT, 0, 65535),
    host: nonEmpty(env.LATCH_API_HOST) ?? '127.0.0.1',
    modalOrigin: modalOrigin ? new URL(modalOrigin).origin : null,
    publicUrl: publicUrl ? new URL(publicUrl).origin : null,
    passkeyRpId,
    dataDir: secrets.dataDir,
    databaseUrl,
    secret: secrets.secret,
    secretPrevious: secrets.secretPrevious,
    secretGenerated: secrets.secretGenerated,
    smtpUrl,
    mailFrom: nonEmpty(env.LATCH_MAIL_FROM) ?? 'Latch <no-reply@localhost>',
    twilio,
    priceUrl: url(env, 'LATCH_PRICE_URL', ['http:', 'https:']),
    rpcUrls: rpcUrls(env),
    walletFrameDir: walletFrameDir ? resolve(walletFrameDir) : null,
    packagesDir: packagesDir ? resolve(packagesDir) : null,
    issuer: nonEmpty(env.LATCH_ISSUER) ?? 'latch',
    accessTokenTtlS: integer(
      env,
      'LATCH_ACCESS_TOKEN_TTL',
      DEFAULT_ACCESS_TOKEN_TTL_S,
      30,
      24 * 60 * 60,
    ),
    forkTokenTtlS: integer(
      env,
      'LATCH_FORK_TOKEN_TTL',
      DEFAULT_FORK_TOKEN_TTL_S,
      1,
      DEFAULT_FORK_TOKEN_TTL_S,
    ),
    trustProxy: trustProxy(env),
    smsBudget: smsBudgetFrom(env),
    analyticsRetentionDays: integer(
      env,
      'LATCH_ANALYTICS_RETENTION_DAYS',
      DEFAULT_ANALYTICS_RETENTION_DAYS,
      1,
      36_500,
    ),
    auditRetentionDays: integer(
      env,
      'LATCH_AUDIT_RETENTION_DAYS',
      DEFAULT_AUDIT_RETENTION_DAYS,
      1,
      36_500,
    ),
    analyticsAppHourly: integer(
      env,
      'LATCH_ANALYTICS_APP_HOURLY',
      DEFAULT_ANALYTICS_APP_HOURLY,
      1,
      MAX_BUDGET,
    ),
    oauthEndpoints: oauthEndpoints(env),
    postgres: {
      poolMax: integer(env, 'LATCH_PG_POOL_MAX', DEFAULT_PG_POOL_MAX, 1, 1000),
      statementTimeoutMs: integer(
        env,
        'LATCH_PG_STATEMENT_TIMEOUT_MS',
        DEFAULT_PG_STATEMENT_TIMEOUT_MS,
        0,
        24 * 60 * 60 * 1000,
      ),
      poolWaitMs: integer(env, 'LATCH_PG_POOL_WAIT_MS', DEFAULT_PG_POOL_WAIT_MS, 50, 60_000),
      poolQueueMax: integer(env, 'LATCH_PG_POOL_QUEUE_MAX', DEFAULT_PG_POOL_QUEUE_MAX, 0, 100_000),
    },
    http: httpLimitsFrom(env),
    logFormat: logFormatFrom(env),
    metrics: metrics(env),
    adminKey: adminKey(env),
    production,
  }
}

/** LATCH_LOG_FORMAT, checked (the modal-only process reads it without the rest). */
export function logFormatFrom(env: Env): LogFormat {
  const raw = nonEmpty(env.LATCH_LOG_FORMAT)?.toLowerCase() ?? 'text'
  const format = LOG_FORMATS.find((f) => f === raw)
  if (!format) {
    throw new ConfigError(
      `LATCH_LOG_FORMAT must be ${LOG_FORMATS.join(' or ')}, got '${env.LATCH_LOG_FORMAT}'`,
    )
  }
  return format
}

export const MIN_ADMIN_KEY_LENGTH = 32

/** The operator API's key: unset turns that API off; a short one is refused. */
function adminKey(env: Env): string | null {
  const key = fromEnvOrFile(env, 'LATCH_ADMIN_KEY')
  if (key !== null && key.length < MIN_ADMIN_KEY_LENGTH) {
    throw new ConfigError(
      `LATCH_ADMIN_KEY must be at least ${MIN_ADMIN_KEY_LENGTH} characters (e.g. openssl rand -hex 24)`,
    )
  }
  return key
}

/** The metrics are off unless asked for, and never served without a token to guard them. */
function metrics(env: Env): Config['metrics'] {
  const raw = nonEmpty(env.LATCH_METRICS)
  if (raw === null || raw === '0') return null
  if (raw !== '1') throw new ConfigError(`LATCH_METRICS must be 1 or 0, got '${raw}'`)
  const token = fromEnvOrFile(env, 'LATCH_METRICS_TOKEN')
  if (token === null || token.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigError(
      `LATCH_METRICS=1 needs LATCH_METRICS_TOKEN (or LATCH_METRICS_TOKEN_FILE), at least ${MIN_METRICS_TOKEN_LENGTH} characters (e.g. openssl rand -hex 24): /metrics answers only to Authorization: Bearer <token>`,
    )
  }
  return { token }
}

/** NAME, or the contents of the file NAME_FILE names (a mounted secret), trimmed; not both. */
function fromEnvOrFile(env: Env, name: string): string | null {
  const inline = nonEmpty(env[name])
  const file = nonEmpty(env[`${name}_FILE`])
  if (file === null) return inline
  if (inline !== null) throw new ConfigError(`Set ${name} or ${name}_FILE, not both`)
  try {
    return nonEmpty(readFileSync(file, 'utf8'))
  } catch (e) {
    throw new ConfigError(
      `${name}_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    )
  }
}

function oauthEndpoints(env: Env): ServerEndpointOverrides {
  const out: ServerEndpointOverrides = {}
  for (const provider of OAUTH_PROVIDERS) {
    const overrides = endpointsFromEnv(provider, env)
    if (Object.keys(overrides).length > 0) out[provider] = overrides
  }
  return out
}

function trustProxy(env: Env): TrustProxy {
  try {
    return parseTrustProxy(env.LATCH_TRUST_PROXY)
  } catch (e) {
    throw new ConfigError(
      `LATCH_TRUST_PROXY must be a number of proxy hops or a list of proxy addresses: ${(e as Error).message}`,
    )
  }
}

/**
 * LATCH_SECRET, or the contents of the file LATCH_SECRET_FILE names (a mounted secret, a
 * systemd credential), trimmed; not both, so nobody wonders which one is in force.
 */
function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path)
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)
}

function secretFromEnv(env: Env): string | null {
  const inline = nonEmpty(env.LATCH_SECRET)
  const file = nonEmpty(env.LATCH_SECRET_FILE)
  if (file === null) return inline
  if (inline !== null) {
    throw new ConfigError('Set LATCH_SECRET or LATCH_SECRET_FILE, not both')
  }
  let value: string
  try {
    value = readFileSync(file, 'utf8').trim()
  } catch (e) {
    throw new ConfigError(
      `LATCH_SECRET_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    )
  }
  if (value === '') throw new ConfigError(`LATCH_SECRET_FILE: ${file} is empty`)
  return value
}

function readOrCreateSecret(dataDir: string): string {
  const file = join(dataDir, 'secret')
  if (existsSync(file)) {
    const value = readFileSync(file, 'utf8').trim()
    if (value.length < MIN_SECRET_LENGTH) throw new ConfigError(`${file} holds no usable secret`)
    return value
  }
  const value = randomBytes(32).toString('base64url')
  // 'wx' fails if another process wrote it first; then that one's secret wins.
  try {
    writeFileSync(file, `${value}\n`, { flag: 'wx', mode: 0o600 })
    chmodSync(file, 0o600)
    return value
  } catch {
    return readFileSync(file, 'utf8').trim()
  }
}
