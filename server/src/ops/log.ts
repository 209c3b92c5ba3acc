/**
 * Structured logs: with LATCH_LOG_FORMAT=json every line the server writes is one JSON object
 * (`level`, `time`, `msg`, and fields) written by pino, and every API request gets one line of
 * its own. The
 * default, `text`, keeps the human lines `npm start` has always printed and adds no request
 * lines. Either way the lines go to the one sink the server was given (`deps.log`).
 *
 * What may appear in a line is decided here, not at each call site: a request line carries the
 * route's pattern (never the raw path, which can hold ids and codes), the status, the duration,
 * the resolved app's id and the catalogued error code, never a header or a body. Every line,
 * whatever wrote it, has the server's own secrets (LATCH_SECRET, the SMTP password, the Twilio
 * token, the metrics token) replaced before it leaves.
 */
import { randomBytes } from 'node:crypto'
import pino from 'pino'
import type { Log } from '../clock.ts'
import { peerIsTrusted, type TrustProxy } from '../trust-proxy.ts'

export type LogFormat = 'text' | 'json'
export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json']

export type LogLevel = 'info' | 'warn' | 'error'

/** One structured line: `msg` says what happened, the fields say to what. */
export interface LogRecord {
  level: LogLevel
  msg: string
  [field: string]: string | number | boolean | null | undefined
}

export interface Logger {
  readonly format: LogFormat
  /** What `deps.log` is: a human line, kept as is (text) or wrapped in a record (json). */
  line: Log
  /** A record: one JSON line (json), or its `msg` and fields as one human line (text). */
  write(record: LogRecord): void
  /** A request line: written only in json (text keeps today's quiet request log). */
  request(record: LogRecord): void
}

const REDACTED = '[redacted]'

/**
 * The values no line may show, as configuration holds them (and URL-encoded, as a password in
 * SMTP_URL is written). Short values are left alone: replacing "ab" everywhere would garble
 * every line without protecting anything.
 */
export function secretValues(values: readonly (string | null | undefined)[]): string[] {
  const out = new Set<string>()
  for (const value of values) {
    if (!value || value.length < 8) continue
    out.add(value)
    out.add(encodeURIComponent(value))
  }
  // Longest first, so a secret that contains another is replaced whole.
  return [...out].sort((a, b) => b.length - a.length)
}

function scrub(text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED)
  return out
}

/** A human line's level, from the words the server's lines use for failures. */
function levelOf(line: string): LogLevel {
  return /\b(failed|unreachable|does not (open|match)|refused)\b/i.test(line) ? 'error' : 'info'
}

export function createLogger(
  sink: Log,
  format: LogFormat,
  options: { secrets?: readonly string[]; now?: () => Date } = {},
): Logger {
  const secrets = options.secrets ?? []
  const now = options.now ?? (() => new Date())
  const emit = (text: string) => sink(scrub(text, secrets))
  // pino writes each record synchronously to this stream, which hands the line to the sink
  // scrubbed: the redaction holds for whatever a record carries, whichever field.
  const jsonLog = pino(
    {
      base: null,
      messageKey: 'msg',
      timestamp: () => `,"time":${JSON.stringify(now().toISOString())}`,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write: (line: string) => emit(line.replace(/\n$/, '')) },
  )
  const json = (record: LogRecord) => {
    const { level, msg, ...fields } = record
    const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined))
    jsonLog[level](defined, msg)
  }
  const text = (record: LogRecord) => {
    const { level: _level, msg, ...fields } = record
    const parts = Object.entries(fields)
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => `${k}=${String(v)}`)
    emit(`[latch] ${msg}${parts.length ? ` (${parts.join(' ')})` : ''}`)
  }
  if (format === 'json') {
    return {
      format,
      line: (line) => json({ level: levelOf(line), msg: line.replace(/^\[latch\] /, '') }),
      write: json,
      request: json,
    }
  }
  return { format, line: emit, write: text, request: () => {} }
}

/** What a request id sent by a trusted proxy must look like to be kept (nginx's $request_id is 32 hex). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{8,64}$/
export const REQUEST_ID_HEADER = 'x-request-id'

/**
 * The request's id: the proxy's `X-Request-Id` when the connection comes from a proxy
 * LATCH_TRUST_PROXY trusts and the value has the expected shape (so one id follows the request
 * through the proxy's log and Latch's), else a new random one. A client's own header is never
 * believed: it could make its requests look like someone else's.
 */
export function requestIdFor(
  header: string | undefined,
  socketAddress: string | undefined,
  trust: TrustProxy,
): string {
  if (
    header !== undefined &&
    REQUEST_ID_PATTERN.test(header) &&
    socketAddress !== undefined &&
    peerIsTrusted(socketAddress, trust)
  ) {
    return header
  }
  return newRequestId()
}

/** A fresh request id (16 base64url characters). */
export function newRequestId(): string {
  return randomBytes(12).toString('base64url')
}
