import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import {
  ConfigError,
  DEFAULT_ACCESS_TOKEN_TTL_S,
  DEFAULT_FORK_TOKEN_TTL_S,
  loadConfig,
} from './config.ts'
import { acquireLock } from './db/lock.ts'

const dirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'latch-config-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

test('behavior: the secret is generated into the data folder once and reused', () => {
  const dir = join(tempDir(), 'data')
  const a = loadConfig({ LATCH_DATA_DIR: dir })
  expect(a.secretGenerated).toBe(true)
  expect(a.dataDir).toBe(dir)
  expect(a.secret.length).toBeGreaterThanOrEqual(43)
  expect(statSync(join(dir, 'secret')).mode & 0o777).toBe(0o600)
  const b = loadConfig({ LATCH_DATA_DIR: dir })
  expect(b.secret).toBe(a.secret)
})

test('behavior: defaults and explicit settings', () => {
  const c = loadConfig({ DATABASE_URL: 'memory://', LATCH_SECRET: 's'.repeat(32) })
  expect(c).toMatchObject({
    port: 8787,
    dataDir: null,
    modalOrigin: null,
    smtpUrl: null,
    twilio: null,
    priceUrl: null,
    accessTokenTtlS: DEFAULT_ACCESS_TOKEN_TTL_S,
    forkTokenTtlS: 120,
    production: false,
  })
  const d = loadConfig({
    DATABASE_URL: 'memory://',
    LATCH_SECRET: 's'.repeat(32),
    LATCH_API_PORT: '9000',
    LATCH_MODAL_ORIGIN: 'http://localhost:5174/',
    TWILIO_ACCOUNT_SID: 'AC1',
    TWILIO_AUTH_TOKEN: 't',
    TWILIO_FROM: '+15005550006',
    LATCH_ACCESS_TOKEN_TTL: '60',
    LATCH_FORK_TOKEN_TTL: '2',
  })
  expect(d.port).toBe(9000)
  expect(d.modalOrigin).toBe('http://localhost:5174')
  expect(d.twilio).toEqual({
    accountSid: 'AC1',
    authToken: 't',
    from: '+15005550006',
    apiUrl: 'https://api.twilio.com',
  })
  expect(d.accessTokenTtlS).toBe(60)
  expect(d.forkTokenTtlS).toBe(2)
})

test('error: a fork token life may only be shortened', () => {
  const base = { DATABASE_URL: 'memory://', LATCH_SECRET: 's'.repeat(32) }
  expect(DEFAULT_FORK_TOKEN_TTL_S).toBe(120)
  expect(loadConfig({ ...base, LATCH_FORK_TOKEN_TTL: '120' }).forkTokenTtlS).toBe(120)
  expect(() => loadConfig({ ...base, LATCH_FORK_TOKEN_TTL: '121' })).toThrow(
    'LATCH_FORK_TOKEN_TTL must be an integer from 1 to 120',
  )
  expect(() => loadConfig({ ...base, LATCH_FORK_TOKEN_TTL: '0' })).toThrow(/LATCH_FORK_TOKEN_TTL/)
})

test('error: bad values are refused with the variable named', () => {
  const base = { DATABASE_URL: 'memory://', LATCH_SECRET: 's'.repeat(32) }
  expect(() => loadConfig({ ...base, LATCH_API_PORT: 'eighty' })).toThrow(/LATCH_API_PORT/)
  expect(() => loadConfig({ ...base, SMTP_URL: 'http://x' })).toThrow(/SMTP_URL/)
  expect(() => loadConfig({ ...base, LATCH_SECRET: 'short' })).toThrow(/at least 32/)
  expect(() => loadConfig({ ...base, TWILIO_ACCOUNT_SID: 'AC1' })).toThrow(/go together/)
  expect(() => loadConfig({ ...base, DATABASE_URL: 'mysql://x' })).toThrow(ConfigError)
  // The modal origin and the public URL become CSP and CORS sources: no wildcard, no path.
  for (const [name, value, why] of [
    ['LATCH_MODAL_ORIGIN', 'https://*', 'wildcards are refused'],
    ['LATCH_MODAL_ORIGIN', 'https://*.example.com', 'wildcards are refused'],
    ['LATCH_MODAL_ORIGIN', 'https://auth.example.com/modal', 'a path is not allowed'],
    ['LATCH_MODAL_ORIGIN', 'https://me@auth.example.com', 'a user name or password'],
    ['LATCH_PUBLIC_URL', 'https://*', 'wildcards are refused'],
  ] as const) {
    expect(() => loadConfig({ ...base, [name]: value }), value).toThrow(
      new RegExp(`^${name}: '.*' .*${why}`),
    )
  }
})

