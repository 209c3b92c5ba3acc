/**
 * The API's HTTP listener: node:http with Hono's request listener, plus answers for requests
 * that never reach a route. Node's parser refuses broken framing, headers over 16 KB or an
 * invalid request line, and Hono's adapter refuses a request it cannot turn into a URL (a
 * backslash in the path, a bad Host header); both would answer a bare `400` with no body.
 * Latch answers them like every other failure, with the API's error body.
 *
 * The listener's limits (config.ts `HttpLimits`) are set explicitly rather than left to node's
 * defaults: a client that sends its headers one line at a time is answered 408 and cut when the
 * headers time runs out, however steadily it keeps sending, and connections over the cap are
 * closed as they arrive.
 */
import { createServer, type Server, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import {
  getRequestListener,
  type Http2Bindings,
  type HttpBindings,
  RequestError,
} from '@hono/node-server'
import { LatchError, toApiErrorBody } from '@latch/shared'
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from './config.ts'
import { newRequestId, REQUEST_ID_HEADER } from './ops/log.ts'

/** The error a request refused before routing answers with. */
export function unroutableError(e: unknown): LatchError {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  if (code === 'HPE_HEADER_OVERFLOW') {
    return LatchError.of('invalid_data', { status: 431, message: 'Request headers are too large' })
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return LatchError.of('client_request_timeout')
  if (e instanceof RequestError) {
    return LatchError.of('invalid_data', { message: `Malformed HTTP request: ${e.message}` })
  }
  if (typeof code === 'string' && code.startsWith('HPE_')) {
    return LatchError.of('invalid_data', { message: 'Malformed HTTP request' })
  }
  return LatchError.of('internal_error', { cause: e })
}

/** How long a refused request's answer may take to leave before the socket is cut anyway. */
const ANSWER_FLUSH_MS = 1_000

function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset peer cannot read an answer; an answer already under way cannot take another.
    const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (err.code === 'ECONNRESET' || !socket.writable || started?.headersSent) {
      socket.destroy()
      return
    }
    const error = unroutableError(err)
    const status = error.status ?? 400
    const id = newRequestId()
    const body = JSON.stringify({ ...toApiErrorBody(error), requestId: id })
    // An answer to HEAD has no body (the client would read one as the next answer's start).
    // The bytes node was parsing when it failed begin with the request line when they arrived
    // in one piece, as a request under 64 KB on one write does.
    const raw = (err as { rawPacket?: Buffer }).rawPacket
    const head = raw?.subarray(0, 5).toString('latin1') === 'HEAD '
    // After a framing error or a timeout nothing more on this connection can be trusted: answer,
    // then destroy it. Ending alone would leave a client that keeps sending (a trickle of header
    // lines) holding the connection for as long as it likes.
    const cut = setTimeout(() => socket.destroy(), ANSWER_FLUSH_MS)
    cut.unref()
    socket.once('close', () => clearTimeout(cut))
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n` +
        'Content-Type: application/json\r\n' +
        `X-Request-Id: ${id}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        (head ? '' : body),
      () => socket.destroy(),
    )
  })
}

/**
 * Listens on `host:port` (0 picks a free port) and serves `fetch` within `limits`. Failures
 * outside the app (its own error handler answers everything else) are logged when they are the
 * server's.
 */
export function listen(
  fetch: (request: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>,
  port: number,
  host: string,
  log: (line: string) => void,
  limits: HttpLimits = DEFAULT_HTTP_LIMITS,
): Promise<Server> {
  const listener = getRequestListener(fetch, {
    hostname: host,
    errorHandler: (e) => {
      const error = unroutableError(e)
      const status = error.status ?? 500
      const id = newRequestId()
      if (status >= 500)
        log(`[latch] request ${id} failed outside the app: ${(e as Error)?.stack ?? String(e)}`)
      return Response.json(
        { ...toApiErrorBody(error), requestId: id },
        { status, headers: { [REQUEST_ID_HEADER]: id } },
      )
    },
  })
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts on this interval (30 s by default, which would let a
      // trickling client run up to half a minute past them).
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4)),
      ),
    },
    listener,
  )
  server.maxConnections = limits.maxConnections
  answerClientErrors(server)
  // An Expect other than 100-continue: node would answer a bare 417.
  server.on('checkExpectation', (_req, res: ServerResponse) => {
    const id = newRequestId()
    const body = JSON.stringify({
      ...toApiErrorBody(
        LatchError.of('invalid_data', { status: 417, message: 'Unsupported Expect header' }),
      ),
      requestId: id,
    })
    res.writeHead(417, {
      'content-type': 'application/json',
      [REQUEST_ID_HEADER]: id,
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    })
    res.end(body)
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve(server)
    })
  })
}
