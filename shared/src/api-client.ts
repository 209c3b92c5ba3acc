/**
 * The browser frames' one HTTP client of the API (the modal's and the wallet frame's): the app
 * id and client headers, the access token, one timeout per request (API_TIMEOUT_MS unless the
 * caller names another) and the API's errors as LatchErrors.
 */
import { API_PREFIX } from './api.ts'
import { API_TIMEOUT_MS, CLIENT_NAME } from './constants.ts'
import { fromApiError, parseRetryAfter } from './errors/http.ts'
import { LatchError } from './errors/latch-error.ts'
import { APP_ID_HEADER, CLIENT_HEADER } from './protocol/http.ts'

export interface RequestOptions {
  /** Adds the bearer access token. Session refresh and fork recovery go without it. */
  auth?: boolean
  method?: 'GET' | 'POST'
  /**
   * The answer of the same request already under way (early.ts): read instead of fetching
   * again, within the same timeout.
   */
  started?: Promise<Response>
  /** More headers (the SIWE browser binding); the app id and client headers always win. */
  headers?: Record<string, string>
  /** The access token of this call (the wallet frame's, handed over by the modal). */
  bearer?: string
}

export interface ApiClient {
  request<T>(path: string, body?: unknown, options?: RequestOptions): Promise<T>
}

export interface ApiClientOptions {
  baseUrl: string
  appId: string
  /** The current access token, refreshed if needed; null when signed out. */
  accessToken?: () => Promise<string | null>
  timeoutMs?: number
  fetch?: typeof fetch
  /** The `latch-client` header: CLIENT_NAME unless the caller names itself (the wallet frame). */
  client?: string
  /**
   * Whether cookies go along: 'include' by default (the modal's refresh cookie on the API
   * origin); the wallet frame, on the API origin itself, sends its own origin's only.
   */
  credentials?: 'include' | 'same-origin' | 'omit'
  /**
   * The error of a request that got no answer; client_request_timeout after the timeout and
   * internal_error otherwise unless the caller says how it reads to its visitor.
   */
  unreachable?: (cause: unknown, timedOut: boolean) => LatchError
}

/**
 * A client for the Latch API. Failures reject with a LatchError: the API's own error, or
 * client_request_timeout after the timeout.
 * @example await api.request<AuthResponse>('/passwordless/authenticate', { email, code })
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = options.baseUrl.replace(/\/+$/, '') + API_PREFIX
  const timeoutMs = options.timeoutMs ?? API_TIMEOUT_MS
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init))
  const unreachable =
    options.unreachable ??
    ((cause: unknown, timedOut: boolean) =>
      LatchError.of(timedOut ? 'client_request_timeout' : 'internal_error', { cause }))
  return {
    async request<T>(path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
      const headers: Record<string, string> = {
        ...opts.headers,
        [APP_ID_HEADER]: options.appId,
        [CLIENT_HEADER]: options.client ?? CLIENT_NAME,
      }
      if (body !== undefined) headers['content-type'] = 'application/json'
      if (opts.bearer !== undefined) headers.authorization = `Bearer ${opts.bearer}`
      else if (opts.auth !== false && options.accessToken) {
        const token = await options.accessToken()
        if (token) headers.authorization = `Bearer ${token}`
      }
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(), timeoutMs)
      try {
        const res = await (opts.started
          ? untilAborted(opts.started, controller.signal)
          : doFetch(base + path, {
              method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
              headers,
              body: body === undefined ? undefined : JSON.stringify(body),
              credentials: options.credentials ?? 'include',
              signal: controller.signal,
            }))
        const text = await res.text()
        const data: unknown = text ? safeJson(text) : null
        if (!res.ok) {
          throw fromApiError(res.status, data, parseRetryAfter(res.headers.get('retry-after')))
        }
        return data as T
      } catch (e) {
        if (e instanceof LatchError) throw e
        throw unreachable(e, controller.signal.aborted)
      } finally {
        clearTimeout(timer)
      }
    },
  }
}

/** A promise that also rejects when the signal aborts (a request started elsewhere cannot be). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason), { once: true })
    promise.then(resolve, reject)
  })
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}
