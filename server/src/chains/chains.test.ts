import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  type ChainRpc,
  CLIENT_NAME,
  chainClient,
  getChain,
  MAX_BODY_BYTES,
  proxyRpc,
} from '@latch/shared'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ConfigError, loadConfig } from '../config.ts'
import { ANVIL_ACCOUNTS, type RunningAnvil, startAnvil } from '../testing/anvil.ts'
import {
  describeBackends,
  freshIp,
  startTestServer,
  type TestServer,
} from '../testing/test-server.ts'
import { CHAIN_RPC_APP_LIMIT, CHAIN_RPC_IP_LIMIT, CHAIN_RPC_USER_LIMIT } from './routes.ts'
import { rpcUrlFor } from './rpc-urls.ts'

let anvil: RunningAnvil
/** A node double for what anvil never does: garbage, huge answers, basic auth. */
let odd: Server
let oddUrl = ''
let oddMode: 'html' | 'huge' | 'auth' | 'slow-error' = 'html'
const oddSeen: { authorization?: string; url?: string }[] = []

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 })
  odd = createServer((req: IncomingMessage, res) => {
    oddSeen.push({ authorization: req.headers.authorization, url: req.url })
    req.resume()
    if (oddMode === 'html') {
      res.writeHead(503, { 'content-type': 'text/html' }).end('<html>down</html>')
    } else if (oddMode === 'huge') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(`{"jsonrpc":"2.0","id":1,"result":"${'a'.repeat(3 * 1024 * 1024)}"}`)
    } else if (oddMode === 'slow-error') {
      res
        .writeHead(429, { 'content-type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"node rate limit"}}')
    } else {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":1,"result":"0x1","extra":"dropped"}')
    }
  })
  await new Promise<void>((r) => odd.listen(0, '127.0.0.1', r))
  oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`
}, 40_000)

afterAll(async () => {
  await anvil?.stop()
  await new Promise((r) => odd?.close(r))
})

/** A ChainRpc through the in-process API, as the frame and the modal call it. */
function viaApi(s: TestServer, appId: string, token: string, chainId = 1): ChainRpc {
  return proxyRpc({
    apiUrl: 'http://api.test',
    appId,
    chainId,
    accessToken: token,
    clientName: CLIENT_NAME,
    fetcher: async (input, init) =>
      s.api.request(String(input).replace('http://api.test', ''), {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), 'x-forwarded-for': freshIp() },
      }),
  })
}

async function signedIn(s: TestServer, rpcUrls: Record<string, string> = {}) {
  const app = await s.newApp({ rpcUrls })
  const { token } = await s.emailLogin(app.id, `chain-${app.id}@example.com`)
  return { app, token }
}

const rpcBody = (method: string, params: unknown[] = [], id: unknown = 7) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
})

describe('rpcUrlFor', () => {
  test('behavior: the app override wins, then the operator env, then the public default', () => {
    const config = { rpcUrls: { '1': 'http://operator.test/1', '10': 'http://operator.test/10' } }
    const app = { rpcUrls: { '1': 'http://app.test/1' } }
    expect(rpcUrlFor(config, app, 1)).toBe('http://app.test/1')
    expect(rpcUrlFor(config, app, 10)).toBe('http://operator.test/10')
    expect(rpcUrlFor(config, app, 137)).toBe(getChain(137)?.rpcUrl)
    expect(rpcUrlFor({ rpcUrls: {} }, null, 1)).toBe(getChain(1)?.rpcUrl)
  })

  test('error: an unsupported chain is refused with the spec text', () => {
    expect(() => rpcUrlFor({ rpcUrls: {} }, null, 31337)).toThrow('Unsupported chainId')
  })

  test('behavior: LATCH_RPC_URL_<chainId> is read; a bad chain or URL stops the start', () => {
    const base = { DATABASE_URL: 'memory://', LATCH_SECRET: 's'.repeat(32) }
    expect(loadConfig({ ...base, LATCH_RPC_URL_137: 'https://polygon.test/key' }).rpcUrls).toEqual({
      '137': 'https://polygon.test/key',
    })
    expect(() => loadConfig({ ...base, LATCH_RPC_URL_31337: 'http://x.test' })).toThrow(
      /LATCH_RPC_URL_31337: Unsupported chainId/,
    )
    expect(() => loadConfig({ ...base, LATCH_RPC_URL_1: 'ftp://x.test' })).toThrow(ConfigError)
    expect(() => loadConfig({ ...base, LATCH_RPC_URL_01: 'http://x.test' })).toThrow(ConfigError)
  })
})

describeBackends('chain RPC proxy', (get) => {
  test('behavior: reads and a signed transfer go through the app node; the receipt comes back', async () => {
    const s = get()
    const { app, token } = await signedIn(s, { '1': anvil.url })
    const chain = chainClient(viaApi(s, app.id, token))
    expect(await chain.chainId()).toBe(1)
    const [from, to] = [ANVIL_ACCOUNTS[0], ANVIL_ACCOUNTS[1]]
    const before = await chain.balance(to.address)
    const fees = await chain.feeData()
    expect(fees.maxFeePerGas).not.toBeNull()
    const account = privateKeyToAccount(from.privateKey)
    const signed = await account.signTransaction({
      chainId: 1,
      to: to.address,
      value: 12345n,
      nonce: await chain.nonce(from.address),
      gas: await chain.estimateGas({ from: from.address, to: to.address, value: '0x3039' }),
      maxFeePerGas: fees.maxFeePerGas ?? 0n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas ?? 0n,
    })
    const hash = await chain.sendRawTransaction(signed)
    const receipt = await chain.waitForReceipt(hash, { timeoutMs: 20_000, pollMs: 100 })
    expect(receipt).toMatchObject({
      transactionHash: hash,
      from: from.address.toLowerCase(),
      to: to.address.toLowerCase(),
      status: 1,
      byzantium: true,
      type: 2,
      gasUsed: '21000',
      confirmations: 1,
    })
    expect(await chain.balance(to.address)).toBe(before + 12345n)
  })

  test('behavior: the caller id comes back; a node error passes through as a JSON-RPC error', async () => {
    const s = get()
    const { app, token } = await signedIn(s, { '1': anvil.url })
    const ok = await s.request('/chains/1/rpc', {
      appId: app.id,
      token,
      body: rpcBody('eth_chainId', [], 'abc'),
    })
    expect(ok.status).toBe(200)
    expect(ok.body).toEqual({ jsonrpc: '2.0', id: 'abc', result: '0x1' })
    const bad = await s.request<{ error: { code: number; message: string } }>('/chains/1/rpc', {
      appId: app.id,
      token,
      body: rpcBody('eth_sendRawTransaction', ['0x00']),
    })
    expect(bad.status).toBe(200)
    expect(bad.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: expect.any(Number) } })
    expect(bad.body.error.message).toBeTruthy()
    const poor = privateKeyToAccount(`0x${'11'.repeat(32)}`)
    const chain = chainClient(viaApi(s, app.id, token))
    const unfunded = await poor.signTransaction({
      chainId: 1,
      to: poor.address,
      value: 1n,
      nonce: 0,
      gas: 21_000n,
      gasPrice: 10n ** 10n,
    })
    await expect(chain.sendRawTransaction(unfunded)).rejects.toMatchObject({
      code: 'insufficient_funds',
      message: 'Insufficient funds for this transaction',
    })
  })

  test('error: methods outside the allowlist are refused before the node sees them', async () => {
    const s = get()
    const { app, token } = await signedIn(s, { '1': anvil.url })
    // anvil's accounts are unlocked: eth_sendTransaction through the proxy would spend them.
    for (const method of [
      'eth_sendTransaction',
      'eth_accounts',
      'eth_sign',
      'personal_sign',
      'anvil_setBalance',
      'debug_traceTransaction',
      'eth_getLogs',
      'admin_peers',
    ]) {
      const r = await s.request('/chains/1/rpc', {
        appId: app.id,
        token,
        body: rpcBody(method, [ANVIL_ACCOUNTS[0].address]),
      })
      expect(r.status, method).toBe(200)
      expect(r.body, method).toEqual({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32601, message: `Method ${method} is not available through Latch` },
      })
    }
    const balance = await anvil.rpc<string>('eth_getBalance', [ANVIL_ACCOUNTS[2].address, 'latest'])
    expect(BigInt(balance)).toBe(10_000n * 10n ** 18n)
  })

  test('error: unsupported chains, bad requests and missing credentials are clear 4xx', async () => {
    const s = get()
    const { app, token } = await signedIn(s, { '1': anvil.url })
    const call = (path: string, opts: Parameters<TestServer['request']>[1] = {}) =>
      s.request<Record<string, unknown>>(path, {
        appId: app.id,
        token,
        body: rpcBody('eth_chainId'),
        ...opts,
      })
    for (const id of ['31337', '0', 'abc', '1e3', '01', '99999999999999']) {
      const r = await call(`/chains/${id}/rpc`)
      expect(r.status, id).toBe(400)
      expect(r.body, id).toMatchObject({
        error: { code: 'unsupported_chain', message: 'Unsupported chainId' },
      })
    }
    expect((await call('/chains/1/rpc', { token: undefined })).status).toBe(401)
    expect((await call('/chains/1/rpc', { token: 'not-a-token' })).status).toBe(401)
    expect((await call('/chains/1/rpc', { appId: null })).body).toMatchObject({
      error: { code: 'missing_or_invalid_latch_app_id' },
    })
    const other = await s.newApp()
    expect((await call('/chains/1/rpc', { appId: other.id })).status).toBe(401)
    expect((await call('/chains/1/rpc', { method: 'GET', body: undefined })).status).toBe(404)

    const invalid: [string, string][] = [
      ['{', 'Request body is not valid JSON'],
      ['', 'Request body is missing'],
      [JSON.stringify([rpcBody('eth_chainId')]), 'Batch JSON-RPC requests are not supported'],
      ['"eth_chainId"', 'Request body is not a JSON-RPC request'],
      ['null', 'Request body is not a JSON-RPC request'],
      [JSON.stringify({ id: 1, method: 5 }), 'Request body is not a JSON-RPC request'],
      [
        JSON.stringify({ id: 1, method: 'eth_chainId', params: {} }),
        'JSON-RPC params must be a list',
      ],
    ]
    for (const [raw, message] of invalid) {
      const r = await call('/chains/1/rpc', { body: undefined, raw })
      expect(r.status, raw).toBe(400)
      expect(r.body, raw).toEqual({
        requestId: expect.any(String),
        error: { type: 'api_error', code: 'invalid_data', message },
      })
    }
    const huge = await call('/chains/1/rpc', {
      body: rpcBody('eth_call', ['x'.repeat(MAX_BODY_BYTES)]),
    })
    expect(huge.status).toBe(413)
  })

  test('error: a node that is down, answers garbage or too much is a JSON-RPC error with 502', async () => {
    const s = get()
    const closed = `http://127.0.0.1:1`
    const { app, token } = await signedIn(s, { '1': closed, '10': oddUrl })
    const down = await s.request('/chains/1/rpc', {
      appId: app.id,
      token,
      body: rpcBody('eth_chainId'),
    })
    expect(down.status).toBe(502)
    expect(down.body).toEqual({
      requestId: expect.any(String),
      error: {
        type: 'wallet_error',
        code: 'rpc_internal',
        message: "The chain's node is unreachable",
      },
    })
    // The shared client turns it into the LatchError an EIP-1193 caller sees as -32603.
    await expect(chainClient(viaApi(s, app.id, token)).chainId()).rejects.toMatchObject({
      code: 'rpc_internal',
      message: "The chain's node is unreachable",
    })
    expect(JSON.stringify(s.logs)).not.toContain(closed)
    oddMode = 'html'
    const html = await s.request('/chains/10/rpc', {
      appId: app.id,
      token,
      body: rpcBody('eth_chainId'),
    })
    expect(html.status).toBe(502)
    expect(html.body).toMatchObject({
      error: {
        code: 'rpc_internal',
        message: "The chain's node answered 503 without a JSON-RPC answer",
      },
    })
    oddMode = 'huge'
    const huge = await s.request('/chains/10/rpc', {
      appId: app.id,
      token,
      body: rpcBody('eth_chainId'),
    })
    expect(huge.status).toBe(502)
    expect(huge.body).toMatchObject({ error: { message: "The chain's node answered too much" } })
    oddMode = 'slow-error'
    const limited = await s.request('/chains/10/rpc', {
      appId: app.id,
      token,
      body: rpcBody('eth_chainId'),
    })
    expect(limited.status).toBe(200)
    expect(limited.body).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32005, message: 'node rate limit' },
    })
  })

  test('behavior: credentials in a node URL go in the Authorization header, never in answers', async () => {
    const s = get()
    const nodeUrl = oddUrl.replace('http://', 'http://user:s3cret%21@')
    const { app, token } = await signedIn(s, { '10': `${nodeUrl}/v2/api-key-123` })
    oddMode = 'auth'
    oddSeen.length = 0
    const r = await s.request('/chains/10/rpc', {
      appId: app.id,
      token,
      body: rpcBody('eth_chainId'),
    })
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 7, result: '0x1' })
    expect(oddSeen[0]).toEqual({
      authorization: `Basic ${Buffer.from('user:s3cret!').toString('base64')}`,
      url: '/v2/api-key-123',
    })
    // The public configuration never carries the app's node URLs.
    const config = await s.request(`/apps/${app.id}`, { appId: null })
    expect(JSON.stringify(config.body)).not.toContain('api-key-123')
    expect(JSON.stringify(config.body)).not.toContain(oddUrl.slice(7))
  })

  test('error: past the budget per user, per client address or per app the proxy answers 429', async () => {
    const s = get()
    const fill = async (key: string, limit: { max: number; windowMs: number }) => {
      const now = s.clock.now()
      await s.deps.db
        .insertInto('rate_limits')
        .values({
          key,
          window_start: now,
          count: limit.max,
          expires_at: new Date(now.getTime() + limit.windowMs),
        })
        .execute()
    }
    const cases = [
      ['user', CHAIN_RPC_USER_LIMIT],
      ['ip', CHAIN_RPC_IP_LIMIT],
      ['app', CHAIN_RPC_APP_LIMIT],
    ] as const
    for (const [which, limit] of cases) {
      const { app, token } = await signedIn(s, { '1': anvil.url })
      const sub = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).sub
      const ip = freshIp()
      const ask = () =>
        s.request('/chains/1/rpc', { appId: app.id, token, ip, body: rpcBody('eth_chainId') })
      // The last call within the budget passes.
      const key = {
        user: `chain-rpc:user:${app.id}:${sub}`,
        ip: `chain-rpc:ip:${ip}`,
        app: `chain-rpc:app:${app.id}`,
      }[which]
      await fill(key, { ...limit, max: limit.max - 1 })
      expect((await ask()).status, which).toBe(200)
      const r = await ask()
      expect(r.status, which).toBe(429)
      expect(Number(r.headers.get('retry-after')), which).toBeGreaterThan(0)
      expect(r.body, which).toMatchObject({ error: { code: 'too_many_requests' } })
    }
  })

  test('behavior: apps keep their node URLs sealed, merge them by chain and refuse others', async () => {
    const s = get()
    const { updateAppRecord, findApp } = await import('../apps/service.ts')
    const app = await s.newApp({ rpcUrls: { '1': 'https://one.test/key-1' } })
    const row = await s.deps.db
      .selectFrom('apps')
      .select('rpc_urls_sealed')
      .where('id', '=', app.id)
      .executeTakeFirstOrThrow()
    expect(row.rpc_urls_sealed).not.toContain('key-1')
    await updateAppRecord(s.deps, app.id, { rpcUrls: { '10': 'https://ten.test/' } })
    expect((await findApp(s.deps, app.id))?.rpcUrls).toEqual({
      '1': 'https://one.test/key-1',
      '10': 'https://ten.test/',
    })
    await updateAppRecord(s.deps, app.id, { rpcUrls: { '1': null } })
    expect((await findApp(s.deps, app.id))?.rpcUrls).toEqual({ '10': 'https://ten.test/' })
    await expect(
      updateAppRecord(s.deps, app.id, { rpcUrls: { '31337': 'http://x.test' } }),
    ).rejects.toThrow('Invalid app settings: rpcUrls 31337: Unsupported chainId')
    await expect(
      updateAppRecord(s.deps, app.id, { rpcUrls: { '1': 'javascript:alert(1)' } }),
    ).rejects.toThrow(/rpcUrls/)
  })
})

