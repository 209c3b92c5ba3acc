/**
 * Chromium driven over the DevTools protocol on a pipe, with nothing else in the pages: what the
 * cold-open bench (bench-frames.ts) measures with. Playwright, convenient everywhere else, adds
 * work to every document it sees (its utility world in each frame, its injected script on the
 * first evaluation), on the very main thread a throttled cold open measures; a bare CDP client
 * adds only what the bench asks for.
 *
 * `launchCdpChromium(args)` starts Chromium with `--remote-debugging-pipe` (messages are JSON
 * ending with a NUL byte, on file descriptors 3 and 4) and answers a client: `send()` calls a
 * method (on the browser, or on a page's flattened session), `on()` listens to events. Every
 * call has a timeout; `close()` ends the browser.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import { CHROMIUM_PATH, withTimeout } from '../e2e/src/harness.ts'

const CALL_TIMEOUT_MS = 30_000

export interface CdpEvent {
  method: string
  params: Record<string, unknown>
  sessionId?: string
}

export interface CdpClient {
  send<T = Record<string, unknown>>(
    method: string,
    params?: Record<string, unknown>,
    sessionId?: string,
  ): Promise<T>
  /** Calls `listener` for each event until the returned function is called. */
  on(listener: (event: CdpEvent) => void): () => void
  close(): Promise<void>
}

interface Pending {
  resolve(result: Record<string, unknown>): void
  reject(error: Error): void
  method: string
}

export async function launchCdpChromium(args: string[]): Promise<CdpClient> {
  const child: ChildProcess = spawn(CHROMIUM_PATH, [...args, '--remote-debugging-pipe'], {
    stdio: ['ignore', 'ignore', process.env.CDP_DEBUG ? 'inherit' : 'pipe', 'pipe', 'pipe'],
  })
  const toBrowser = child.stdio[3] as Writable
  const fromBrowser = child.stdio[4] as Readable
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000)
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const pending = new Map<number, Pending>()
  const listeners = new Set<(event: CdpEvent) => void>()
  let nextId = 1
  let buffered = ''
  let closed = false
  const failAll = (error: Error) => {
    for (const p of pending.values()) p.reject(error)
    pending.clear()
  }
  void exited.then(() => {
    closed = true
    failAll(new Error(`Chromium exited${stderr ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`))
  })
  fromBrowser.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    let end = buffered.indexOf('\0')
    while (end >= 0) {
      const message = JSON.parse(buffered.slice(0, end)) as {
        id?: number
        result?: Record<string, unknown>
        error?: { message: string }
        method?: string
        params?: Record<string, unknown>
        sessionId?: string
      }
      buffered = buffered.slice(end + 1)
      end = buffered.indexOf('\0')
      if (message.id !== undefined) {
        const p = pending.get(message.id)
        if (!p) continue
        pending.delete(message.id)
        if (message.error) p.reject(new Error(`${p.method}: ${message.error.message}`))
        else p.resolve(message.result ?? {})
      } else if (message.method) {
        const event: CdpEvent = {
          method: message.method,
          params: message.params ?? {},
          ...(message.sessionId ? { sessionId: message.sessionId } : {}),
        }
        for (const listener of listeners) listener(event)
      }
    }
  })

  const client: CdpClient = {
    send<T>(method: string, params: Record<string, unknown> = {}, sessionId?: string) {
      if (closed) return Promise.reject(new Error(`${method}: Chromium is closed`))
      const id = nextId++
      const result = new Promise<Record<string, unknown>>((resolve, reject) => {
        pending.set(id, { resolve, reject, method })
      })
      toBrowser.write(
        `${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`,
      )
      return withTimeout(result, CALL_TIMEOUT_MS, `the DevTools call ${method}`).finally(() =>
        pending.delete(id),
      ) as Promise<T>
    },
    on(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async close() {
      if (closed) return
      await client.send('Browser.close').catch(() => {})
      await withTimeout(exited, 10_000, 'Chromium closing').catch(() => child.kill('SIGKILL'))
    },
  }
  try {
    // The first answer proves the pipe works.
    await client.send('Browser.getVersion')
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  return client
}

/** Waits for the first event that `match` accepts (and answers what it returns), or times out. */
export function waitForEvent<T>(
  cdp: CdpClient,
  match: (event: CdpEvent) => T | undefined,
  ms: number,
  what: string,
): Promise<T> {
  let stop = () => {}
  const found = new Promise<T>((resolve) => {
    stop = cdp.on((event) => {
      const value = match(event)
      if (value !== undefined) resolve(value)
    })
  })
  return withTimeout(found, ms, what).finally(() => stop())
}
