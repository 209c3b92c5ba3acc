/**
 * The restart scenario, shared by the reliability test and `npm run bench -- restart`: two API
 * processes (`npm run latch -- serve` as child processes) on one PostgreSQL, many clients signing
 * in by e-mail code and refreshing through both for a bounded time, one process killed with
 * SIGKILL mid-stream and started again on its port. The clients act as a load balancer would:
 * a request whose connection fails is sent once more to the other process.
 *
 * It counts what the test asserts: answers by kind, 5xx answers, sessions that stopped
 * refreshing, and refresh tokens accepted twice into different children (the grace rule lets
 * a token be answered again within 10 s, but only with the same child).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { API_PREFIX, APP_ID_HEADER, CLIENT_HEADER, CLIENT_NAME } from '@latch/shared'
import pg from 'pg'
import { hashToken } from '../crypto.ts'
import { send } from '../fuzz/wire.ts'
import { openServices } from '../index.ts'

const CLI = fileURLToPath(new URL('../cli.ts', import.meta.url))
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const START_TIMEOUT_MS = 60_000
const CODE_TIMEOUT_MS = 10_000
export const SCENARIO_SECRET = 'reliability-secret-reliability-secret-0123'

export interface ScenarioOptions {
  /** postgres://… of an empty database. */
  databaseUrl: string
  clients: number
  durationMs: number
  /** When, from the start of the stream, the second process is killed. */
  killAtMs: number
  /** Refreshes per session before its client signs in again. */
  refreshesPerSession?: number
}

