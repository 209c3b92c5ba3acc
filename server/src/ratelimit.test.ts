import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ConfigError, loadConfig } from './config.ts'
import { clientAddress, ipKey, parseTrustProxy, TRUST_NONE, type TrustProxy } from './ratelimit.ts'
import { startTestServer, TEST_SECRET, type TestServer } from './testing/test-server.ts'

const hops = (n: number): TrustProxy => ({ kind: 'hops', hops: n })
const proxies = (...addresses: string[]): TrustProxy => ({ kind: 'addresses', addresses })

describe('client address behind proxies', () => {
  test('attack: with one trusted hop the client-written left of X-Forwarded-For is ignored', () => {
    // The client sends "X-Forwarded-For: 6.6.6.6"; the proxy appends the address it saw.
    expect(clientAddress('10.0.0.2', '6.6.6.6, 198.51.100.9', hops(1))).toBe('198.51.100.9')
    expect(clientAddress('10.0.0.2', '198.51.100.9', hops(1))).toBe('198.51.100.9')
  })

  test('behavior: n hops take the entry n places from the right, the leftmost when fewer', () => {
    const chain = '6.6.6.6, 198.51.100.9, 10.0.0.3'
    expect(clientAddress('10.0.0.2', chain, hops(2))).toBe('198.51.100.9')
    expect(clientAddress('10.0.0.2', '198.51.100.9, 10.0.0.3', hops(5))).toBe('198.51.100.9')
    expect(clientAddress('10.0.0.2', chain, hops(0))).toBe('10.0.0.2')
  })

  test('attack: without trust the header is ignored; a missing or empty header means the socket', () => {
    expect(clientAddress('203.0.113.4', '6.6.6.6', TRUST_NONE)).toBe('203.0.113.4')
    expect(clientAddress('203.0.113.4', undefined, hops(1))).toBe('203.0.113.4')
    expect(clientAddress('203.0.113.4', ' , ', hops(1))).toBe('203.0.113.4')
  })

  test('behavior: with proxy addresses the first untrusted address from the right is the client', () => {
    const trust = proxies('10.0.0.0/8', '2001:db8:ffff::1')
    expect(clientAddress('10.0.0.2', '6.6.6.6, 198.51.100.9, 10.1.2.3', trust)).toBe('198.51.100.9')
    expect(clientAddress('2001:db8:ffff::1', '6.6.6.6, 198.51.100.9', trust)).toBe('198.51.100.9')
    // Everything trusted: the leftmost, which a trusted proxy wrote.
    expect(clientAddress('10.0.0.2', '10.0.0.9, 10.0.0.8', trust)).toBe('10.0.0.9')
  })

  test('attack: a connection from outside the trusted proxies cannot name another client', () => {
    const trust = proxies('10.0.0.0/8')
    expect(clientAddress('203.0.113.4', '198.51.100.9', trust)).toBe('203.0.113.4')
    // A dual-stack socket shows IPv4 peers as ::ffff:a.b.c.d; they are still the IPv4 proxy.
    expect(clientAddress('::ffff:10.0.0.2', '198.51.100.9', trust)).toBe('198.51.100.9')
  })

  test('attack: a chosen entry that is no address falls back to the proxy, the stricter key', () => {
    expect(clientAddress('10.0.0.2', 'not-an-ip', hops(1))).toBe('10.0.0.2')
    expect(clientAddress('10.0.0.2', '198.51.100.9:4711', hops(1))).toBe('198.51.100.9')
    expect(clientAddress('10.0.0.2', '[2001:db8::5]:443', hops(1))).toBe('2001:db8::5')
  })

  test('behavior: IPv6 clients are keyed by their /64, IPv4 by the address', () => {
    expect(ipKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64')
    expect(ipKey('2001:DB8:1:2::1')).toBe('2001:db8:1:2::/64')
    expect(ipKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(ipKey('2001:db8:1:3::1')).not.toBe(ipKey('2001:db8:1:2::1'))
    expect(ipKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64')
    expect(ipKey('198.51.100.9')).toBe('198.51.100.9')
    expect(ipKey('unknown')).toBe('unknown')
  })
})

describe('LATCH_TRUST_PROXY', () => {
  const config = (value: string) =>
    loadConfig({ DATABASE_URL: 'memory://', LATCH_SECRET: TEST_SECRET, LATCH_TRUST_PROXY: value })

  test('behavior: 1 and true still mean one hop; a number is hops; a list is proxy addresses', () => {
    expect(parseTrustProxy('1')).toEqual(hops(1))
    expect(parseTrustProxy('true')).toEqual(hops(1))
    expect(parseTrustProxy('3')).toEqual(hops(3))
    expect(parseTrustProxy('')).toEqual(TRUST_NONE)
    expect(parseTrustProxy(undefined)).toEqual(TRUST_NONE)
    expect(parseTrustProxy('0')).toEqual(TRUST_NONE)
    expect(parseTrustProxy('10.0.0.0/8, 192.0.2.1 ,::1')).toEqual(
      proxies('10.0.0.0/8', '192.0.2.1', '::1'),
    )
    expect(config('2').trustProxy).toEqual(hops(2))
  })

  test('error: an entry that is no address, subnet or hop count stops the server with its name', () => {
    for (const bad of ['proxy.example', '10.0.0.0/33', '10.0.0.1/8/1', '99']) {
      expect(() => config(bad)).toThrow(ConfigError)
    }
    expect(() => config('10.0.0.1, nope')).toThrow("'nope' is not an IP address or subnet")
  })
})

// Which key a request is counted under is decided before the database: one backend proves it.
// Counting a key's budget in a statement is proven on both (passwordless.test.ts, the 30 calls
// per IP).
describe('rate-limit keys', () => {
  let server: TestServer | undefined
  let close: (() => Promise<void>) | undefined
  beforeAll(async () => {
    ;({ server, close } = await startTestServer('pglite', 'memory://'))
  })
  afterAll(() => close?.())
  const get = (): TestServer => {
    if (!server) throw new Error('test server not started')
    return server
  }
  const initFrom = (appId: string, forwardedFor: string, i: number) =>
    get().request('/passwordless/init', {
      appId,
      headers: { 'x-forwarded-for': forwardedFor },
      body: { email: `key.${i}.${appId}@example.com` },
    })

  test('attack: a new left-hand X-Forwarded-For entry per request does not buy a new IP budget', async () => {
    const app = await get().newApp()
    const statuses: number[] = []
    for (let i = 0; i < 31; i++) {
      statuses.push((await initFrom(app.id, `6.6.${i}.6, 198.51.100.77`, i)).status)
    }
    expect(statuses.slice(0, 30)).toEqual(new Array(30).fill(200))
    expect(statuses[30]).toBe(429)
  })

  test('attack: addresses of one IPv6 /64 share one budget; another /64 has its own', async () => {
    const app = await get().newApp()
    const statuses: number[] = []
    for (let i = 0; i < 31; i++) {
      statuses.push((await initFrom(app.id, `2001:db8:77:1::${(i + 1).toString(16)}`, i)).status)
    }
    expect(statuses.slice(0, 30)).toEqual(new Array(30).fill(200))
    expect(statuses[30]).toBe(429)
    expect((await initFrom(app.id, '2001:db8:77:2::1', 99)).status).toBe(200)
  })
})
