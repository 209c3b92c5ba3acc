/** The modal's connections to the outside: the API, the session and the host page. */
import { type ApiClient, type HostMethods, LatchError } from '@latch/shared'
import type { Session } from './session/session.ts'

export interface Runtime {
  appId: string
  /** The API's base URL (the page's latch-api-url): the wallet frame is served from it. */
  apiUrl: string
  api: ApiClient
  session: Session
  /** The host page, once the penpal handshake is done. */
  host: HostMethods | null
}

let current: Runtime | null = null

type QueuedCall = (host: HostMethods) => void
const QUEUE_LIMIT = 50
let queue: QueuedCall[] = []

/** A new runtime: calls queued for the host of a former one are dropped, never delivered. */
export function setRuntime(runtime: Runtime | null): void {
  current = runtime
  queue = []
}

export function runtime(): Runtime {
  if (!current) throw new Error('Latch modal runtime is not set up')
  return current
}

/**
 * The error of a call that needs a session when there is none: 'session_cookie_refused' when it
 * ended because this browser refuses its cookie in the frame (Session.cookieRefused), otherwise
 * 'not_authenticated'.
 */
export function signedOutError(): LatchError {
  return LatchError.of(
    current?.session.cookieRefused() ? 'session_cookie_refused' : 'not_authenticated',
  )
}

/** The host is connected: calls made before the handshake finished go out now, in order. */
export function setHost(host: HostMethods | null): void {
  runtime().host = host
  if (!host) return
  const calls = queue
  queue = []
  for (const call of calls) call(host)
}

/**
 * Calls the host, or queues the call until the handshake is done. A host that went away
 * must not break a flow, so failures are ignored.
 */
export function callHost<K extends keyof HostMethods>(
  method: K,
  ...args: Parameters<HostMethods[K]>
): void {
  const call: QueuedCall = (host) => {
    const fn = host[method] as (...a: Parameters<HostMethods[K]>) => Promise<unknown>
    fn(...args).catch(() => {})
  }
  const host = current?.host
  if (host) call(host)
  else if (queue.length < QUEUE_LIMIT) queue.push(call)
}
