/**
 * The restart scenario, shared by the reliability test and `npm run bench -- restart`: two API
 * processes (`npm run latch -- serve` as child processes) on one PostgreSQL, many clients signing
 * in by e-mail code and refreshing through both for a bounded time, and one fault mid-stream:
 * one process killed with SIGKILL and started again on its port, or the database restarted,
 * gone for a while (a failover), stalled, or every Latch backend terminated. The clients act
 * as a load balancer and the modal would: a request whose connection fails is sent once more
 * to the other process, and one answered 503 is sent again after its Retry-After (a refresh
 * with the same Latch-Refresh-Id).
 *
 * It counts what the test asserts: answers by kind, 5xx answers other than a 503 with
 * Retry-After, processes that exited on their own, sessions that stopped refreshing, refresh
 * tokens accepted twice into different children (the grace rule lets a token be answered
 * again within 10 s, but only with the same child), and whether /readyz followed the fault.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  API_PREFIX,
  APP_ID_HEADER,
  CLIENT_HEADER,
  CLIENT_NAME,
  REFRESH_ID_HEADER,
} from '@latch/shared'
import pg from 'pg'
import { hashToken } from '../crypto.ts'
import { openServices } from '../index.ts'
import { REFRESH_COOKIE_PREFIX, refreshCookieName } from '../sessions/refresh-cookie.ts'
import { latchCommand, REPO_ROOT } from './cli-bundle.ts'
import type { ControlledPostgres } from './postgres.ts'
import { send } from './wire.ts'

const START_TIMEOUT_MS = 60_000
const CODE_TIMEOUT_MS = 10_000
/** How long a client keeps sending a request again (refused connections, 503s). */
const CALL_DEADLINE_MS = 45_000
/** The modal origin the API processes are told, and whose Origin the session calls carry. */
const SCENARIO_MODAL_ORIGIN = 'http://127.0.0.1:5174'

export const SCENARIO_SECRET = 'reliability-secret-reliability-secret-0123'

/** What goes wrong mid-stream. */
export type Fault =
  /** The second API process killed with SIGKILL and started again on its port. */
  | { kind: 'kill-process' }
  /** PostgreSQL's fast shutdown (every session ends with 57P01) and a start at once. */
  | { kind: 'pg-restart' }
  /** PostgreSQL shut down and gone for `downMs` before it starts again. */
  | { kind: 'pg-failover'; downMs: number }
  /** Every process of PostgreSQL stopped for `ms`. */
  | { kind: 'pg-stall'; ms: number }
  /** pg_terminate_backend of every Latch backend, `times` times `everyMs` apart. */
  | { kind: 'pg-terminate'; times: number; everyMs: number }

export interface ScenarioOptions {
  /** postgres://… of an empty database (or the pair's). */
  databaseUrl: string
  /**
   * Processes already serving `databaseUrl` (startApiPair), kept running afterwards: scenarios
   * run one after another on them need not start two processes and migrate a database each.
   * Without it the scenario starts its own pair with `env` and stops it at the end.
   */
  pair?: ApiPair
  clients: number
  durationMs: number
  /** When, from the start of the stream, the fault happens. */
  killAtMs: number
  /** The fault; the second process's SIGKILL when absent. */
  fault?: Fault
  /** The server the database lives on, for the PostgreSQL faults. */
  postgres?: ControlledPostgres
  /** More environment for both processes (pool settings). */
  env?: Record<string, string>
  /** Refreshes per session before its client signs in again. */
  refreshesPerSession?: number
  /**
   * Traffic the stream must have made before it ends: past `durationMs` the clients go on
   * (for at most CALL_DEADLINE_MS more) until these counts are reached, so a stream that a
   * loaded machine slows still makes what the checks need, and one on a quiet machine need not
   * last long.
   */
  atLeast?: { signIns?: number; refreshes?: number; twoTabRaces?: number }
}

