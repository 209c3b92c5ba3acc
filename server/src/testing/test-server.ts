/**
 * Unit-test support: the whole API in process on each backend (PGlite in memory, then a real
 * PostgreSQL from the installed binaries), with a real SMTP server and a Twilio double.
 */
import type { AuthResponse, ServerAppConfig } from '@latch/shared'
import { API_PREFIX, APP_ID_HEADER, CLIENT_HEADER, CLIENT_NAME } from '@latch/shared'
import type { Hono } from 'hono'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe } from 'vitest'
import { createApi } from '../api.ts'
import type { AppInput } from '../apps/service.ts'
import type { Clock, Deps } from '../context.ts'
import type { HonoEnv } from '../http.ts'
import { openServices } from '../index.ts'
import { REFRESH_COOKIE_PREFIX, refreshCookieName } from '../sessions/refresh-cookie.ts'
import { WALLET_CREDENTIAL_PREFIX } from '../wallets/credential.ts'
import { migratedMemory } from './global-setup.ts'
import {
  POSTGRES_BIN,
  postgresAvailable,
  type RunningPostgres,
  type SmtpCatcher,
  startSmtpCatcher,
  startTwilioDouble,
  type TwilioDouble,
} from './index.ts'
import { MIGRATED_TEMPLATE, RUN_POSTGRES_ENV, runPostgres } from './postgres.ts'

export const TEST_SECRET = 'test-secret-test-secret-test-secret-0123456789'

