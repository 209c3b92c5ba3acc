import type { Server } from 'node:http'
import { type AddressInfo, connect, type Socket } from 'node:net'
import { expect, test } from 'vitest'
import { ConfigError, type HttpLimits, httpLimitsFrom } from './config.ts'
import { listen } from './listen.ts'
import { sendRaw } from './testing/wire.ts'

/** Small limits, so the trickling clients below are cut within a second. */
const TIGHT: HttpLimits = {
  headersTimeoutMs: 400,
  requestTimeoutMs: 800,
  keepAliveTimeoutMs: 300,
  maxConnections: 2,
}

interface Listening {
  port: number
  server: Server
  /** The `n`th connection the server accepted: how long it held it, from accept to close. */
  held(n: number, boundMs?: number): Promise<number>
}

async function withServer(limits: HttpLimits, run: (l: Listening) => Promise<void>): Promise<void> {
  // The app reads the whole body first, as the API's routes do.
  const server = await listen(
    async (request) => new Response(`read ${(await request.arrayBuffer()).byteLength} bytes`),
    0,
    '127.0.0.1',
    () => {},
    limits,
  )
  const closes: Promise<number>[] = []
  server.on('connection', (socket: Socket) => {
    const accepted = Date.now()
    closes.push(new Promise((resolve) => socket.on('close', () => resolve(Date.now() - accepted))))
  })
  const held = async (n: number, boundMs = 5_000): Promise<number> => {
    const deadline = Date.now() + boundMs
    while (closes[n] === undefined && Date.now() < deadline) await sleep(10)
    let bound: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        closes[n] ?? Promise.reject(new Error(`no connection ${n} arrived`)),
        new Promise<number>((_, reject) => {
          bound = setTimeout(
            () => reject(new Error(`the server still held connection ${n} after ${boundMs} ms`)),
            Math.max(0, deadline - Date.now()),
          )
        }),
      ])
    } finally {
      clearTimeout(bound)
    }
  }
  try {
    await run({ port: (server.address() as AddressInfo).port, server, held })
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A loopback client like a hostile one: half-open, it keeps its side of the connection open (and
 * sending) after the server's FIN, so only the server destroying its socket frees it. `text`
 * resolves with what the server sent once the server has ended its side.
 */
function client(
  port: number,
  start: (socket: Socket) => void,
): { text: Promise<string>; socket: Socket } {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  let received = ''
  const text = new Promise<string>((resolve) => {
    socket.on('connect', () => start(socket))
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
    })
    // A write racing the server's close fails; the server's side is what is measured.
    socket.on('error', () => resolve(received))
    socket.on('end', () => resolve(received))
    socket.on('close', () => resolve(received))
  })
  return { text, socket }
}

test('security: a client trickling one header line at a time gets a 408 and the connection is cut when the headers time runs out, though it keeps sending', async () => {
  await withServer(TIGHT, async ({ port, held }) => {
    let trickle: NodeJS.Timeout | undefined
    let line = 0
    const { text, socket } = client(port, (socket) => {
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n')
      trickle = setInterval(() => {
        if (!socket.destroyed) socket.write(`X-Slow-${line++}: y\r\n`)
      }, 50)
    })
    try {
      // The headers time (400 ms), node's check interval (100 ms here) and the answer's flush.
      expect(await held(0)).toBeLessThan(2_000)
      const answer = await text
      expect(answer).toMatch(/^HTTP\/1\.1 408 /)
      expect(answer).toContain('"code":"client_request_timeout"')
      expect(line).toBeGreaterThan(4)
    } finally {
      clearInterval(trickle)
      socket.destroy()
    }
  })
})

test('security: a client trickling its body is cut when the request time runs out', async () => {
  await withServer(TIGHT, async ({ port, held }) => {
    let trickle: NodeJS.Timeout | undefined
    const { text, socket } = client(port, (socket) => {
      socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n')
      trickle = setInterval(() => {
        if (!socket.destroyed) socket.write('a')
      }, 50)
    })
    try {
      // The request time (800 ms), the check interval and the answer's flush.
      expect(await held(0)).toBeLessThan(2_000)
      expect(await text).toMatch(/^HTTP\/1\.1 408 /)
    } finally {
      clearInterval(trickle)
      socket.destroy()
    }
  })
})