test('error: NODE_ENV=production refuses a generated secret and log delivery of e-mail codes', () => {
  const dir = tempDir()
  expect(() =>
    loadConfig({ NODE_ENV: 'production', LATCH_DATA_DIR: dir, SMTP_URL: 'smtp://mail:25' }),
  ).toThrow('NODE_ENV=production needs an explicit LATCH_SECRET')
  expect(() =>
    loadConfig({ NODE_ENV: 'production', LATCH_DATA_DIR: dir, LATCH_SECRET: 's'.repeat(32) }),
  ).toThrow(/refuses to print e-mail codes/)
  expect(existsSync(join(dir, 'secret'))).toBe(false)
  const ok = loadConfig({
    NODE_ENV: 'production',
    LATCH_DATA_DIR: dir,
    LATCH_SECRET: 's'.repeat(32),
    SMTP_URL: 'smtp://mail:25',
    LATCH_PUBLIC_URL: 'https://auth.example.com',
  })
  expect(ok.production).toBe(true)
})

test('behavior: the lock file keeps a second process out and is taken over when its holder is gone', () => {
  const file = join(tempDir(), 'pglite.lock')
  const release = acquireLock(file)
  expect(readFileSync(file, 'utf8')).toBe(String(process.pid))
  expect(() => acquireLock(file)).toThrow(`in use by process ${process.pid}`)
  release()
  expect(existsSync(file)).toBe(false)
  // A lock left by a process that no longer runs.
  writeFileSync(file, '999999999')
  const again = acquireLock(file)
  expect(readFileSync(file, 'utf8')).toBe(String(process.pid))
  again()
})

test('behavior: the previous secret (a rotation) and the operator key, from the environment or a file', () => {
  const dir = tempDir()
  const base = { DATABASE_URL: 'memory://', LATCH_SECRET: 'n'.repeat(32) }
  expect(loadConfig(base)).toMatchObject({ secretPrevious: null, adminKey: null })
  const file = join(dir, 'old')
  writeFileSync(file, `${'o'.repeat(40)}\n`)
  expect(loadConfig({ ...base, LATCH_SECRET_PREVIOUS_FILE: file }).secretPrevious).toBe(
    'o'.repeat(40),
  )
  // The same secret twice is no rotation.
  expect(loadConfig({ ...base, LATCH_SECRET_PREVIOUS: 'n'.repeat(32) }).secretPrevious).toBeNull()
  expect(() => loadConfig({ ...base, LATCH_SECRET_PREVIOUS: 'short' })).toThrow(ConfigError)
  expect(() =>
    loadConfig({
      ...base,
      LATCH_SECRET_PREVIOUS: 'o'.repeat(40),
      LATCH_SECRET_PREVIOUS_FILE: file,
    }),
  ).toThrow(/not both/)
  expect(loadConfig({ ...base, LATCH_ADMIN_KEY_FILE: file }).adminKey).toBe('o'.repeat(40))
  expect(() => loadConfig({ ...base, LATCH_ADMIN_KEY: 'k'.repeat(31) })).toThrow(
    /LATCH_ADMIN_KEY must be at least 32 characters/,
  )
})
