/**
 * The fuzz suite's HTTP clients: one over node:http (any method token, raw body bytes, any
 * Latin-1 header value) and one over a bare TCP socket for what node:http refuses to send
 * (broken framing, invalid request lines). Both tell an answer from a dropped connection.
 */
import { request } from 'node:http'
import { connect } from 'node:net'

export interface WireAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** What a request came to: an answer, or the connection dying without one. */
export type WireOutcome =
  | { kind: 'answer'; answer: WireAnswer }
  | { kind: 'dropped'; error: string }

export interface WireRequest {
  method: string
  /** Path and query, sent as is (percent-garbage included). */
  path: string
  headers: Record<string, string>
  body?: Buffer
}

/**
 * Sends one request on a fresh connection and reads the whole answer. A fresh connection
 * makes a reset mean this request's reset, not a stale keep-alive socket's.
 */
export function send(base: URL, req: WireRequest, timeoutMs = 10_000): Promise<WireOutcome> {
  return new Promise((resolve) => {
    let settled = false
    const done = (outcome: WireOutcome): void => {
      if (settled) return
      settled = true
      resolve(outcome)
    }
    const headers: Record<string, string> = { connection: 'close', ...req.headers }
    // A chunked body carries its own framing; node:http writes the chunks.
    const chunked = /chunked/i.test(headers['transfer-encoding'] ?? '')
    if (req.body !== undefined && headers['content-length'] === undefined && !chunked) {
      headers['content-length'] = String(req.body.length)
    }
    const r = request(
      {
        host: base.hostname,
        port: base.port,
        method: req.method,
        path: req.path,
        headers,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          done({
            kind: 'answer',
            answer: {
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks),
            },
          }),
        )
        res.on('error', (e) =>
          done({ kind: 'dropped', error: `while reading the answer: ${e.message}` }),
        )
      },
    )
    r.on('timeout', () => {
      r.destroy(new Error(`no answer within ${timeoutMs} ms`))
    })
    r.on('error', (e) => done({ kind: 'dropped', error: e.message }))
    if (req.body !== undefined) r.end(req.body)
    else r.end()
  })
}

/** The length of the first complete HTTP answer in `bytes`, or -1 while it is incomplete. */
function firstAnswerLength(bytes: Buffer): number {
  const end = bytes.indexOf('\r\n\r\n')
  if (end < 0) return -1
  const head = bytes.subarray(0, end).toString('latin1')
  const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1]
  if (length === undefined) return -1
  const total = end + 4 + Number(length)
  return bytes.length >= total ? total : -1
}

/**
 * Writes raw bytes on a TCP connection and reads the first answer (complete by its
 * Content-Length), or until the server closes the connection, or `timeoutMs`. With `halfClose`
 * the client ends its side after writing, so the server sees where the bytes stop (a body cut
 * short). Node answers nothing to a request it is still serving when the client half-closes,
 * so only cases that need the end of input use it.
 * Resolves with the status line's code, or 0 when the connection closed without an answer.
 */
export function sendRaw(
  base: URL,
  bytes: Buffer,
  opts: { halfClose?: boolean; timeoutMs?: number } = {},
): Promise<{ status: number; text: string; error?: string }> {
  const timeoutMs = opts.timeoutMs ?? 10_000
  return new Promise((resolve) => {
    const socket = connect(Number(base.port), base.hostname)
    const chunks: Buffer[] = []
    let error: string | undefined
    const timer = setTimeout(() => {
      error = `no answer within ${timeoutMs} ms`
      socket.destroy()
    }, timeoutMs)
    socket.on('connect', () => {
      socket.write(bytes)
      if (opts.halfClose) socket.end()
    })
    socket.on('data', (c: Buffer) => {
      chunks.push(c)
      if (firstAnswerLength(Buffer.concat(chunks)) >= 0) socket.destroy()
    })
    socket.on('error', (e) => {
      error = e.message
    })
    socket.on('close', () => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString('latin1')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0)
      resolve(error === undefined ? { status, text } : { status, text, error })
    })
  })
}
