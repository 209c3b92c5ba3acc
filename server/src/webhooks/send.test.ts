/**
 * The webhook transport against real local servers: what production refuses (SSRF), that the
 * connection goes to the address that was checked, no redirects, the 64 KB read and the timeout.
 */
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { afterEach, expect, test } from 'vitest'
// The e2e harness's throwaway certificate for *.example.test (openssl), reused.
import { testCertificate } from '../../../e2e/src/same-site.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { type Receiver, startReceiver } from '../testing/webhook-receiver.ts'
import { refusedAddress } from './addresses.ts'
import { MAX_RESPONSE_BYTES, type Resolver, SEND_TIMEOUT_MS, sendWebhook } from './send.ts'

const receivers: Receiver[] = []
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})
async function receiver(): Promise<Receiver> {
  const r = await startReceiver()
  receivers.push(r)
  return r
}

const post = (url: string, production: boolean, resolve?: Resolver) =>
  sendWebhook({ url, headers: { 'webhook-id': 'msg_test' }, body: '{}', production, resolve })

test('refusal: production refuses every address that is not public unicast, IPv4-in-IPv6 forms included', () => {
  for (const address of [
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd12:3456::1',
    'fc00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::1',
    '2002:a9fe:a9fe::1',
  ]) {
    expect([address, refusedAddress(address)]).toEqual([address, 'is not a public address'])
  }
  for (const address of ['8.8.8.8', '93.184.215.14', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    expect([address, refusedAddress(address)]).toEqual([address, null])
  }
})

/** Every IPv6 spelling of an IPv4 address a translator or tunnel would hand to that address. */
function ipv6Forms(v4: string): string[] {
  const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number]
  const hi = ((a << 8) | b).toString(16)
  const lo = ((c << 8) | d).toString(16)
  return [
    `::ffff:${v4}`,
    `::ffff:${hi}:${lo}`,
    `::ffff:0:${v4}`,
    `::ffff:0:${hi}:${lo}`,
    `0:0:0:0:ffff:0:${hi}:${lo}`,
    `::${v4}`,
    `64:ff9b::${v4}`,
    `64:ff9b::${hi}:${lo}`,
    `2002:${hi}:${lo}::1`,
  ]
}

test('refusal: a private, loopback or reserved IPv4 address is refused in every IPv6 form that embeds it (generated)', () => {
  const ranges: [number, number, number, number, number][] = [
    [127, 0, 0, 0, 8],
    [10, 0, 0, 0, 8],
    [172, 16, 0, 0, 12],
    [192, 168, 0, 0, 16],
    [169, 254, 0, 0, 16],
    [100, 64, 0, 0, 10],
    [0, 0, 0, 0, 8],
    [224, 0, 0, 0, 4],
  ]
  const inRange = fc
    .record({ range: fc.constantFrom(...ranges), host: fc.nat({ max: 0xffffffff }) })
    .map(({ range: [a, b, c, d, prefix], host }) => {
      const base = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0
      const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0
      const n = ((base & mask) | (host & ~mask)) >>> 0
      return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')
    })
  fc.assert(
    fc.property(inRange, (v4) => {
      expect(refusedAddress(v4)).toBe('is not a public address')
      for (const v6 of ipv6Forms(v4)) {
        expect([v6, refusedAddress(v6)]).toEqual([v6, 'is not a public address'])
      }
    }),
    { seed: 6145, numRuns: 300 },
  )
  // A public address stays reachable in the forms a real network uses.
  for (const v6 of ipv6Forms('8.8.8.8')) {
    expect([v6, refusedAddress(v6)]).toEqual([v6, null])
  }
})