test('behavior: an idle keep-alive connection closes after the keep-alive time', async () => {
  await withServer(TIGHT, async ({ port, held }) => {
    const { text, socket } = client(port, (socket) => {
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    })
    const heldMs = await held(0)
    // Node adds a second to the keep-alive time for clients on the edge of it.
    expect(heldMs).toBeGreaterThanOrEqual(250)
    expect(heldMs).toBeLessThan(2_500)
    expect(await text).toMatch(/^HTTP\/1\.1 200 /)
    socket.destroy()
  })
})

test('security: connections over the cap are closed as they arrive; the ones held keep working', async () => {
  const limits = { ...TIGHT, headersTimeoutMs: 5_000, requestTimeoutMs: 5_000 }
  await withServer(limits, async ({ port, server, held }) => {
    const kept = [0, 1].map(() => client(port, () => {}))
    const deadline = Date.now() + 5_000
    let count = 0
    while (count < 2 && Date.now() < deadline) {
      await sleep(20)
      count = await new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)))
    }
    expect(count).toBe(2)
    const over = client(port, (socket) => {
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    })
    // Node drops it before any 'connection' event: the client sees its end, with no answer.
    expect(await over.text).toBe('')
    kept[0]?.socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    expect(await kept[0]?.text).toMatch(/^HTTP\/1\.1 200 /)
    expect(await held(0)).toBeLessThan(5_000)
    for (const c of [...kept, over]) c.socket.destroy()
  })
})

test('config: the listener limits default to explicit values and refuse headers that outlast the request', () => {
  expect(httpLimitsFrom({})).toEqual({
    headersTimeoutMs: 20_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    maxConnections: 1_000,
  })
  expect(
    httpLimitsFrom({ LATCH_HEADERS_TIMEOUT_MS: '1000', LATCH_REQUEST_TIMEOUT_MS: '2000' }),
  ).toMatchObject({ headersTimeoutMs: 1_000, requestTimeoutMs: 2_000 })
  expect(() => httpLimitsFrom({ LATCH_HEADERS_TIMEOUT_MS: '40000' })).toThrow(ConfigError)
  expect(() => httpLimitsFrom({ LATCH_MAX_CONNECTIONS: '0' })).toThrow(
    'LATCH_MAX_CONNECTIONS must be an integer from 1 to 1000000',
  )
  expect(() => httpLimitsFrom({ LATCH_KEEP_ALIVE_TIMEOUT_MS: 'soon' })).toThrow(ConfigError)
})

test('error: a failure outside the app answers 500 with the error body and is logged; a bad path is a 400, not logged', async () => {
  const logs: string[] = []
  const server = await listen(
    (request) => {
      if (new URL(request.url).pathname === '/throws') throw new Error('thrown outside the app')
      return Promise.reject(new Error('rejected outside the app'))
    },
    0,
    '127.0.0.1',
    (line) => logs.push(line),
  )
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    for (const path of ['/throws', '/rejects']) {
      const res = await fetch(`${base}${path}`)
      expect(res.status).toBe(500)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('internal_error')
    }
    expect(
      logs.filter((l) => l.includes('outside the app: Error: thrown outside the app')),
    ).toHaveLength(1)
    expect(
      logs.filter((l) => l.includes('outside the app: Error: rejected outside the app')),
    ).toHaveLength(1)
    // The adapter refuses a backslash before the app sees it: the client's fault.
    const raw = await sendRaw(new URL(base), Buffer.from('GET /a\\b HTTP/1.1\r\nHost: x\r\n\r\n'))
    expect(raw.status).toBe(400)
    expect(raw.text).toContain('Malformed HTTP request: Backslash in request path')
    expect(logs).toHaveLength(2)
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})