describeBackends("chain RPC proxy: the app's chains", (get) => {
  let base: RunningAnvil
  beforeAll(async () => {
    base = await startAnvil({ chainId: 8453 })
  }, 40_000)
  afterAll(async () => {
    await base?.stop()
  })

  test("behavior: today's networks by default, SPEC's shut-down test networks off; an app on Base only reaches Base, the rest is 'Unsupported chainId'", async () => {
    const s = get()
    const { updateAppRecord } = await import('../apps/service.ts')
    const { app, token } = await signedIn(s, { '1': anvil.url, '8453': base.url })
    // The default the modal and the provider are served, written out: the main networks, then
    // the test networks that run today.
    const today = [
      1, 10, 137, 42161, 8453, 42220, 314, 11155111, 84532, 11155420, 421614, 80002, 314159,
    ]
    expect(app.chains).toEqual(today)
    const served = await s.request<{ chains: number[] }>(`/apps/${app.id}`)
    expect(served.body.chains).toEqual(today)
    const call = (chainId: number) =>
      s.request<Record<string, unknown>>(`/chains/${chainId}/rpc`, {
        appId: app.id,
        token,
        body: rpcBody('eth_chainId'),
      })
    const refused = { error: { code: 'unsupported_chain', message: 'Unsupported chainId' } }
    expect((await call(1)).body).toMatchObject({ result: '0x1' })
    expect((await call(8453)).body).toMatchObject({ result: '0x2105' })
    // SPEC's Goerli networks and Mumbai are chains Latch knows, but shut down: off unless the
    // app names them.
    for (const id of [5, 420, 80001, 421613, 84531]) {
      expect((await call(id)).status, String(id)).toBe(400)
      expect((await call(id)).body, String(id)).toMatchObject(refused)
    }

    await updateAppRecord(s.deps, app.id, { chains: [8453, 8453] })
    expect((await s.request<{ chains: number[] }>(`/apps/${app.id}`)).body.chains).toEqual([8453])
    expect((await call(8453)).body).toMatchObject({ result: '0x2105' })
    expect(await chainClient(viaApi(s, app.id, token, 8453)).chainId()).toBe(8453)
    for (const id of [1, 10, 84532]) {
      expect((await call(id)).status, String(id)).toBe(400)
      expect((await call(id)).body, String(id)).toMatchObject(refused)
    }
    const row = await s.deps.db
      .selectFrom('apps')
      .select('chains')
      .where('id', '=', app.id)
      .executeTakeFirstOrThrow()
    expect(row.chains).toEqual([8453])

    // null goes back to the default.
    await updateAppRecord(s.deps, app.id, { chains: null })
    expect((await s.request<{ chains: number[] }>(`/apps/${app.id}`)).body.chains).toEqual(today)
    expect((await call(1)).body).toMatchObject({ result: '0x1' })
    expect((await call(5)).body).toMatchObject(refused)
  })

  test('refusal: a chain list with an unknown chain, or none, is refused with the reason', async () => {
    const s = get()
    const { updateAppRecord } = await import('../apps/service.ts')
    const app = await s.newApp()
    await expect(updateAppRecord(s.deps, app.id, { chains: [8453, 31337] })).rejects.toThrow(
      /^Invalid app settings: chains\.1 Unsupported chainId \(known: 1, 5, .*, 80002\)$/,
    )
    await expect(updateAppRecord(s.deps, app.id, { chains: [] })).rejects.toThrow(
      'Invalid app settings: chains must list at least one chain',
    )
    await expect(s.newApp({ chains: ['8453'] as unknown as number[] })).rejects.toThrow(
      /Invalid app settings: chains\.0/,
    )
    const created = await s.newApp({ chains: [84532, 11155111] })
    expect(created.chains).toEqual([84532, 11155111])
  })
})

describe('chain RPC proxy: operator-wide node', () => {
  test('behavior: LATCH_RPC_URL_<chainId> serves apps without their own node', async () => {
    const started = await startTestServer('pglite', 'memory://', { LATCH_RPC_URL_1: anvil.url })
    try {
      const s = started.server
      const { app, token } = await signedIn(s)
      const head = Number(await anvil.rpc<string>('eth_blockNumber'))
      expect(await chainClient(viaApi(s, app.id, token)).blockNumber()).toBe(head)
    } finally {
      await started.close()
    }
  }, 30_000)
})