export interface Figures {
  requests: number
  /** Answers by status, and failed connections by kind ('refused', 'reset', …). */
  byKind: Record<string, number>
  /** Requests resent to the other process after a failed connection. */
  resent: number
  /** 5xx answers other than a 503 with Retry-After. */
  fiveHundreds: number
  /** 503 answers with Retry-After (the database out of reach, or the pool busy), each sent again. */
  unavailable: number
  /** API processes that exited without being told to. */
  processExits: number
  /** The fault's start and how long it lasted. */
  fault: string
  faultMs: number
  /** /readyz answered not ready on some process while the fault lasted. */
  readyFollowedFault: boolean
  /** /readyz answered ready on every process after the stream. */
  readyAfter: boolean
  /** From the end of the fault to the first 200 answer to a request sent after it. */
  recoveredMs: number
  /** Each answered request's time, in milliseconds (for the percentiles). */
  latenciesMs: number[]
  signIns: number
  /** Sign-ins given up at the kill (a code or an answer lost with the process); never answered 200. */
  signInsAbandoned: Record<string, number>
  refreshes: number
  /** The same token sent to both processes at once (two tabs); both must get the same child. */
  twoTabRaces: number
  /** Refresh answers other than 200 during the stream: a session lost. */
  refreshFailures: Record<string, number>
  /** Tokens answered with two different children (the client's view). */
  doubleAccepts: number
  /** Accepted tokens whose stored child is not the one answered (the database's view). */
  childMismatches: number
  sessionsChecked: number
  /** Sessions answered 200 at sign-in whose last token no longer refreshes after the stream. */
  sessionsLost: number
  /** Old tokens (two rotations back) replayed after the check: each must be refused... */
  replays: number
  replaysAccepted: number
  /** ...and must end its session, so the session's live token no longer refreshes either. */
  replaysNotRevoking: number
  /** Answers given by the restarted process. */
  restartedAnswers: number
  restartMs: number
}

/** One `latch serve` child process. */
class ApiProcess {
  url = ''
  readonly lines: string[] = []
  /** Exits nobody asked for (kill() asks), with their code or signal. */
  readonly exits: string[] = []
  #child: ChildProcess | undefined
  #stopping = false
  #onLine: (line: string) => void

  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
    onLine: (line: string) => void,
  ) {
    this.#onLine = onLine
  }

  /** Starts the process (on `port`, 0 for any) and waits for its "listening" line. */
  async start(port: number): Promise<void> {
    const child = spawn(process.execPath, latchCommand('serve', '--api-only'), {
      cwd: REPO_ROOT,
      env: { ...this.env, LATCH_API_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.#child = child
    this.#stopping = false
    child.once('exit', (code, signal) => {
      if (!this.#stopping) this.exits.push(`${code ?? signal}: ${stderr.slice(-1_000)}`)
    })
    // Should the test runner end this process without the scenario's own cleanup (a timeout),
    // the server must not outlive it.
    const orphanGuard = () => child.kill('SIGKILL')
    process.once('exit', orphanGuard)
    child.once('exit', () => process.off('exit', orphanGuard))
    let buffered = ''
    let stderr = ''
    child.stdout?.setEncoding('utf8')
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (d: string) => {
      stderr = (stderr + d).slice(-4_000)
    })
    const listening = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`${this.name} did not listen within ${START_TIMEOUT_MS} ms: ${stderr}`)),
        START_TIMEOUT_MS,
      )
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`${this.name} exited (${code ?? signal}) while starting: ${stderr}`))
      })
      child.stdout?.on('data', (d: string) => {
        buffered += d
        let newline = buffered.indexOf('\n')
        while (newline >= 0) {
          const line = buffered.slice(0, newline)
          buffered = buffered.slice(newline + 1)
          this.lines.push(line)
          this.#onLine(line)
          const url = /Latch API listening on (http:\/\/\S+)/.exec(line)?.[1]
          if (url) {
            clearTimeout(timer)
            resolve(url)
          }
          newline = buffered.indexOf('\n')
        }
      })
    })
    this.url = await listening
  }

  get port(): number {
    return Number(new URL(this.url).port)
  }

  /** SIGKILL: no shutdown, no flush, connections cut. Resolves when the process is gone. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.#child
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
    this.#stopping = true
    return new Promise((resolve) => {
      // A process that does not stop on SIGTERM within 5 s is killed.
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      child.once('exit', () => {
        clearTimeout(timer)
        resolve()
      })
      child.kill(signal)
    })
  }
}

/** The `latch serve` processes a scenario streams to, and what they were started with. */
export interface ApiPair {
  readonly procs: readonly [ApiProcess, ApiProcess]
  readonly env: Record<string, string>
  /** What each process prints, line by line, goes to these (the scenario running). */
  readonly listeners: Set<(line: string) => void>
  /** The clients' addresses go on counting across scenarios (rate limits are per address). */
  nextIp: number
  /** Scenarios run so far on the pair: each gives its e-mail addresses its own tag. */
  runs: number
  /** Stops both processes and removes the stand-in wallet frame. */
  close(): Promise<void>
}

