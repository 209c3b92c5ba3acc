import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { expectAccessible } from './axe.ts'
import { demoUser, enterCode, newEmail, submitEmail, visit } from './flows.ts'
import { freePort, launchChromium, WAIT_MS, withTimeout } from './harness.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

interface Started {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

/**
 * Runs what `npm start` runs (`node --import tsx scripts/start.ts`: one process, so Ctrl-C reaches
 * it directly; the tsx CLI's relay force-kills a child that does not confirm a signal within
 * 30 ms, which a busy machine misses), on ports and a data folder of this test.
 */
function start(env: Record<string, string>): Started {
  let output = ''
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  )
  return { child, output: () => output, exited }
}

async function waitForOutput(s: Started, pattern: RegExp, ms: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms
  for (;;) {
    const match = pattern.exec(s.output())
    if (match) return match
    if (Date.now() > deadline || s.child.exitCode !== null) {
      throw new Error(`no ${pattern} in the output of npm start:\n${s.output()}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function stop(s: Started): Promise<number | null> {
  s.child.kill('SIGINT')
  return withTimeout(s.exited, 15_000, 'npm start stopping on SIGINT')
}

let browser: Browser | undefined
let dataDir = ''
const running: Started[] = []

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'latch-start-'))
  browser = await launchChromium()
})

afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null) s.child.kill('SIGKILL')
  await browser?.close()
  await rm(dataDir, { recursive: true, force: true })
})

test('behavior: npm start serves the demo, a person signs in with the code from the log, Ctrl-C stops it, the demo app is kept', async () => {
  const [api, modal, host] = [await freePort(), await freePort(), await freePort()]
  const env = {
    LATCH_API_PORT: String(api),
    LATCH_MODAL_PORT: String(modal),
    LATCH_HOST_PORT: String(host),
    LATCH_DATA_DIR: dataDir,
  }
  const first = start(env)
  running.push(first)
  const [, demoUrl] = await waitForOutput(first, /Open (http:\/\/localhost:\d+\/) /, 150_000)
  expect(demoUrl).toBe(`http://localhost:${host}/`)
  const [, appId] = await waitForOutput(first, /demo app\s+(\S{25}) /, 1000)
  // The wallet frame is built too: its page answers with its CSP instead of 503.
  const frame = await fetch(`http://127.0.0.1:${api}/apps/${appId}/embedded-wallets`, {
    signal: AbortSignal.timeout(WAIT_MS),
  })
  expect(frame.status).toBe(200)
  expect(frame.headers.get('content-security-policy')).toContain(
    `frame-ancestors http://127.0.0.1:${modal} http://localhost:${host}`,
  )

  const context = await browser?.newContext()
  if (!context) throw new Error('no browser')
  context.setDefaultTimeout(WAIT_MS)
  const page = await context.newPage()
  await page.goto(demoUrl as string)
  const modalFrame = page.frameLocator('[data-testid="latch-frame"]')
  await expectAccessible(page, 'the demo page of npm start')
  await page.getByTestId('sign-in').click()
  await visit({ page, modal: modalFrame }, 'LANDING')
  const email = newEmail('person')
  await submitEmail(modalFrame, email)
  // No SMTP_URL: the server prints the code to the log.
  const escaped = email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const [, code] = await waitForOutput(first, new RegExp(`${escaped}\\D*(\\d{6})`), WAIT_MS)
  await enterCode(modalFrame, code as string)
  await demoUser(page, (u) => u?.email?.address === email)
  await context.close()

  expect(await stop(first)).toBe(0)
  expect(first.output()).toContain('SIGINT: stopping')

  // The next start finds the same demo app in the data folder.
  const second = start(env)
  running.push(second)
  await waitForOutput(second, /Open http:\/\/localhost:\d+\/ /, 150_000)
  const [, appIdAgain] = await waitForOutput(second, /demo app\s+(\S{25}) /, 1000)
  expect(appIdAgain).toBe(appId)
  expect(await stop(second)).toBe(0)
}, 300_000)
