/** The modal's HTTP client of the API: app id and client headers, credentials, a 10 s timeout. */
import {
  API_PREFIX,
  API_TIMEOUT_MS,
  APP_ID_HEADER,
  CLIENT_HEADER,
  CLIENT_NAME,
  fromApiError,
  LatchError,
  parseRetryAfter,
} from '@latch/shared'

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
  return {
    async request<T>(path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
      const headers: Record<string, string> = {
        ...opts.headers,
        [APP_ID_HEADER]: options.appId,
        [CLIENT_HEADER]: CLIENT_NAME,
      }
      if (body !== undefined) headers['content-type'] = 'application/json'
      if (opts.auth !== false && options.accessToken) {
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
              credentials: 'include',
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
        if (controller.signal.aborted) throw LatchError.of('client_request_timeout', { cause: e })
        throw LatchError.of('internal_error', { cause: e })
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
