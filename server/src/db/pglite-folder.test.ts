/**
 * PGlite's data folder: one it cannot use stops the start with a sentence naming it (PGlite's
 * own report is a bare errno), and a write answered before the process is killed is there when
 * the folder is opened again. An in-memory PGlite keeps a small cache of its pages.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { API_PREFIX } from '@latch/shared'
import { sql } from 'kysely'
import { afterAll, expect, test } from 'vitest'
import { latchCommand } from '../testing/cli-bundle.ts'
import { migratedFolder, runPgliteData } from '../testing/global-setup.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { openDatabase } from './index.ts'

const root = mkdtempSync(join(tmpdir(), 'latch-pglite-folder-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const DB_MODULE = fileURLToPath(new URL('./index.ts', import.meta.url))

/** Runs `source` (an ES module) in a child process, as `user` when given; its output lines. */
function child(source: string, user?: { uid: number; gid: number }): ChildProcess {
  const file = join(root, `child-${Math.random().toString(36).slice(2)}.mts`)
  writeFileSync(file, source)
  chmodSync(root, 0o777)
  chmodSync(file, 0o644)
  return spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(user ?? {}),
  })
}

function firstLine(proc: ChildProcess, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    const timer = setTimeout(
      () => reject(new Error(`no answer in ${timeoutMs} ms: ${err}`)),
      timeoutMs,
    )
    proc.stderr?.on('data', (d: Buffer) => {
      err += d.toString()
    })
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      const newline = out.indexOf('\n')
      if (newline >= 0) {
        clearTimeout(timer)
        resolve(out.slice(0, newline))
      }
    })
    proc.once('exit', (code) => {
      clearTimeout(timer)
      if (!out.includes('\n')) reject(new Error(`exited ${code}: ${err}`))
    })
  })
}

/** The first line of `proc`'s stdout that matches `pattern`. */
function lineMatching(proc: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    const timer = setTimeout(
      () => reject(new Error(`no line matching ${pattern} in ${timeoutMs} ms: ${out}${err}`)),
      timeoutMs,
    )
    proc.stderr?.on('data', (d: Buffer) => {
      err += d.toString()
    })
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      const line = out.split('\n').find((l) => pattern.test(l))
      if (line !== undefined) {
        clearTimeout(timer)
        resolve(line)
      }
    })
    proc.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited ${code}: ${out}${err}`))
    })
  })
}

test('error: a data folder where a file stands is refused at start with a sentence naming the folder', async () => {
  const dataDir = join(root, 'file-in-the-way')
  mkdirSync(dataDir)
  writeFileSync(join(dataDir, 'pglite'), 'not a folder')
  await expect(openDatabase({ databaseUrl: null, dataDir })).rejects.toThrow(
    `Cannot use the PGlite data folder ${join(dataDir, 'pglite')}`,
  )
})

test('error: a data folder this process cannot write is refused at start with a sentence naming it, not a bare errno', async () => {
  const dataDir = join(root, 'read-only')
  mkdirSync(join(dataDir, 'pglite'), { recursive: true })
  // The lock may be written beside it; the folder itself is read-only to the process.
  chmodSync(dataDir, 0o777)
  chmodSync(join(dataDir, 'pglite'), 0o555)
  const source = `
    import { openDatabase } from ${JSON.stringify(DB_MODULE)}
    try {
      const opened = await openDatabase({ databaseUrl: null, dataDir: ${JSON.stringify(dataDir)} })
      await opened.close()
      console.log('opened')
    } catch (e) {
      console.log(e.message)
    }`
  // Root writes anywhere: the check runs as the postgres user when the test runs as root.
  const asRoot = process.getuid?.() === 0
  const user = asRoot
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
        gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
      }
    : undefined
  const said = await firstLine(child(source, user))
  expect(said).toContain(`Cannot use the PGlite data folder ${join(dataDir, 'pglite')}`)
  expect(said).toContain('EACCES')
  expect(said).toContain('read and write')
}, 90_000)

test('reliability: a write answered before the process is killed with SIGKILL is there when the folder is opened again', async () => {
  // The run's migrated database in the folder: what is tested is the write that outlives the
  // kill, not the folder's creation.
  const dataDir = await migratedFolder(join(root, 'killed'))
  // `serve` refuses to start without the wallet frame's build; the API alone never serves it.
  const frameDir = join(root, 'frame')
  mkdirSync(frameDir)
  for (const page of ['index.html', 'export.html']) writeFileSync(join(frameDir, page), '')
  const adminKey = 'pglite-folder-admin-key-0123456789abcdef'
  // The `latch` command, as an operator runs it: the write is the operator API's, answered 201.
  const proc = spawn(process.execPath, latchCommand('serve', '--api-only'), {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LATCH_DATA_DIR: dataDir,
      DATABASE_URL: '',
      LATCH_SECRET: TEST_SECRET,
      LATCH_ADMIN_KEY: adminKey,
      LATCH_API_HOST: '127.0.0.1',
      LATCH_API_PORT: '0',
      LATCH_WALLET_FRAME_DIR: frameDir,
      SMTP_URL: '',
      LATCH_PRICE_URL: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const guard = () => proc.kill('SIGKILL')
  process.once('exit', guard)
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  let appId = ''
  try {
    const url = /Latch API listening on (http:\/\/\S+)/.exec(
      await lineMatching(proc, /Latch API listening on/),
    )?.[1]
    const created = await fetch(`${url}${API_PREFIX}/operator/apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Answered', allowedOrigins: ['http://localhost:5173'] }),
      signal: AbortSignal.timeout(10_000),
    })
    expect(created.status).toBe(201)
    appId = ((await created.json()) as { id: string }).id
    expect(appId).toMatch(/^\S+$/)
  } finally {
    proc.kill('SIGKILL')
    await exited
    process.off('exit', guard)
  }
  // The lock of the killed process is taken over; the answered write is there.
  const reopened = await openDatabase({ databaseUrl: null, dataDir })
  try {
    const row = await reopened.db
      .selectFrom('apps')
      .select('name')
      .where('id', '=', appId)
      .executeTakeFirst()
    expect(row?.name).toBe('Answered')
  } finally {
    await reopened.close()
  }
}, 90_000)

test('behavior: an in-memory database caches 16 MB of its pages, not PostgreSQL’s 128 MB, and writes its log without the full pages and replica records only recovery from disk would read: its files are in memory already', async () => {
  // The server's own in-memory start (a lent database would be the test run's).
  const pgliteData = runPgliteData()
  const database = await openDatabase(
    { databaseUrl: 'memory://', dataDir: null },
    pgliteData ? { pgliteData } : {},
  )
  try {
    const { rows } = await sql<{ shared_buffers: string }>`SHOW shared_buffers`.execute(database.db)
    expect(rows).toEqual([{ shared_buffers: '16MB' }])
    const wal = await sql<{ full_page_writes: string; wal_level: string }>`
      SELECT current_setting('full_page_writes') AS full_page_writes,
             current_setting('wal_level') AS wal_level`.execute(database.db)
    expect(wal.rows).toEqual([{ full_page_writes: 'off', wal_level: 'minimal' }])
    // PGlite's own parameters are kept (the schema it searches, among them).
    const path = await sql<{ search_path: string }>`SHOW search_path`.execute(database.db)
    expect(path.rows).toEqual([{ search_path: 'public' }])
  } finally {
    await database.close()
  }
})
