/**
 * The user API for the host's backend: look users up, page through them, delete one
 * completely, export and import, with one of the app's server secrets (`latch apps secret
 * create <appId>`). Server-side only: Latch refuses any request that comes from a browser.
 */
import { BaseError, type LoginMethod, type OAuthProvider, type User } from '@latch/shared/types'

export type { LinkedAccount, User } from '@latch/shared/types'

export interface LatchAdminOptions {
  appId: string
  /** An app secret, `lsk_...`. Keep it in the backend's secrets, never in a page. */
  secret: string
  /** The Latch API's public origin, e.g. `https://api.example.com` (not the modal origin). */
  apiUrl: string
  /** Milliseconds a call may take before it is abandoned (default 10000). */
  timeoutMs?: number
  fetch?: typeof fetch
}

export type { LoginMethod }
/** A social sign-in provider (the contract's OAuthProvider). */
export type SocialProvider = OAuthProvider

export interface ListUsersOptions {
  /** 1 to 100 (default 50). */
  limit?: number
  /** `nextCursor` of the previous page. */
  cursor?: string
  createdSince?: Date
  /** With (true) or without (false) an in-app wallet. */
  hasWallet?: boolean
  /** Users who can sign in this way (the in-app wallet is not a login method). */
  loginMethod?: LoginMethod
}

export interface UserPage {
  users: User[]
  /** Null on the last page. */
  nextCursor: string | null
}

/** Rows removed by a deletion, table by table. */
export type DeletedCounts = Record<string, number>

export type ImportEntry = { email: string } | { phone: string }
export interface ImportResult {
  email?: string
  phone?: string
  id: string
  status: 'created' | 'existing'
}

/** An error answered by the user API, with its catalogued code (`invalid_app_secret`, ...). */
export class LatchApiError extends BaseError {
  override readonly name = 'LatchApiError'
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export interface LatchAdmin {
  /** The user, or null when the app has none with this id. */
  getUser(userId: string): Promise<User | null>
  getUserByEmail(email: string): Promise<User | null>
  getUserByPhone(phone: string): Promise<User | null>
  getUserByWallet(address: string): Promise<User | null>
  getUserBySocial(provider: SocialProvider, subject: string): Promise<User | null>
  listUsers(opts?: ListUsersOptions): Promise<UserPage>
  /** Every user matching the filters, page after page. */
  iterateUsers(opts?: Omit<ListUsersOptions, 'cursor'>): AsyncGenerator<User>
  /** Deletes the user and every row of theirs (sessions end at once, the wallet is gone). */
  deleteUser(userId: string): Promise<DeletedCounts>
  /** All users, read as the server streams them (JSON Lines). */
  exportUsers(): AsyncGenerator<User>
  /** At most 100 a call; users that exist already are answered as `existing`. */
  importUsers(entries: readonly ImportEntry[]): Promise<ImportResult[]>
}

/**
 * @example
 * const latch = createLatchAdmin({ appId, secret: process.env.LATCH_APP_SECRET, apiUrl })
 * const user = await latch.getUserByEmail('ada@example.com')
 */
export function createLatchAdmin(opts: LatchAdminOptions): LatchAdmin {
  if (!opts.appId) throw new TypeError('appId is required')
  if (!opts.secret) throw new TypeError('secret is required')
  if (!URL.canParse(opts.apiUrl)) throw new TypeError(`apiUrl is not a URL: ${opts.apiUrl}`)
  const base = `${opts.apiUrl.replace(/\/+$/, '')}/api/v1/admin/apps/${encodeURIComponent(opts.appId)}`
  const fetchImpl = opts.fetch ?? fetch
  const timeoutMs = opts.timeoutMs ?? 10_000

  async function send(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    timeout: number | null = timeoutMs,
  ): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.secret}` }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetchImpl(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'error',
      ...(timeout === null ? {} : { signal: AbortSignal.timeout(timeout) }),
    })
    if (!res.ok) {
      let code = 'http_error'
      let message = `The user API answered ${res.status}`
      try {
        const parsed = (await res.json()) as { error?: { code?: string; message?: string } }
        code = parsed.error?.code ?? code
        message = parsed.error?.message ?? message
      } catch {
        // Not the API's error body (a proxy's page): the status says it.
      }
      throw new LatchApiError(res.status, code, message)
    }
    return res
  }

  async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
    return (await (await send(method, path, body)).json()) as T
  }

  async function maybeUser(path: string): Promise<User | null> {
    try {
      return await call<User>('GET', path)
    } catch (e) {
      if (e instanceof LatchApiError && e.status === 404 && e.code === 'not_found') return null
      throw e
    }
  }

  const q = (params: Record<string, string>) => new URLSearchParams(params).toString()

  async function listUsers(o: ListUsersOptions = {}): Promise<UserPage> {
    const params: Record<string, string> = {}
    if (o.limit !== undefined) params.limit = String(o.limit)
    if (o.cursor) params.cursor = o.cursor
    if (o.createdSince) params.created_since = o.createdSince.toISOString()
    if (o.hasWallet !== undefined) params.has_wallet = String(o.hasWallet)
    if (o.loginMethod) params.login_method = o.loginMethod
    const page = await call<{ users: User[]; next_cursor: string | null }>(
      'GET',
      `/users?${q(params)}`,
    )
    return { users: page.users, nextCursor: page.next_cursor }
  }

  return {
    getUser: (id) => maybeUser(`/users/${encodeURIComponent(id)}`),
    getUserByEmail: (email) => maybeUser(`/users/by-email?${q({ email })}`),
    getUserByPhone: (phone) => maybeUser(`/users/by-phone?${q({ phone })}`),
    getUserByWallet: (address) => maybeUser(`/users/by-wallet?${q({ address })}`),
    getUserBySocial: (provider, subject) =>
      maybeUser(`/users/by-social?${q({ provider, subject })}`),
    listUsers,
    async *iterateUsers(o = {}) {
      let cursor: string | undefined
      do {
        const page = await listUsers({ ...o, cursor })
        yield* page.users
        cursor = page.nextCursor ?? undefined
      } while (cursor)
    },
    async deleteUser(id) {
      return (await call<{ deleted: DeletedCounts }>('DELETE', `/users/${encodeURIComponent(id)}`))
        .deleted
    },
    async *exportUsers() {
      // No overall deadline: an export of many users takes as long as it takes.
      const res = await send('GET', '/users/export', undefined, null)
      if (!res.body) return
      const decoder = new TextDecoder()
      let pending = ''
      for await (const chunk of res.body) {
        pending += decoder.decode(chunk, { stream: true })
        let newline = pending.indexOf('\n')
        while (newline >= 0) {
          const line = pending.slice(0, newline)
          pending = pending.slice(newline + 1)
          if (line.trim()) yield JSON.parse(line) as User
          newline = pending.indexOf('\n')
        }
      }
      pending += decoder.decode()
      if (pending.trim()) yield JSON.parse(pending) as User
    },
    async importUsers(entries) {
      return (await call<{ results: ImportResult[] }>('POST', '/users/import', { users: entries }))
        .results
    },
  }
}
