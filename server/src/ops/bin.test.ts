/**
 * The `latch` executable (server/bin/latch.js, the server package's `bin`), as the production
 * guide runs it: with LATCH_LOG_FORMAT=json every line `serve` writes to stdout is JSON, from
 * its start through requests to the drain on SIGTERM.
 */
import { spawn } from 'node:child_process'
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, test } from 'vitest'
import { migratedFolder } from '../testing/global-setup.ts'
import { TEST_SECRET } from '../testing/test-server.ts'

const SERVER = fileURLToPath(new URL('../../', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'latch-bin-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Stand-ins for the build: the servers only read and serve these files. */
function assets(): Record<string, string> {
  const [modal, sdk, frame] = ['modal', 'sdk', 'frame'].map((d) => join(dir, d)) as [
    string,
    string,
    string,
  ]
  for (const d of [modal, sdk, frame]) mkdirSync(d, { recursive: true })
  writeFileSync(join(modal, 'index.html'), '<!doctype html><html><head></head><body></body></html>')
  for (const f of ['sdk.js', 'latch.js', 'wallet-bridge.js', 'provider.js']) {
    writeFileSync(join(sdk, f), `/* ${f} */`)
  }
  for (const f of ['index.html', 'export.html']) writeFileSync(join(frame, f), '<!doctype html>')
  return { LATCH_MODAL_DIR: modal, LATCH_SDK_DIR: sdk, LATCH_WALLET_FRAME_DIR: frame }
}

test('behavior: the package ships `latch` as an executable file', () => {
  const pkg = JSON.parse(readFileSync(join(SERVER, 'package.json'), 'utf8')) as {
    bin?: Record<string, string>
  }
  expect(pkg.bin).toEqual({ latch: 'bin/latch.js' })
  accessSync(join(SERVER, 'bin/latch.js'), constants.X_OK)
  expect(readFileSync(join(SERVER, 'bin/latch.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/)
})

test('behavior: `latch serve` with LATCH_LOG_FORMAT=json writes nothing but JSON lines to stdout, and SIGTERM exits 0', async () => {
  const child = spawn(join(SERVER, 'bin/latch.js'), ['serve', '--migrate'], {
    cwd: dir,
    env: {
      ...process.env,
      ...assets(),
      NODE_ENV: 'test',
      LATCH_LOG_FORMAT: 'json',
      // A PGlite folder holding the run's migrated database: what this test proves is the log's
      // form, not creating a cluster and migrating it (seconds under tsx).
      DATABASE_URL: '',
      LATCH_DATA_DIR: await migratedFolder(join(dir, 'data')),
      LATCH_SECRET: TEST_SECRET,
      LATCH_API_PORT: '0',
      LATCH_MODAL_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const guard = () => child.kill('SIGKILL')
  process.once('exit', guard)
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d
  })
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  try {
    const deadline = Date.now() + 90_000
    while (!/Latch modal listening on/.test(out) && Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`latch exited: ${err}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    const api = /Latch API listening on (http:\/\/[^"\s]+)/.exec(out)?.[1]
    const modal = /Latch modal listening on (http:\/\/[^"\s]+)/.exec(out)?.[1]
    expect(api, `no API line in: ${out}\n${err}`).toBeDefined()
    // Requests, a refused one among them, each with its log line.
    for (const url of [`${api}/healthz`, `${api}/api/v1/apps/unknown`, `${modal}/sdk.js`]) {
      await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).arrayBuffer()
    }
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  } finally {
    process.off('exit', guard)
    child.kill('SIGKILL')
  }
  const lines = out.split('\n').filter((l) => l !== '')
  expect(lines.length).toBeGreaterThan(4)
  for (const line of lines) {
    let record: unknown
    try {
      record = JSON.parse(line)
    } catch {
      throw new Error(`a stdout line is not JSON: ${line}`)
    }
    expect(record).toMatchObject({ level: expect.any(String), msg: expect.any(String) })
  }
  expect(lines.some((l) => l.includes('"msg":"Stopped"'))).toBe(true)
}, 120_000)