test('security: in production an endpoint on 127.0.0.1, or a name resolving to it, is refused before any connection', async () => {
  const hook = await receiver()
  const port = new URL(hook.url).port
  const literal = await post(hook.url, true)
  expect(literal).toMatchObject({ status: null, address: null })
  expect(literal.error).toBe('127.0.0.1 resolves to 127.0.0.1, which is not a public address')
  // The system resolver's answer for localhost.
  const named = await post(`http://localhost:${port}/hook`, true)
  expect(named.status).toBeNull()
  expect(named.error).toMatch(
    /^localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/,
  )
  // A name with one public and one private answer is refused, not raced.
  const mixed = await post(`https://hooks.example.test:${port}/hook`, true, async () => [
    { address: '93.184.215.14', family: 4 },
    { address: '10.0.0.7', family: 4 },
  ])
  expect(mixed.error).toBe('hooks.example.test resolves to 10.0.0.7, which is not a public address')
  expect(hook.received).toEqual([])
  // The same endpoint outside production is reached.
  expect((await post(hook.url, false)).status).toBe(204)
  expect(hook.received).toHaveLength(1)
})

test('security: the connection goes to the address the check saw (one resolution, pinned): a later DNS answer cannot move it', async () => {
  const hook = await receiver()
  const port = new URL(hook.url).port
  const asked: string[] = []
  // First answer: loopback (allowed outside production); any later answer would be elsewhere.
  const resolve: Resolver = async (name) => {
    asked.push(name)
    return [{ address: asked.length === 1 ? '127.0.0.1' : '192.0.2.1', family: 4 }]
  }
  const outcome = await post(`http://hooks.example.test:${port}/hook`, false, resolve)
  expect(outcome).toMatchObject({ status: 204, address: '127.0.0.1' })
  expect(asked).toEqual(['hooks.example.test'])
  expect(hook.received[0]?.headers.host).toBe(`hooks.example.test:${port}`)
})

test('security: over https the pinned connection still checks the certificate against the URL’s name', async () => {
  const { key, cert } = testCertificate()
  const server = createHttpsServer({ key, cert }, (_req, res) => res.writeHead(204).end())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const port = (server.address() as AddressInfo).port
    const loopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }]
    const send = (host: string, ca?: Buffer) =>
      sendWebhook({
        url: `https://${host}:${port}/hook`,
        headers: {},
        body: '{}',
        production: false,
        resolve: loopback,
        ca,
      })
    expect(await send('hooks.example.test', cert)).toMatchObject({
      status: 204,
      address: '127.0.0.1',
    })
    // Another name on the same address: the certificate does not name it.
    expect((await send('hooks.example.org', cert)).error).toMatch(/does not match|altnames/i)
    // An authority the system does not trust.
    expect((await send('hooks.example.test')).error).toMatch(/self.signed/i)
  } finally {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  }
})

test('behavior: a redirect is not followed; it is a failed attempt', async () => {
  const hook = await receiver()
  const elsewhere = await receiver()
  hook.answer = (_req, res) => res.writeHead(302, { location: elsewhere.url }).end()
  const outcome = await post(hook.url, false)
  expect(outcome.status).toBe(302)
  await new Promise((r) => setTimeout(r, 100))
  expect(elsewhere.received).toEqual([])
})

test('behavior: at most 64 KB of the answer is read; an endless answer does not hold the sender', async () => {
  const hook = await receiver()
  hook.answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    // 1 MB, and the answer never ends.
    res.write(Buffer.alloc(1024 * 1024, 97))
  }
  const started = Date.now()
  const outcome = await post(hook.url, false)
  expect(outcome).toMatchObject({ status: 200, error: null, bytesRead: MAX_RESPONSE_BYTES })
  expect(Date.now() - started).toBeLessThan(SEND_TIMEOUT_MS / 2)
})

test('behavior: no answer within the timeout is a failed attempt (10 s by default)', async () => {
  expect(SEND_TIMEOUT_MS).toBe(10_000)
  const hook = await receiver()
  hook.answer = () => {}
  const outcome = await sendWebhook({
    url: hook.url,
    headers: {},
    body: TEST_SECRET.slice(0, 0),
    production: false,
    timeoutMs: 300,
  })
  expect(outcome).toMatchObject({ status: null, error: 'no answer within 0.3 s' })
})