/**
 * Migrates `databaseUrl` and starts two `latch serve --api-only` processes on it.
 * @example const pair = await startApiPair({ databaseUrl }); try { await runRestartScenario({ databaseUrl, pair, ... }) } finally { await pair.close() }
 */
export async function startApiPair(opts: {
  databaseUrl: string
  env?: Record<string, string>
}): Promise<ApiPair> {
  // `serve` refuses to start without the wallet frame's build; this scenario never loads the
  // frame, so two empty pages stand in for it.
  const frameDir = mkdtempSync(join(tmpdir(), 'latch-restart-frame-'))
  for (const page of ['index.html', 'export.html']) writeFileSync(join(frameDir, page), '')
  const env: Record<string, string> = {
    LATCH_WALLET_FRAME_DIR: frameDir,
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    DATABASE_URL: opts.databaseUrl,
    LATCH_SECRET: SCENARIO_SECRET,
    LATCH_API_HOST: '127.0.0.1',
    // Each sign-in comes from its own address, as many clients would.
    LATCH_TRUST_PROXY: '1',
    SMTP_URL: '',
    LATCH_PRICE_URL: '',
    LATCH_MODAL_ORIGIN: SCENARIO_MODAL_ORIGIN,
    ...opts.env,
  }
  const listeners = new Set<(line: string) => void>()
  const onLine = (line: string) => {
    for (const listener of listeners) listener(line)
  }
  const procs = [
    new ApiProcess('api-a', env, onLine),
    new ApiProcess('api-b', env, onLine),
  ] as const
  const close = async () => {
    await Promise.all(procs.map((p) => p.kill('SIGTERM')))
    rmSync(frameDir, { recursive: true, force: true })
  }
  try {
    // The migrations run here, before either process starts (so `serve` starts on a current
    // schema without --migrate).
    const services = await openServices({ env, log: () => {} })
    await services.close()
    // Side by side: each process spends its start loading the server, on a core of its own when
    // one is free. Both settle before a failure is thrown, so none is left starting.
    const starts = await Promise.allSettled(procs.map((p) => p.start(0)))
    for (const start of starts) if (start.status === 'rejected') throw start.reason
  } catch (error) {
    await close()
    throw error
  }
  return { procs, env, listeners, nextIp: 0, runs: 0, close }
}

interface Answer {
  status: number
  body: Record<string, unknown>
  by: number
  /** Retry-After in seconds, when answered. */
  retryAfter?: number
}

/** An answer's status with its error code when it has one ('403 origin_not_allowed'). */
function outcomeOf(r: Answer): string {
  const error = r.body.error as { code?: unknown } | undefined
  return typeof error?.code === 'string' ? `${r.status} ${error.code}` : String(r.status)
}

/** A refresh's Latch-Refresh-Id, as the modal makes one. */
const refreshId = () => randomBytes(16).toString('base64url')

