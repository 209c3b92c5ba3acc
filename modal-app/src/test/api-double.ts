/**
 * A local HTTP server answering the Latch API's routes as the tests program them: the modal's
 * real client (fetch, headers, timeouts) talks to it over a socket.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { API_PREFIX } from '@latch/shared'

export interface Recorded {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: unknown
}

export interface Answer {
  status?: number
  body?: unknown
  /** Milliseconds to wait before answering. */
  delay?: number
  /** More answer headers (Retry-After). */
  headers?: Record<string, string>
  /** Close the connection without answering, as a process that died would. */
  drop?: boolean
}

export type Handler = (body: unknown, req: Recorded) => Answer | Promise<Answer>

export interface ApiDouble {
  url: string
  requests: Recorded[]
  /** Programs a route, e.g. on('POST /passwordless/init', () => ({ body: { success: true } })). */
  on(route: string, handler: Handler | Answer): void
  /** The requests to one route. */
  calls(route: string): Recorded[]
  close(): Promise<void>
}

export function apiError(status: number, code: string, message: string): Answer {
  return { status, body: { error: { type: 'api_error', code, message } } }
}

export async function startApiDouble(): Promise<ApiDouble> {
  const routes = new Map<string, Handler>()
  const requests: Recorded[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const path = (req.url ?? '/').replace(API_PREFIX, '')
      const recorded: Recorded = {
        method: req.method ?? 'GET',
        path,
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      }
      requests.push(recorded)
      const handler = routes.get(`${recorded.method} ${path}`)
      const answer: Answer = handler
        ? await handler(recorded.body, recorded)
        : {
            status: 404,
            body: { error: { type: 'api_error', code: 'not_found', message: 'Not found' } },
          }
      if (answer.delay) await new Promise((r) => setTimeout(r, answer.delay))
      if (res.destroyed) return
      if (answer.drop) {
        res.socket?.destroy()
        return
      }
      res.writeHead(answer.status ?? 200, {
        'content-type': 'application/json',
        ...answer.headers,
      })
      res.end(JSON.stringify(answer.body ?? { success: true }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(route, handler) {
      routes.set(route, typeof handler === 'function' ? handler : () => handler)
    },
    calls: (route) => requests.filter((r) => `${r.method} ${r.path}` === route),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
