/**
 * A throwaway PostgreSQL 15 from the installed binaries: initdb in a temp folder, postgres on
 * a free port, run as the `postgres` user when we are root. Null when the binaries are absent.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

export const POSTGRES_BIN = '/usr/lib/postgresql/15/bin'
const START_TIMEOUT_MS = 30_000

export interface RunningPostgres {
  /** postgres://postgres@127.0.0.1:port/postgres */
  url: string
  /**
   * A fresh database on this server: empty, or with `template` a copy of that database (the
   * run's migrated one, MIGRATED_TEMPLATE, is copied in milliseconds where migrating takes
   * seconds).
   */
  createDatabase(name?: string, template?: string): Promise<string>
  close(): Promise<void>
}

/** The run's migrated database on the run's PostgreSQL (made by global-setup.ts). */
export const MIGRATED_TEMPLATE = 'latch_migrated'

/**
 * Where the test run's global setup says its PostgreSQL listens (one server for the whole run:
 * starting one per test file costs a second or two of the two cores each time).
 */
export const RUN_POSTGRES_ENV = 'LATCH_TEST_POSTGRES_URL'

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

/** As root, the server runs as the `postgres` user (it refuses to run as root). */
function postgresUser(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {}
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
  return { uid, gid }
}

export function postgresAvailable(): boolean {
  return existsSync(join(POSTGRES_BIN, 'initdb')) && existsSync(join(POSTGRES_BIN, 'postgres'))
}

/**
 * A server this test run owns, which a fault test may break: stop it (a fast shutdown ends
 * every session with 57P01, as a restart or a failover does), freeze it, or end its backends.
 */
export interface ControlledPostgres extends RunningPostgres {
  /**
   * A fast shutdown and a start on the same port and data folder, `downMs` after the old
   * server exited (a restart: 0; a failover: the seconds the server is gone).
   */
  restart(downMs?: number): Promise<void>
  /** Every process of the server stopped (SIGSTOP) for `ms`, then continued: a stall. */
  stall(ms: number): Promise<void>
  /** pg_terminate_backend of every other session of `database`; answers how many. */
  terminateBackends(database: string): Promise<number>
}

export async function startPostgres(): Promise<ControlledPostgres | null> {
  if (!postgresAvailable()) return null
  const root = mkdtempSync(join(tmpdir(), 'latch-pg-'))
  const data = join(root, 'data')
  chmodSync(root, 0o777)
  const user = postgresUser()
  execFileSync(
    join(POSTGRES_BIN, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C'],
    { stdio: 'pipe', timeout: START_TIMEOUT_MS, cwd: root, ...user },
  )
  const port = await freePort()
  const args = [
    '-D',
    data,
    '-p',
    String(port),
    '-h',
    '127.0.0.1',
    '-k',
    root,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    // The run's server takes the server tests' pools and each e2e harness's API pool at once.
    'max_connections=200',
  ]
  let stderr = ''
  const spawnServer = (): ChildProcess => {
    const child = spawn(join(POSTGRES_BIN, 'postgres'), args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      cwd: root,
      ...user,
    })
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000)
    })
    return child
  }
  let child = spawnServer()
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  const halt = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      // SIGINT is PostgreSQL's fast shutdown: sessions end with 57P01, as in a restart.
      child.kill('SIGINT')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(timer)
    }
  }
  const stop = async (): Promise<void> => {
    await halt()
    rmSync(root, { recursive: true, force: true })
  }
  const waitAccepting = async (): Promise<void> => {
    const deadline = Date.now() + START_TIMEOUT_MS
    for (;;) {
      if (child.exitCode !== null) {
        await stop()
        throw new Error(`postgres exited while starting: ${stderr}`)
      }
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
      client.on('error', () => {})
      try {
        await client.connect()
        await client.end()
        return
      } catch {
        await client.end().catch(() => {})
        if (Date.now() > deadline) {
          await stop()
          throw new Error(
            `postgres did not accept connections within ${START_TIMEOUT_MS} ms: ${stderr}`,
          )
        }
        await new Promise((r) => setTimeout(r, 100))
      }
    }
  }
  await waitAccepting()

  /** The server's processes: the postmaster and its children (backends, background workers). */
  const processes = (): number[] => {
    const parent = child.pid
    if (parent === undefined) return []
    const pids = [parent]
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      try {
        // The parent pid is the 4th field, after the command in parentheses.
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
        if (ppid === parent) pids.push(Number(entry))
      } catch {
        // Gone meanwhile.
      }
    }
    return pids
  }

  return {
    url,
    createDatabase: databaseCreator(url),
    close: stop,
    async restart(downMs = 0) {
      await halt()
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs))
      child = spawnServer()
      await waitAccepting()
    },
    async stall(ms) {
      const pids = processes()
      for (const pid of pids) process.kill(pid, 'SIGSTOP')
      try {
        await new Promise((r) => setTimeout(r, ms))
      } finally {
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGCONT')
          } catch {
            // Ended meanwhile.
          }
        }
      }
    },
    async terminateBackends(database) {
      const client = new pg.Client({ connectionString: url })
      client.on('error', () => {})
      await client.connect()
      try {
        const { rows } = await client.query<{ ended: boolean }>(
          'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [database],
        )
        return rows.filter((r) => r.ended).length
      } finally {
        await client.end()
      }
    },
  }
}

let count = 0
const quoted = (name: string) => `"${name.replace(/"/g, '')}"`

function databaseCreator(url: string): RunningPostgres['createDatabase'] {
  return async (name = `latch_${process.pid}_${++count}`, template) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(
        `CREATE DATABASE ${quoted(name)}${template ? ` TEMPLATE ${quoted(template)}` : ''}`,
      )
    } finally {
      await client.end()
    }
    return url.replace(/\/postgres$/, `/${name}`)
  }
}

/**
 * The test run's PostgreSQL when its global setup started one (closing it here does nothing:
 * the run's teardown stops it), else a server of its own like startPostgres(). For tests that
 * only need databases; a test that stops or breaks the server starts its own.
 */
export async function runPostgres(): Promise<RunningPostgres | null> {
  const url = process.env[RUN_POSTGRES_ENV]
  if (!url) return startPostgres()
  return { url, createDatabase: databaseCreator(url), close: async () => {} }
}