/** Runs the scenario and returns its figures; both processes are stopped when it returns. */
export async function runRestartScenario(opts: ScenarioOptions): Promise<Figures> {
  const figures: Figures = {
    requests: 0,
    byKind: {},
    resent: 0,
    fiveHundreds: 0,
    unavailable: 0,
    processExits: 0,
    fault: opts.fault?.kind ?? 'kill-process',
    faultMs: 0,
    readyFollowedFault: false,
    readyAfter: false,
    recoveredMs: -1,
    latenciesMs: [],
    signIns: 0,
    signInsAbandoned: {},
    refreshes: 0,
    twoTabRaces: 0,
    refreshFailures: {},
    doubleAccepts: 0,
    childMismatches: 0,
    sessionsChecked: 0,
    sessionsLost: 0,
    replays: 0,
    replaysAccepted: 0,
    replaysNotRevoking: 0,
    restartedAnswers: 0,
    restartMs: 0,
  }
  const bump = (record: Record<string, number>, key: string) => {
    record[key] = (record[key] ?? 0) + 1
  }

  const pair = opts.pair ?? (await startApiPair(opts))
  const { procs } = pair
  const [a, b] = procs
  const tag = `r${pair.runs++}`
  const exitsBefore = a.exits.length + b.exits.length

  // The scenario's own app.
  const services = await openServices({ env: pair.env, log: () => {} })
  const app = await services.admin
    .createApp({
      name: 'Reliability',
      allowedOrigins: ['http://localhost:5173'],
      loginMethods: ['email'],
    })
    .finally(() => services.close())

  // Codes arrive as log lines of whichever process sent them.
  const codes = new Map<string, string>()
  const waiting = new Map<string, () => void>()
  const onLine = (line: string) => {
    const m = /^\[latch\] e-mail code for (\S+): (\d{6})$/.exec(line)
    if (!m?.[1] || !m[2]) return
    codes.set(m[1], m[2])
    waiting.get(m[1])?.()
  }
  const waitForCode = (email: string): Promise<string | undefined> => {
    const known = codes.get(email)
    if (known) return Promise.resolve(known)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(email)
        resolve(undefined)
      }, CODE_TIMEOUT_MS)
      waiting.set(email, () => {
        clearTimeout(timer)
        waiting.delete(email)
        resolve(codes.get(email))
      })
    })
  }

  pair.listeners.add(onLine)
  let restartedAt = Number.POSITIVE_INFINITY
  let faultStart = Number.POSITIVE_INFINITY
  let faultEnd = Number.POSITIVE_INFINITY
  let streaming = true

  try {
    /**
     * One request to process `i`, counted by outcome. As the modal's credentialed fetch: a
     * `refresh_token` of a session route's body goes in the refresh cookie (with the modal's
     * Origin), and the refresh token an answer's cookie sets comes back as `refresh_token`.
     */
    const once = async (
      i: number,
      path: string,
      body: unknown,
      ip: string,
      headers: Record<string, string> = {},
    ): Promise<Answer | string> => {
      const proc = procs[i] as ApiProcess
      figures.requests++
      const sentAt = Date.now()
      const sent: Record<string, string> = {
        ...headers,
        'content-type': 'application/json',
        [APP_ID_HEADER]: app.id,
        [CLIENT_HEADER]: CLIENT_NAME,
        'x-forwarded-for': ip,
        origin: SCENARIO_MODAL_ORIGIN,
      }
      let sentBody = body
      if (path !== '/sessions/fork/recover' && path.startsWith('/sessions')) {
        const { refresh_token: token, ...rest } = body as { refresh_token?: unknown }
        if (typeof token === 'string') sent.cookie = `${refreshCookieName(app.id)}=${token}`
        sentBody = rest
      }
      const outcome = await send(new URL(proc.url), {
        method: 'POST',
        path: `${API_PREFIX}${path}`,
        headers: sent,
        body: Buffer.from(JSON.stringify(sentBody)),
      })
      if (outcome.kind === 'dropped') {
        const kind = /ECONNREFUSED/.test(outcome.error)
          ? 'refused'
          : /ECONNRESET|hang up/.test(outcome.error)
            ? 'reset'
            : `dropped: ${outcome.error}`
        bump(figures.byKind, kind)
        return kind
      }
      const { status } = outcome.answer
      figures.latenciesMs.push(Date.now() - sentAt)
      bump(figures.byKind, String(status))
      const retryAfter = Number(outcome.answer.headers['retry-after'])
      const waitS = retryAfter > 0 ? retryAfter : undefined
      if (status === 503 && waitS !== undefined) figures.unavailable++
      else if (status >= 500) figures.fiveHundreds++
      if (i === 1 && Date.now() >= restartedAt) figures.restartedAnswers++
      if (status === 200 && sentAt >= faultEnd && figures.recoveredMs < 0) {
        figures.recoveredMs = Date.now() - faultEnd
      }
      let parsed: Record<string, unknown> = {}
      try {
        parsed = JSON.parse(outcome.answer.body.toString('utf8')) as Record<string, unknown>
      } catch {}
      const setCookies = outcome.answer.headers['set-cookie'] ?? []
      for (const line of Array.isArray(setCookies) ? setCookies : [setCookies]) {
        const pair = line.split(';')[0] ?? ''
        const value = pair.slice(pair.indexOf('=') + 1)
        if (pair.startsWith(REFRESH_COOKIE_PREFIX) && value) parsed.refresh_token = value
      }
      return { status, body: parsed, by: i, ...(waitS !== undefined ? { retryAfter: waitS } : {}) }
    }

    /** Like a load balancer: a failed connection goes to the other process (until it answers). */
    // A 503 is sent again after its Retry-After, as the modal does: long enough to outlast a
    // failover of the test's length.
    let turn = 0
    const call = async (
      path: string,
      body: unknown,
      ip: string,
      headers: Record<string, string> = {},
    ): Promise<Answer> => {
      let i = turn++ % 2
      const deadline = Date.now() + CALL_DEADLINE_MS
      for (;;) {
        const answer = await once(i, path, body, ip, headers)
        if (typeof answer !== 'string') {
          if (answer.status !== 503 || answer.retryAfter === undefined) return answer
          if (Date.now() > deadline) return answer
          await new Promise((r) => setTimeout(r, Math.min(answer.retryAfter ?? 1, 2) * 1000))
        } else {
          const exits = procs.flatMap((p) => p.exits)
          if (exits.length >= procs.length) {
            throw new Error(`every API process exited: ${exits.join(' | ')}`)
          }
          if (Date.now() > deadline) {
            throw new Error(`no process answered ${path} within ${CALL_DEADLINE_MS} ms`)
          }
        }
        figures.resent++
        i = 1 - i
      }
    }

    // Every token accepted, with the children answered for it.
    const accepted = new Map<string, Set<string>>()
    const accept = (token: string, child: string) => {
      const children = accepted.get(token) ?? new Set<string>()
      children.add(child)
      accepted.set(token, children)
    }
    interface Session {
      refresh: string
      /** Every token this session was given, oldest first. */
      given: string[]
    }
    const sessions: Session[] = []
    const perSession = opts.refreshesPerSession ?? 4
    const end = Date.now() + opts.durationMs
    const hardEnd = end + CALL_DEADLINE_MS
    const floor = opts.atLeast ?? {}
    /** Whether the clients go on: until `end`, and then until the traffic asked for was made. */
    const streamGoesOn = (): boolean => {
      const now = Date.now()
      if (now < end) return true
      if (now >= hardEnd) return false
      return (
        figures.signIns < (floor.signIns ?? 0) ||
        figures.refreshes < (floor.refreshes ?? 0) ||
        figures.twoTabRaces < (floor.twoTabRaces ?? 0)
      )
    }

    const refresh = async (session: Session, ip: string): Promise<boolean> => {
      figures.refreshes++
      const r = await call('/sessions', { refresh_token: session.refresh }, ip, {
        [REFRESH_ID_HEADER]: refreshId(),
      })
      if (r.status !== 200 || typeof r.body.refresh_token !== 'string') {
        bump(figures.refreshFailures, outcomeOf(r))
        return false
      }
      accept(session.refresh, r.body.refresh_token)
      session.refresh = r.body.refresh_token
      session.given.push(session.refresh)
      return true
    }

    /** Two tabs: the same token to both processes at once; no resend (a dead one just fails). */
    const twoTabs = async (session: Session, ip: string): Promise<boolean> => {
      figures.twoTabRaces++
      const body = { refresh_token: session.refresh }
      const ids = [refreshId(), refreshId()] as const
      const answers = await Promise.all([
        once(0, '/sessions', body, ip, { [REFRESH_ID_HEADER]: ids[0] }),
        once(1, '/sessions', body, ip, { [REFRESH_ID_HEADER]: ids[1] }),
      ])
      let child: string | undefined
      for (const r of answers) {
        // A tab whose request failed, or was answered 503, tries again below.
        if (typeof r === 'string' || (r.status === 503 && r.retryAfter !== undefined)) continue
        if (r.status !== 200 || typeof r.body.refresh_token !== 'string') {
          bump(figures.refreshFailures, `two tabs: ${outcomeOf(r)}`)
          return false
        }
        accept(session.refresh, r.body.refresh_token)
        child = r.body.refresh_token
      }
      if (child === undefined) {
        // The first tab again, with its id: its first try may have rotated the token.
        const r = await call('/sessions', body, ip, { [REFRESH_ID_HEADER]: ids[0] })
        if (r.status !== 200 || typeof r.body.refresh_token !== 'string') {
          bump(figures.refreshFailures, `two tabs, again: ${outcomeOf(r)}`)
          return false
        }
        accept(session.refresh, r.body.refresh_token)
        child = r.body.refresh_token
      }
      session.refresh = child
      session.given.push(child)
      return true
    }

    const client = async (n: number) => {
      for (let round = 0; streamGoesOn(); round++) {
        const email = `c${n}-${round}-${tag}@example.com`
        const ip = `10.${n}.${(++pair.nextIp >> 8) & 255}.${pair.nextIp & 255}`
        const init = await call('/passwordless/init', { email }, ip)
        // 429: a code was issued by a process that died before answering; it may be in its log.
        if (init.status !== 200 && !(init.status === 429 && codes.has(email))) {
          bump(figures.signInsAbandoned, `init ${outcomeOf(init)}`)
          continue
        }
        const code = await waitForCode(email)
        if (!code) {
          bump(figures.signInsAbandoned, 'code lost with the process')
          continue
        }
        const auth = await call('/passwordless/authenticate', { email, code }, ip)
        if (auth.status !== 200 || typeof auth.body.refresh_token !== 'string') {
          // 422: the first try used the code on the process that died, and its answer was lost.
          const why = auth.status === 200 ? '200 without a refresh cookie' : outcomeOf(auth)
          bump(figures.signInsAbandoned, `authenticate ${why}`)
          continue
        }
        figures.signIns++
        const session: Session = {
          refresh: auth.body.refresh_token,
          given: [auth.body.refresh_token],
        }
        sessions.push(session)
        for (let k = 0; k < perSession && streamGoesOn(); k++) {
          const ok = k % 3 === 2 ? await twoTabs(session, ip) : await refresh(session, ip)
          if (!ok) break
        }
      }
    }

    const fault = opts.fault ?? { kind: 'kill-process' }
    const postgres = opts.postgres
    const database = new URL(opts.databaseUrl).pathname.slice(1)
    const killer = (async () => {
      await new Promise((r) => setTimeout(r, opts.killAtMs))
      faultStart = Date.now()
      if (fault.kind === 'kill-process') {
        const port = b.port
        await b.kill('SIGKILL')
        const started = Date.now()
        await b.start(port)
        restartedAt = Date.now()
        figures.restartMs = restartedAt - started
      } else {
        if (!postgres) throw new Error(`the ${fault.kind} fault needs the scenario's PostgreSQL`)
        if (fault.kind === 'pg-restart') await postgres.restart()
        else if (fault.kind === 'pg-failover') await postgres.restart(fault.downMs)
        else if (fault.kind === 'pg-stall') await postgres.stall(fault.ms)
        else {
          for (let k = 0; k < fault.times; k++) {
            if (k > 0) await new Promise((r) => setTimeout(r, fault.everyMs))
            await postgres.terminateBackends(database)
          }
        }
      }
      faultEnd = Date.now()
      figures.faultMs = faultEnd - faultStart
    })()
    // /readyz of both processes, a few times a second while the stream runs.
    const readiness = (async () => {
      while (streaming) {
        const polls = procs.map(async (p) => {
          if (!p.url) return
          const r = await send(
            new URL(p.url),
            { method: 'GET', path: '/readyz', headers: {} },
            5_000,
          )
          const at = Date.now()
          if (
            r.kind === 'answer' &&
            r.answer.status === 503 &&
            at >= faultStart &&
            at <= faultEnd + 1_000
          ) {
            figures.readyFollowedFault = true
          }
        })
        await Promise.all(polls)
        await new Promise((r) => setTimeout(r, 200))
      }
    })()
    try {
      await Promise.all([...Array.from({ length: opts.clients }, (_, n) => client(n)), killer])
    } finally {
      streaming = false
      await readiness
    }

    // Afterwards: every session answered 200 at sign-in still refreshes.
    for (const session of sessions) {
      figures.sessionsChecked++
      const r = await call('/sessions', { refresh_token: session.refresh }, '10.255.0.1', {
        [REFRESH_ID_HEADER]: refreshId(),
      })
      if (r.status !== 200) figures.sessionsLost++
      else if (typeof r.body.refresh_token === 'string') session.refresh = r.body.refresh_token
    }

    // An attacker's replay: a token two rotations old is refused and ends its session.
    for (const session of sessions.filter((s) => s.given.length >= 3).slice(0, 25)) {
      figures.replays++
      const replay = await call('/sessions', { refresh_token: session.given[0] }, '10.255.0.2', {
        [REFRESH_ID_HEADER]: refreshId(),
      })
      if (replay.status === 200) figures.replaysAccepted++
      const live = await call('/sessions', { refresh_token: session.refresh }, '10.255.0.2', {
        [REFRESH_ID_HEADER]: refreshId(),
      })
      if (live.status === 200) figures.replaysNotRevoking++
    }

    const ready = await Promise.all(
      procs.map((p) =>
        send(new URL(p.url), { method: 'GET', path: '/readyz', headers: {} }, 5_000),
      ),
    )
    figures.readyAfter = ready.every((r) => r.kind === 'answer' && r.answer.status === 200)

    for (const children of accepted.values()) if (children.size > 1) figures.doubleAccepts++
    // The database's view: each accepted token's one stored child is the one answered.
    const db = new pg.Client({ connectionString: opts.databaseUrl })
    await db.connect()
    try {
      // Tokens are stored keyed by the server secret; each row keeps the token's SHA-256 too.
      const rows = await db.query<{ hash: string; child_hash: string | null }>(
        `SELECT p.token_sha256 AS hash, c.token_sha256 AS child_hash FROM refresh_tokens p
         LEFT JOIN refresh_tokens c ON c.hash = p.child_hash WHERE p.token_sha256 = ANY($1)`,
        [[...accepted.keys()].map(hashToken)],
      )
      const stored = new Map(rows.rows.map((r) => [r.hash, r.child_hash]))
      for (const [token, children] of accepted) {
        const child = stored.get(hashToken(token))
        for (const c of children) if (child !== hashToken(c)) figures.childMismatches++
      }
    } finally {
      await db.end()
    }
  } finally {
    figures.processExits = a.exits.length + b.exits.length - exitsBefore
    pair.listeners.delete(onLine)
    if (!opts.pair) await pair.close()
  }
  return figures
}