export interface Figures {
  requests: number
  /** Answers by status, and failed connections by kind ('refused', 'reset', …). */
  byKind: Record<string, number>
  /** Requests resent to the other process after a failed connection. */
  resent: number
  fiveHundreds: number
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
  #child: ChildProcess | undefined
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
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--api-only'], {
      cwd: REPO_ROOT,
      env: { ...this.env, LATCH_API_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.#child = child
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

interface Answer {
  status: number
  body: Record<string, unknown>
  by: number
}

/** Runs the scenario and returns its figures; both processes are stopped when it returns. */
export async function runRestartScenario(opts: ScenarioOptions): Promise<Figures> {
  const figures: Figures = {
    requests: 0,
    byKind: {},
    resent: 0,
    fiveHundreds: 0,
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

  // `serve` refuses to start without the wallet frame's build; this scenario never loads the
  // frame, so two empty pages stand in for it.
  const frameDir = mkdtempSync(join(tmpdir(), 'latch-restart-frame-'))
  for (const page of ['index.html', 'export.html']) writeFileSync(join(frameDir, page), '')

  // The app, made once; the migrations run here, before either process starts (so `serve`
  // starts on a current schema without --migrate).
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
  }
  const services = await openServices({ env, log: () => {} })
  const app = await services.admin.createApp({
    name: 'Reliability',
    allowedOrigins: ['http://localhost:5173'],
    loginMethods: ['email'],
  })
  await services.close()

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

  const procs = [
    new ApiProcess('api-a', env, onLine),
    new ApiProcess('api-b', env, onLine),
  ] as const
  const [a, b] = procs
  let restartedAt = Number.POSITIVE_INFINITY
  let nextIp = 0

  try {
    await a.start(0)
    await b.start(0)

    /** One request to process `i`, counted by outcome. */
    const once = async (
      i: number,
      path: string,
      body: unknown,
      ip: string,
    ): Promise<Answer | string> => {
      const proc = procs[i] as ApiProcess
      figures.requests++
      const outcome = await send(new URL(proc.url), {
        method: 'POST',
        path: `${API_PREFIX}${path}`,
        headers: {
          'content-type': 'application/json',
          [APP_ID_HEADER]: app.id,
          [CLIENT_HEADER]: CLIENT_NAME,
          'x-forwarded-for': ip,
        },
        body: Buffer.from(JSON.stringify(body)),
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
      bump(figures.byKind, String(status))
      if (status >= 500) figures.fiveHundreds++
      if (i === 1 && Date.now() >= restartedAt) figures.restartedAnswers++
      let parsed: Record<string, unknown> = {}
      try {
        parsed = JSON.parse(outcome.answer.body.toString('utf8')) as Record<string, unknown>
      } catch {}
      return { status, body: parsed, by: i }
    }

    /** Like a load balancer: a failed connection goes to the other process (until it answers). */
    let turn = 0
    const call = async (path: string, body: unknown, ip: string): Promise<Answer> => {
      let i = turn++ % 2
      const deadline = Date.now() + 15_000
      for (;;) {
        const answer = await once(i, path, body, ip)
        if (typeof answer !== 'string') return answer
        if (Date.now() > deadline) throw new Error(`no process answered ${path} within 15 s`)
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

    const refresh = async (session: Session, ip: string): Promise<boolean> => {
      figures.refreshes++
      const r = await call('/sessions', { refresh_token: session.refresh }, ip)
      if (r.status !== 200 || typeof r.body.refresh_token !== 'string') {
        bump(figures.refreshFailures, String(r.status))
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
      const answers = await Promise.all([
        once(0, '/sessions', body, ip),
        once(1, '/sessions', body, ip),
      ])
      let child: string | undefined
      for (const r of answers) {
        if (typeof r === 'string') continue
        if (r.status !== 200 || typeof r.body.refresh_token !== 'string') {
          bump(figures.refreshFailures, `two tabs: ${r.status}`)
          return false
        }
        accept(session.refresh, r.body.refresh_token)
        child = r.body.refresh_token
      }
      if (child === undefined) return refresh(session, ip)
      session.refresh = child
      session.given.push(child)
      return true
    }

    const client = async (n: number) => {
      for (let round = 0; Date.now() < end; round++) {
        const email = `c${n}-${round}@example.com`
        const ip = `10.${n}.${(++nextIp >> 8) & 255}.${nextIp & 255}`
        const init = await call('/passwordless/init', { email }, ip)
        // 429: a code was issued by a process that died before answering; it may be in its log.
        if (init.status !== 200 && !(init.status === 429 && codes.has(email))) {
          bump(figures.signInsAbandoned, `init ${init.status}`)
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
          bump(figures.signInsAbandoned, `authenticate ${auth.status}`)
          continue
        }
        figures.signIns++
        const session: Session = {
          refresh: auth.body.refresh_token,
          given: [auth.body.refresh_token],
        }
        sessions.push(session)
        for (let k = 0; k < perSession && Date.now() < end; k++) {
          const ok = k % 3 === 2 ? await twoTabs(session, ip) : await refresh(session, ip)
          if (!ok) break
        }
      }
    }

    const killer = (async () => {
      await new Promise((r) => setTimeout(r, opts.killAtMs))
      const port = b.port
      await b.kill('SIGKILL')
      const started = Date.now()
      await b.start(port)
      restartedAt = Date.now()
      figures.restartMs = restartedAt - started
    })()
    await Promise.all([...Array.from({ length: opts.clients }, (_, n) => client(n)), killer])

    // Afterwards: every session answered 200 at sign-in still refreshes.
    for (const session of sessions) {
      figures.sessionsChecked++
      const r = await call('/sessions', { refresh_token: session.refresh }, '10.255.0.1')
      if (r.status !== 200) figures.sessionsLost++
      else if (typeof r.body.refresh_token === 'string') session.refresh = r.body.refresh_token
    }

    // An attacker's replay: a token two rotations old is refused and ends its session.
    for (const session of sessions.filter((s) => s.given.length >= 3).slice(0, 25)) {
      figures.replays++
      const replay = await call('/sessions', { refresh_token: session.given[0] }, '10.255.0.2')
      if (replay.status === 200) figures.replaysAccepted++
      const live = await call('/sessions', { refresh_token: session.refresh }, '10.255.0.2')
      if (live.status === 200) figures.replaysNotRevoking++
    }

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
    await Promise.all(procs.map((p) => p.kill('SIGTERM')))
    rmSync(frameDir, { recursive: true, force: true })
  }
  return figures
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
    `[restart] ${f.requests} requests (${kinds}); ${f.resent} resent to the other process`,
    `[restart] ${f.signIns} sign-ins answered 200, ${f.refreshes} refreshes, ${f.twoTabRaces} two-tab races; sign-ins given up at the kill: ${list(f.signInsAbandoned)}`,
    `[restart] 5xx answers: ${f.fiveHundreds}; refresh failures: ${list(f.refreshFailures)}; tokens accepted into two children: ${f.doubleAccepts} (client view), ${f.childMismatches} (database view)`,
    `[restart] old tokens replayed: ${f.replays}, accepted: ${f.replaysAccepted}, sessions left open by a replay: ${f.replaysNotRevoking}`,
    `[restart] sessions checked afterwards: ${f.sessionsChecked}, lost: ${f.sessionsLost}; the killed process was back in ${f.restartMs} ms and answered ${f.restartedAnswers} requests after`,
  ].join('\n')
}
