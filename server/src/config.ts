/** Server configuration from the environment, and the data folder with its generated secret. */
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

export type Env = Record<string, string | undefined>

export interface Config {
  port: number
  host: string
  /** The only origin CORS admits (with credentials); null admits none. */
  modalOrigin: string | null
  /** Absolute data folder, or null when everything lives in memory. */
  dataDir: string | null
  /** 'memory://' (PGlite in memory), a postgres:// URL, or null for PGlite in the data folder. */
  databaseUrl: string | null
  secret: string
  /** True when the secret was generated, not given. */
  secretGenerated: boolean
  smtpUrl: string | null
  mailFrom: string
  twilio: { accountSid: string; authToken: string; from: string; apiUrl: string } | null
  priceUrl: string | null
  issuer: string
  accessTokenTtlS: number
  /** Read the client IP from X-Forwarded-For (behind a trusted proxy only). */
  trustProxy: boolean
  production: boolean
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

const TWILIO_API_URL = 'https://api.twilio.com'
export const DEFAULT_DATA_DIR = '.latch'
export const DEFAULT_PORT = 8787
export const DEFAULT_ACCESS_TOKEN_TTL_S = 15 * 60
const MIN_SECRET_LENGTH = 32

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

/**
 * Reads the configuration. Creates the data folder and its secret file when needed, and
 * refuses, under NODE_ENV=production, to run without an explicit secret or to print codes.
 */
export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production'
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:', 'memory:'])
  const inMemory = databaseUrl?.startsWith('memory:') ?? false
  const modalOrigin = url(env, 'LATCH_MODAL_ORIGIN', ['http:', 'https:'])
  const smtpUrl = url(env, 'SMTP_URL', ['smtp:', 'smtps:'])
  const sid = nonEmpty(env.TWILIO_ACCOUNT_SID)
  const token = nonEmpty(env.TWILIO_AUTH_TOKEN)
  const from = nonEmpty(env.TWILIO_FROM)
  const twilioSet = [sid, token, from].filter((v) => v !== null).length
  if (twilioSet !== 0 && twilioSet !== 3) {
    throw new ConfigError('TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM go together')
  }
  const twilioApiUrl = url(env, 'TWILIO_API_URL', ['http:', 'https:']) ?? TWILIO_API_URL

  let secret = nonEmpty(env.LATCH_SECRET)
  if (secret !== null && secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`LATCH_SECRET must be at least ${MIN_SECRET_LENGTH} characters`)
  }
  if (production) {
    if (secret === null) {
      throw new ConfigError('NODE_ENV=production needs an explicit LATCH_SECRET')
    }
    if (smtpUrl === null) {
      throw new ConfigError(
        'NODE_ENV=production refuses to print e-mail codes to the log: set SMTP_URL',
      )
    }
  }

  // The data folder holds PGlite's files and the generated secret; memory needs neither.
  const needsDir = (databaseUrl === null || secret === null) && !inMemory
  const dataDir = needsDir ? resolve(nonEmpty(env.LATCH_DATA_DIR) ?? DEFAULT_DATA_DIR) : null
  if (dataDir) mkdirSync(dataDir, { recursive: true })
  let secretGenerated = false
  if (secret === null) {
    secretGenerated = true
    secret = dataDir ? readOrCreateSecret(dataDir) : randomBytes(32).toString('base64url')
  }

  return {
    port: integer(env, 'LATCH_API_PORT', DEFAULT_PORT, 0, 65535),
    host: nonEmpty(env.LATCH_API_HOST) ?? '127.0.0.1',
    modalOrigin: modalOrigin ? new URL(modalOrigin).origin : null,
    dataDir,
    databaseUrl,
    secret,
    secretGenerated,
    smtpUrl,
    mailFrom: nonEmpty(env.LATCH_MAIL_FROM) ?? 'Latch <no-reply@localhost>',
    twilio:
      sid && token && from
        ? { accountSid: sid, authToken: token, from, apiUrl: twilioApiUrl.replace(/\/+$/, '') }
        : null,
    priceUrl: url(env, 'LATCH_PRICE_URL', ['http:', 'https:']),
    issuer: nonEmpty(env.LATCH_ISSUER) ?? 'latch',
    accessTokenTtlS: integer(
      env,
      'LATCH_ACCESS_TOKEN_TTL',
      DEFAULT_ACCESS_TOKEN_TTL_S,
      30,
      24 * 60 * 60,
    ),
    trustProxy: env.LATCH_TRUST_PROXY === '1' || env.LATCH_TRUST_PROXY === 'true',
    production,
  }
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