/** Real time moved by `advance`; `freeze` stops it for tests that measure margins exactly. */
export class FakeClock implements Clock {
  #offset = 0
  #frozenAt: number | null = null
  now(): Date {
    return new Date((this.#frozenAt ?? Date.now()) + this.#offset)
  }
  advance(ms: number): void {
    this.#offset += ms
  }
  /** Runs `fn` with time standing still except for `advance`. */
  async frozen<T>(fn: () => Promise<T>): Promise<T> {
    this.#frozenAt = Date.now()
    try {
      return await fn()
    } finally {
      // Carry on from the frozen instant, so time never jumps.
      this.#offset -= Date.now() - this.#frozenAt
      this.#frozenAt = null
    }
  }
}

/** The refresh token an answer's cookie set, as TestServer.request copies it into the body. */
export interface CookieToken {
  refresh_token: string
}

/** A sign-in's answer with the refresh token its cookie set (see TestServer.request). */
export type TestSignIn = AuthResponse & CookieToken

export interface Answer<T = Record<string, unknown>> {
  status: number
  body: T
  headers: Headers
}

export interface RequestOptions {
  method?: string
  body?: unknown
  /** Raw body text, sent as is. */
  raw?: string
  appId?: string | null
  token?: string
  ip?: string
  headers?: Record<string, string>
  /**
   * Sends exactly what is given, without the browser stand-in of `request` for the refresh
   * cookie (below): for tests of the wire contract itself.
   */
  wire?: boolean
}

export interface TestServer {
  backend: 'pglite' | 'postgres'
  deps: Deps
  /** The Hono application serving the API. */
  api: Hono<HonoEnv>
  clock: FakeClock
  logs: string[]
  smtp: SmtpCatcher
  twilio: TwilioDouble
  newApp(input?: Partial<AppInput>): Promise<ServerAppConfig>
  /**
   * One API request. A browser stand-in for the refresh cookie, unless `wire`: a
   * `refresh_token` in the body of a refresh, fork or logout is sent as the modal's
   * credentialed fetch sends it (the app's refresh cookie, `Origin` the modal's), and the
   * refresh token an answer's cookie sets is copied into its body as `refresh_token`, so tests
   * name tokens as they always did. The wire itself carries neither (sessions.test.ts checks).
   */
  request<T = Record<string, unknown>>(
    path: string,
    opts?: RequestOptions,
  ): Promise<Answer<T & CookieToken>>
  /** Signs in by e-mail code (init, code from the SMTP server, authenticate). */
  emailLogin(appId: string, email: string, ip?: string): Promise<TestSignIn>
  /**
   * The `Cookie` header a browser would send back for the wallet credential of this access
   * token's session, as the answers so far set it (a sign-in, a fork redemption) and cleared it
   * (logout); undefined when none is kept.
   */
  walletCookie(token: string): string | undefined
}

/** The routes that read the refresh cookie. */
const COOKIE_ROUTES = new Set(['/sessions', '/sessions/fork', '/sessions/logout'])

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

let ipCounter = 0
/** A fresh client IP, so each test has its own rate-limit budget. */
export function freshIp(): string {
  ipCounter++
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`
}

let pg: Promise<RunningPostgres | null> | undefined

/**
 * Runs `suite` once per backend. `get()` returns the running server inside tests.
 * PostgreSQL is skipped, with a message, only when its binaries are missing.
 */
export function describeBackends(
  name: string,
  suite: (get: () => TestServer) => void,
  /** More environment for the servers (startTestServer's `env`). */
  env: Record<string, string> = {},
): void {
  for (const backend of ['pglite', 'postgres'] as const) {
    const skip = backend === 'postgres' && !postgresAvailable()
    if (skip) {
      console.warn(
        `${name}: PostgreSQL binaries not found under ${POSTGRES_BIN}: skipping the PostgreSQL run`,
      )
    }
    describe.skipIf(skip)(`${name} [${backend}]`, () => {
      let server: TestServer | undefined
      let close: (() => Promise<void>) | undefined
      beforeAll(async () => {
        let databaseUrl = 'memory://'
        let stopPg: (() => Promise<void>) | undefined
        if (backend === 'postgres') {
          pg ??= runPostgres()
          const running = await pg
          if (!running) throw new Error('PostgreSQL did not start')
          // The run's migrated database, copied; an empty one when this file started its own.
          databaseUrl = process.env[RUN_POSTGRES_ENV]
            ? await running.createDatabase(undefined, MIGRATED_TEMPLATE)
            : await running.createDatabase()
          stopPg = async () => {}
        }
        const started = await startTestServer(backend, databaseUrl, env)
        server = started.server
        close = async () => {
          await started.close()
          await stopPg?.()
        }
      })
      afterAll(async () => {
        await close?.()
        if (backend === 'postgres' && pg) {
          const running = await pg
          pg = undefined
          await running?.close()
        }
      })
      suite(() => {
        if (!server) throw new Error('test server not started')
        return server
      })
    })
  }
}

export async function startTestServer(
  backend: 'pglite' | 'postgres',
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ server: TestServer; close(): Promise<void> }> {
  const smtp = await startSmtpCatcher()
  const twilio = await startTwilioDouble()
  const clock = new FakeClock()
  const logs: string[] = []
  const services = await openServices({
    env: {
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      LATCH_SECRET: TEST_SECRET,
      LATCH_TRUST_PROXY: '1',
      LATCH_MODAL_ORIGIN: 'http://127.0.0.1:5174',
      SMTP_URL: smtp.url,
      LATCH_MAIL_FROM: 'Latch test <no-reply@latch.test>',
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_FROM: twilio.from,
      TWILIO_API_URL: twilio.apiUrl,
      LATCH_PRICE_URL: '',
      ...env,
    },
    log: (line) => logs.push(line),
    clock,
    // In memory: a database of the run's migrated dump when there is one (global-setup.ts).
    ...(databaseUrl.startsWith('memory:') ? migratedMemory() : {}),
  })
  const api = createApi(services.deps)
  const walletCookies = new Map<string, string>()

  async function request<T>(
    path: string,
    opts: RequestOptions = {},
  ): Promise<Answer<T & CookieToken>> {
    const headers: Record<string, string> = {
      [CLIENT_HEADER]: CLIENT_NAME,
      'x-forwarded-for': opts.ip ?? '127.0.0.1',
      ...opts.headers,
    }
    if (opts.appId) headers[APP_ID_HEADER] = opts.appId
    if (opts.token) headers.authorization = `Bearer ${opts.token}`
    // The modal's credentialed fetch carries the signing-in browser's cookies: a change of the
    // sign-in methods sends the session's credential as it would, unless the test sets `cookie`
    // itself (an empty one: a token alone, from outside that browser).
    if (opts.token && /\/(link|unlink|rename)$/.test(path) && headers.cookie === undefined) {
      const { sid } = decodeJwt(opts.token)
      const cookie = typeof sid === 'string' ? walletCookies.get(sid) : undefined
      if (cookie) headers.cookie = cookie
    }
    let sent = opts.body
    const asBrowser = !opts.wire
    if (asBrowser && COOKIE_ROUTES.has(path)) {
      headers.origin ??= services.deps.config.modalOrigin ?? ''
      if (isRecord(sent) && 'refresh_token' in sent) {
        const { refresh_token: token, ...rest } = sent
        sent = rest
        if (typeof token === 'string' && token && opts.appId) {
          const pair = `${refreshCookieName(opts.appId)}=${token}`
          headers.cookie = headers.cookie ? `${headers.cookie}; ${pair}` : pair
        }
      }
    }
    let body: string | undefined = opts.raw
    if (sent !== undefined) body = JSON.stringify(sent)
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await api.request(`${API_PREFIX}${path}`, {
      method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body,
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {}
    for (const set of res.headers.getSetCookie()) {
      const pair = set.split(';')[0] ?? ''
      const name = pair.slice(0, pair.indexOf('='))
      const value = pair.slice(name.length + 1)
      if (asBrowser && name.startsWith(REFRESH_COOKIE_PREFIX) && value && isRecord(parsed)) {
        parsed.refresh_token ??= value
      }
      if (!name.startsWith(WALLET_CREDENTIAL_PREFIX)) continue
      const sid = name.slice(WALLET_CREDENTIAL_PREFIX.length)
      if (pair.endsWith('=')) walletCookies.delete(sid)
      else walletCookies.set(sid, pair)
    }
    return { status: res.status, body: parsed as T & CookieToken, headers: res.headers }
  }

  const server: TestServer = {
    backend,
    deps: services.deps,
    api,
    clock,
    logs,
    smtp,
    twilio,
    newApp: (input = {}) =>
      services.admin.createApp({
        name: 'Test app',
        allowedOrigins: ['http://localhost:5173'],
        loginMethods: ['email', 'sms', 'wallet'],
        ...input,
      }),
    request,
    walletCookie: (token) => {
      const { sid } = decodeJwt(token)
      return typeof sid === 'string' ? walletCookies.get(sid) : undefined
    },
    async emailLogin(appId, email, ip = freshIp()) {
      const init = await request('/passwordless/init', { appId, ip, body: { email } })
      if (init.status !== 200)
        throw new Error(`init answered ${init.status}: ${JSON.stringify(init.body)}`)
      const code = await smtp.waitForCode(email, { timeoutMs: 10_000 })
      const auth = await request<TestSignIn>('/passwordless/authenticate', {
        appId,
        ip,
        body: { email, code },
      })
      if (auth.status !== 200)
        throw new Error(`authenticate answered ${auth.status}: ${JSON.stringify(auth.body)}`)
      return auth.body
    },
  }
  return {
    server,
    async close() {
      await services.close()
      await smtp.close()
      await twilio.close()
    },
  }
}