/** The `p`th percentile (0 to 100) of the answered requests' times, in milliseconds. */
export function percentile(f: Figures, p: number): number {
  const sorted = [...f.latenciesMs].sort((x, y) => x - y)
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0
}

/** The figures as the lines the test and the benchmark print. */
export function describeFigures(f: Figures): string {
  const kinds = Object.entries(f.byKind)
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ')
  const list = (r: Record<string, number>) =>
    Object.entries(r)
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ') || 'none'
  return [
    `[restart] fault: ${f.fault}, lasting ${f.faultMs} ms; API processes that exited on their own: ${f.processExits}`,
    `[restart] ${f.requests} requests (${kinds}); ${f.resent} sent again (a failed connection, or a 503 after its Retry-After)`,
    `[restart] 503 with Retry-After: ${f.unavailable}; /readyz followed the fault: ${f.readyFollowedFault}, ready afterwards: ${f.readyAfter}; first 200 ${f.recoveredMs} ms after the fault ended`,
    `[restart] answer times: p50 ${percentile(f, 50)} ms, p99 ${percentile(f, 99)} ms, max ${percentile(f, 100)} ms`,
    `[restart] ${f.signIns} sign-ins answered 200, ${f.refreshes} refreshes, ${f.twoTabRaces} two-tab races; sign-ins given up at the kill: ${list(f.signInsAbandoned)}`,
    `[restart] 5xx answers other than a 503 with Retry-After: ${f.fiveHundreds}; refresh failures: ${list(f.refreshFailures)}; tokens accepted into two children: ${f.doubleAccepts} (client view), ${f.childMismatches} (database view)`,
    `[restart] old tokens replayed: ${f.replays}, accepted: ${f.replaysAccepted}, sessions left open by a replay: ${f.replaysNotRevoking}`,
    `[restart] sessions checked afterwards: ${f.sessionsChecked}, lost: ${f.sessionsLost}; the killed process was back in ${f.restartMs} ms and answered ${f.restartedAnswers} requests after`,
  ].join('\n')
}
