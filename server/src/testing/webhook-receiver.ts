/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request
 * (headers and raw body) and answers what the test says, by default 204.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
}

export interface Receiver {
  url: string
  received: Received[]
  /** Answers each request; the default answers 204. */
  answer: (req: Received, res: ServerResponse) => void
  /** Waits until `n` requests arrived (10 s at most). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: (_req, res) => {
      res.writeHead(204).end()
    },
    async waitFor(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (receiver.received.length < n) {
        if (Date.now() > deadline) {
          throw new Error(`the receiver got ${receiver.received.length} of ${n} requests`)
        }
        await new Promise((r) => setTimeout(r, 20))
      }
      return receiver.received
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const got = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      receiver.received.push(got)
      receiver.answer(got, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  return receiver
}
