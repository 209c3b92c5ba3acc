/**
 * The wallet frame's fetch as a browser makes it, for tests that drive the frame's own code
 * against the API in process: same-origin fetch metadata and the wallet credential cookie of
 * the bearer's session, as the sign-in answer set it (wallets/credential.ts).
 */
import type { TestServer } from './test-server.ts'

export function frameFetch(s: TestServer): typeof fetch {
  return ((url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    const token = /^Bearer (\S+)$/.exec(headers.get('authorization') ?? '')?.[1]
    const cookie = token ? s.walletCookie(token) : undefined
    if (cookie) headers.set('cookie', cookie)
    headers.set('sec-fetch-site', 'same-origin')
    return s.api.request(url, { ...init, headers })
  }) as typeof fetch
}
