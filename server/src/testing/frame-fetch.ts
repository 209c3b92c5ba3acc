/**
 * The wallet frame's fetch as a browser makes it, for tests that drive the frame's own code
 * against the API in process: same-origin fetch metadata and the wallet credential cookie of
 * the bearer's session, as the sign-in answer set it (wallets/credential.ts).
 */
import {
  fetchApi,
  type PasskeyAuthenticator,
  type ShareStore,
  walletCore,
} from '@latch/wallet-frame'
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

/** A cheap Argon2id for the many recoveries of server tests; the frame's default is tested in wallet-frame. */
export const TEST_KDF = { m: 64, t: 1, p: 1 }

/**
 * A device: the wallet frame's own code with a share store of its own, talking to the API in
 * process as the frame does in the browser where its user signed in.
 */
export function frameDevice(s: TestServer, appId: string, passkeys?: PasskeyAuthenticator) {
  const shares = new Map<string, Uint8Array>()
  const store: ShareStore = {
    persistent: false,
    get: (a) => shares.get(a.toLowerCase()),
    set: (a, share) => void shares.set(a.toLowerCase(), share),
  }
  return {
    shares,
    ...walletCore({ api: fetchApi('', appId, frameFetch(s)), store, kdf: TEST_KDF, passkeys }),
  }
}
