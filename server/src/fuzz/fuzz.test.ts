/**
 * Bad input at scale: every route of the API (SIWE, the wallet share store, the user API with
 * a valid app secret, and the wallet frame's page and assets included) over real HTTP with generated malformed methods,
 * paths, headers, bodies, encodings and oversized values (fast-check, fixed seed), then raw
 * socket cases node:http would not send. Every answer must be a 4xx with the error body (or a
 * documented 2xx/3xx for a request that happens to be valid), never a 5xx, never a dropped
 * connection, and the server must still answer at the end.
 *
 * LATCH_FUZZ_SEED and LATCH_FUZZ_RUNS replay or widen a run.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  ANALYTICS_EVENTS,
  API_PREFIX,
  APP_ID_HEADER,
  type AuthResponse,
  CHAIN_RPC_METHODS,
  CHAINS,
  CLIENT_HEADER,
  CLIENT_NAME,
  MAX_BODY_BYTES,
  OAUTH_PROVIDERS,
  SIWE_STATEMENT,
} from '@latch/shared'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createAppSecret, type RunningServer, startServer } from '../index.ts'
import { refreshCookieName } from '../sessions/refresh-cookie.ts'
import { migratedMemory } from '../testing/global-setup.ts'
import {
  POSTGRES_BIN,
  type RunningAnvil,
  type RunningPostgres,
  runPostgres,
  startAnvil,
} from '../testing/index.ts'
import { TEST_SECRET } from '../testing/test-server.ts'
import { send, sendRaw, type WireOutcome, type WireRequest } from '../testing/wire.ts'

const SEED = Number(process.env.LATCH_FUZZ_SEED ?? 20_261_123)
const RUNS = Number(process.env.LATCH_FUZZ_RUNS ?? 2_200)
const CONCURRENCY = Number(process.env.LATCH_FUZZ_CONCURRENCY ?? 4)
/** LATCH_FUZZ_POSTGRES=1 runs against a real PostgreSQL instead of PGlite in memory. */
const ON_POSTGRES = process.env.LATCH_FUZZ_POSTGRES === '1'
const MODAL_ORIGIN = 'http://127.0.0.1:5174'
const HOST_ORIGIN = 'http://localhost:5173'

let api: RunningServer
let price: Server
/** The chain proxy's node for every supported chain: nothing leaves the machine. */
let anvil: RunningAnvil
const logs: string[] = []
/** The valid values a generated request may borrow. */
const ctx = {
  appId: '',
  otherAppId: '',
  token: '',
  otherToken: '',
  refresh: [] as string[],
  /** An app secret of the fuzzed app (the user API's credential). */
  appSecret: '',
  /** Users the user API may look up and delete; the signed-in ones above are not among them. */
  victims: [] as string[],
}

/** A stand-in for the price source outside the machine: `{ "usd": n }` for any symbol. */
async function startPriceSource(): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"usd": 3120.5}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

/** An e-mail sign-in's answer, with the refresh token its cookie set. */
async function emailSignIn(
  appId: string,
  email: string,
): Promise<AuthResponse & { refresh_token: string }> {
  const post = async (path: string, body: unknown) =>
    fetch(`${api.url}${API_PREFIX}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [APP_ID_HEADER]: appId,
        [CLIENT_HEADER]: CLIENT_NAME,
      },
      body: JSON.stringify(body),
    })
  expect((await post('/passwordless/init', { email })).status).toBe(200)
  const code = logs.find((l) => l.startsWith(`[latch] e-mail code for ${email}:`))?.slice(-6)
  const res = await post('/passwordless/authenticate', { email, code })
  expect(res.status).toBe(200)
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('__Secure-latch-rt-')) ?? ''
  const refresh_token = cookie.slice(cookie.indexOf('=') + 1).split(';')[0] ?? ''
  return { ...((await res.json()) as AuthResponse), refresh_token }
}

let pg: RunningPostgres | null = null

beforeAll(async () => {
  price = await startPriceSource()
  anvil = await startAnvil({ chainId: 1 })
  const { port } = price.address() as AddressInfo
  let databaseUrl = 'memory://'
  if (ON_POSTGRES) {
    pg = await runPostgres()
    if (!pg) throw new Error(`LATCH_FUZZ_POSTGRES=1 needs PostgreSQL under ${POSTGRES_BIN}`)
    databaseUrl = await pg.createDatabase()
  }
  api = await startServer({
    port: 0,
    ...(databaseUrl === 'memory://' ? migratedMemory() : {}),
    env: {
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      LATCH_SECRET: TEST_SECRET,
      // Generated X-Forwarded-For values spread the per-IP budget, and garbage ones are fuzzed.
      LATCH_TRUST_PROXY: '1',
      LATCH_MODAL_ORIGIN: MODAL_ORIGIN,
      SMTP_URL: '',
      TWILIO_ACCOUNT_SID: '',
      TWILIO_AUTH_TOKEN: '',
      TWILIO_FROM: '',
      LATCH_PRICE_URL: `http://127.0.0.1:${port}/price/{symbol}?chain={chainId}`,
      ...Object.fromEntries(CHAINS.map((c) => [`LATCH_RPC_URL_${c.id}`, anvil.url])),
    },
    log: (line) => logs.push(line),
  })
  // Every provider points at a closed loopback port: nothing leaves the machine.
  const closed = 'http://127.0.0.1:9'
  const endpoints = {
    authorizationUrl: `${closed}/authorize`,
    tokenUrl: `${closed}/token`,
    userInfoUrl: `${closed}/user`,
    jwksUrl: `${closed}/jwks`,
    issuer: closed,
  }
  const app = await api.admin.createApp({
    name: 'Fuzzed',
    allowedOrigins: [HOST_ORIGIN],
    loginMethods: ['email', 'sms', 'wallet', 'google', 'github'],
    oauth: {
      google: { clientId: 'fuzz-google', clientSecret: 'fuzz-secret', endpoints },
      github: { clientId: 'fuzz-github', clientSecret: 'fuzz-secret', endpoints },
    },
  })
  const other = await api.admin.createApp({ name: 'Other', allowedOrigins: [HOST_ORIGIN] })
  ctx.appId = app.id
  ctx.otherAppId = other.id
  const signedIn = await emailSignIn(app.id, 'fuzz@example.com')
  ctx.token = signedIn.token
  ctx.otherToken = (await emailSignIn(other.id, 'other@example.com')).token
  ctx.refresh.push(signedIn.refresh_token)
  for (let i = 0; i < 4; i++) {
    ctx.refresh.push((await emailSignIn(app.id, `fuzz${i}@example.com`)).refresh_token)
  }
  ctx.appSecret = (await createAppSecret(api.deps, app.id)).secret
  for (let i = 0; i < 3; i++) {
    ctx.victims.push((await emailSignIn(app.id, `victim${i}@example.com`)).user.id)
  }
}, 60_000)

afterAll(async () => {
  await api?.close()
  await anvil?.stop()
  await pg?.close()
  await new Promise<void>((resolve) => (price ? price.close(() => resolve()) : resolve()))
})

// ---------------------------------------------------------------- generators

/** Characters node:http lets through in a header value (Latin-1 without controls). */
const headerChar = fc
  .oneof(
    fc.integer({ min: 0x20, max: 0x7e }),
    fc.integer({ min: 0x80, max: 0xff }),
    fc.constant(0x09),
  )
  .map((n) => String.fromCharCode(n))
const headerValue = (maxLength = 64) => fc.string({ unit: headerChar, maxLength })
/** Printable ASCII without space: what may stand in a request target. */
const pathChar = fc.integer({ min: 0x21, max: 0x7e }).map((n) => String.fromCharCode(n))
const pathJunk = fc.string({ unit: pathChar, maxLength: 40 })

/**
 * Any text: printable, every code point (NUL, controls, lone surrogates), graphemes, or a
 * plausible value with a NUL or half a surrogate pair spliced in — text a database may refuse.
 */
const text = (maxLength: number, plausible: fc.Arbitrary<string> = fc.string({ maxLength })) =>
  fc.oneof(
    { weight: 3, arbitrary: plausible },
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc
      .tuple(
        plausible,
        fc.constantFrom('\u0000', '\ud800', '\udc00', '\uffff', '\u202e', '\r\n'),
        fc.nat(),
      )
      .map(([s, bad, at]) => {
        const i = s.length ? at % s.length : 0
        return `${s.slice(0, i)}${bad}${s.slice(i)}`
      }),
  )
const email = fc.oneof(text(40, fc.emailAddress()), fc.constant(''))
const phone = fc.oneof(
  text(
    40,
    fc.integer({ min: 0, max: 9999 }).map((n) => `+1415555${String(n).padStart(4, '0')}`),
  ),
)
const code = text(40, fc.stringMatching(/^\d{6}$/))
const refreshToken = fc.oneof(
  fc.constantFrom(...[0, 1, 2, 3, 4]).map((i) => ctx.refresh[i] ?? ''),
  text(600),
  fc.base64String({ maxLength: 64 }),
)
const provider = fc.oneof(
  // The two the fuzzed app configures, then any.
  { weight: 3, arbitrary: fc.constantFrom('google', 'github') },
  fc.constantFrom(...OAUTH_PROVIDERS),
  fc.string({ maxLength: 12 }),
  fc.constant('__proto__'),
)
/** 32 bytes in base64url, as a browser keeps for an OAuth flow, or anything else. */
const browserSecret = text(
  64,
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('base64url')),
)
const url = fc.oneof(
  { weight: 3, arbitrary: fc.constant(`${HOST_ORIGIN}/after`) },
  fc.webUrl(),
  fc.string({ maxLength: 80 }),
  fc.constant('javascript:alert(1)'),
)

interface Route {
  method: 'GET' | 'POST' | 'DELETE'
  /** The path under /api/v1 (under / with `root`), query included. */
  path: fc.Arbitrary<string>
  /** The wallet frame's page and assets live outside /api/v1. */
  root?: boolean
  /** A body the route would accept (or nearly); mutated below. */
  body?: fc.Arbitrary<unknown>
  /** Authenticated by an app secret (the user API) rather than a user's access token. */
  appSecret?: true
}

const codeRoutes = (prefix: string, field: 'email' | 'phoneNumber', id: fc.Arbitrary<string>) => {
  const unlinkField = field === 'email' ? 'address' : 'phoneNumber'
  return [
    { method: 'POST', path: fc.constant(`${prefix}/init`), body: fc.record({ [field]: id }) },
    ...['authenticate', 'link'].map(
      (r): Route => ({
        method: 'POST',
        path: fc.constant(`${prefix}/${r}`),
        body: fc.record({ [field]: id, code }),
      }),
    ),
    {
      method: 'POST',
      path: fc.constant(`${prefix}/unlink`),
      body: fc.record({ [unlinkField]: id }),
    },
  ] satisfies Route[]
}

const appIdInPath = fc.oneof(
  fc.constant('').map(() => ctx.appId),
  fc.constant('').map(() => ctx.otherAppId),
  pathJunk.map(encodeURIComponent),
  fc.constant('%00'),
  fc.constant('a'.repeat(4000)),
)

/** `n` bytes in lowercase hex, as the wallet routes take them, or any text. */
const hex = (n: number) =>
  text(
    n * 2 + 4,
    fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString('hex')),
  )
const walletAddress = text(
  44,
  fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
)

/** An EIP-4361 message of generated fields (a domain, nonce or chain the server may refuse), or any text. */
const siweMessage = text(
  900,
  fc
    .record({
      domain: fc.constantFrom('localhost:5173', 'evil.example', '127.0.0.1:5174', ''),
      address: walletAddress,
      nonce: fc.oneof(hex(16), fc.string({ maxLength: 20 })),
      chainId: fc.oneof(fc.constantFrom(1, 10, 31337, 0), fc.nat()),
      issuedAt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      statement: fc.oneof(fc.constant(SIWE_STATEMENT), fc.string({ maxLength: 40 })),
    })
    .map(
      (f) =>
        `${f.domain} wants you to sign in with your Ethereum account:\n${f.address}\n\n${f.statement}\n\nURI: ${HOST_ORIGIN}\nVersion: 1\nChain ID: ${f.chainId}\nNonce: ${f.nonce}\nIssued At: ${f.issuedAt}`,
    ),
)
const SIWE_ROUTES: Route[] = [
  { method: 'POST', path: fc.constant('/siwe/init'), body: fc.record({ address: walletAddress }) },
  ...['authenticate', 'link'].map(
    (r): Route => ({
      method: 'POST',
      path: fc.constant(`/siwe/${r}`),
      body: fc.record({
        message: siweMessage,
        signature: fc.oneof(
          hex(65).map((h) => `0x${h}`),
          hex(200),
          text(20),
        ),
        chainId: fc.oneof(
          fc.constantFrom(1, '1', 'eip155:1', 10, 31337, 0, -1, 1.5, '0x1'),
          fc.integer(),
          text(20),
        ),
        walletClientType: text(80, fc.constantFrom('metamask', 'latch', 'unknown')),
        connectorType: text(80, fc.constantFrom('injected', 'embedded')),
      }),
    }),
  ),
  {
    method: 'POST',
    path: fc.constant('/siwe/unlink'),
    body: fc.record({ address: walletAddress }),
  },
]

const WALLET_ROUTES: Route[] = [
  ...['/wallets/info', '/wallets/shares', '/wallets/recover'].map(
    (path): Route => ({
      method: 'POST',
      path: fc.constant(path),
      body: fc.record({ address: walletAddress }),
    }),
  ),
  {
    method: 'POST',
    path: fc.constant('/wallets'),
    body: fc.record(
      {
        address: walletAddress,
        chainId: text(30, fc.constantFrom('eip155:1', 'eip155:8453', 'eip155:0')),
        authShare: hex(33),
        recovery: fc.oneof(
          fc.record({ method: fc.constant('latch'), key: hex(32), ciphertext: hex(61) }),
          fc.record({
            method: fc.constant('user-passcode'),
            salt: hex(16),
            ciphertext: hex(61),
            verifier: hex(32),
            ticket: text(600),
          }),
          fc.record({ method: text(20) }),
        ),
      },
      { requiredKeys: ['address', 'authShare', 'recovery'] },
    ),
  },
  {
    method: 'POST',
    path: fc.constant('/wallets/passcode/begin'),
    // Random bytes are mostly not a ristretto255 point: the server must say so, not fail.
    body: fc.record({ blinded: hex(32) }),
  },
  {
    method: 'POST',
    path: fc.constant('/wallets/passcode/evaluate'),
    body: fc.record({ address: walletAddress, blinded: hex(32) }),
  },
  {
    method: 'POST',
    path: fc.constant('/wallets/passcode/verify'),
    body: fc.record({ address: walletAddress, verifier: hex(32) }),
  },
  {
    method: 'GET',
    root: true,
    path: appIdInPath.map((id) => `/apps/${id}/embedded-wallets`),
  },
  {
    method: 'GET',
    root: true,
    path: fc
      .oneof(
        fc.constantFrom(
          'index.js',
          'index.css',
          '..%2Findex.html',
          '..%2F..%2Fpackage.json',
          '.env',
        ),
        pathJunk.map(encodeURIComponent),
      )
      .map((file) => `/embedded-wallets/assets/${file}`),
  },
]

/** The user API, under the fuzzed app (or another one, or junk) and its own query strings. */
const adminApp = fc.oneof(
  { weight: 6, arbitrary: fc.constant('').map(() => ctx.appId) },
  fc.constant('').map(() => ctx.otherAppId),
  pathJunk.map(encodeURIComponent),
)
const victim = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(0, 1, 2).map((i) => ctx.victims[i] ?? '') },
  text(80, fc.constant('did:latch:')),
)
const query = (pairs: Record<string, fc.Arbitrary<string>>) =>
  fc
    .record(pairs, { requiredKeys: [] })
    .map((q) => new URLSearchParams(q as Record<string, string>).toString())
/** A path segment of any text: half a surrogate pair (which encodeURIComponent refuses) as U+FFFD. */
const segment = (value: string) => encodeURIComponent(value.replace(/\p{Cs}/gu, '\ufffd'))
const ADMIN_ROUTES: Route[] = [
  {
    method: 'GET',
    path: fc
      .tuple(
        adminApp,
        query({
          limit: fc.oneof(fc.integer({ min: -5, max: 500 }).map(String), text(10)),
          cursor: text(80),
          created_since: fc.oneof(
            fc.date().map((d) => d.toISOString()),
            text(30),
          ),
          has_wallet: fc.constantFrom('true', 'false', 'yes', ''),
          login_method: fc.oneof(fc.constantFrom('email', 'sms', 'wallet', 'google'), text(12)),
        }),
      )
      .map(([app, q]) => `/admin/apps/${app}/users?${q}`),
    appSecret: true,
  },
  {
    method: 'GET',
    path: adminApp.map((app) => `/admin/apps/${app}/users/export`),
    appSecret: true,
  },
  ...(
    [
      ['by-email', query({ email })],
      ['by-phone', query({ phone })],
      ['by-wallet', query({ address: text(50, walletAddress) })],
      ['by-social', query({ provider, subject: text(60) })],
    ] as const
  ).map(
    ([lookup, q]): Route => ({
      method: 'GET',
      path: fc.tuple(adminApp, q).map(([app, s]) => `/admin/apps/${app}/users/${lookup}?${s}`),
      appSecret: true,
    }),
  ),
  {
    method: 'POST',
    path: adminApp.map((app) => `/admin/apps/${app}/users/import`),
    body: fc.record({
      users: fc.array(fc.oneof(fc.record({ email }), fc.record({ phone }), fc.jsonValue()), {
        maxLength: 120,
      }),
    }),
    appSecret: true,
  },
  ...(['GET', 'DELETE'] as const).map(
    (method): Route => ({
      method,
      path: fc
        .tuple(adminApp, victim)
        .map(([app, id]) => `/admin/apps/${app}/users/${segment(id)}`),
      appSecret: true,
    }),
  ),
]

const ROUTES: Route[] = [
  { method: 'GET', path: appIdInPath.map((id) => `/apps/${id}`) },
  { method: 'GET', path: appIdInPath.map((id) => `/apps/${id}/jwks.json`) },
  {
    method: 'GET',
    path: fc
      .oneof(
        fc.constantFrom('1', '8453', '137', '0', '-1', '1e3', '0x1', 'NaN', '', '1.5'),
        fc.integer().map(String),
        pathJunk.map(encodeURIComponent),
      )
      .map((chainId) => `/token_price?chainId=${chainId}`),
  },
  ...(['', '/fork', '/fork/recover'] as const).map(
    (r): Route => ({
      method: 'POST',
      path: fc.constant(`/sessions${r}`),
      body: fc.record({ refresh_token: refreshToken }),
    }),
  ),
  {
    method: 'POST',
    path: fc.constant('/sessions/logout'),
    body: fc.record({ refresh_token: fc.option(refreshToken) }, { requiredKeys: [] }),
  },
  ...codeRoutes('/passwordless', 'email', email),
  ...codeRoutes('/passwordless_sms', 'phoneNumber', phone),
  {
    method: 'POST',
    path: fc.constant('/oauth/init'),
    body: fc.record({ provider, redirect_to: url, browser_hash: browserSecret }),
  },
  ...['authenticate', 'link'].map(
    (r): Route => ({
      method: 'POST',
      path: fc.constant(`/oauth/${r}`),
      body: fc.record({
        authorization_code: fc.string({ maxLength: 64 }),
        state_code: text(64, fc.base64String({ maxLength: 64 })),
        browser_secret: browserSecret,
      }),
    }),
  ),
  {
    method: 'POST',
    path: fc.constant('/oauth/unlink'),
    body: fc.record({ provider, subject: text(300) }),
  },
  {
    method: 'GET',
    path: fc
      .tuple(provider, pathJunk, pathJunk)
      .map(
        ([p, state, codeValue]) =>
          `/oauth/callback/${encodeURIComponent(p)}?state=${encodeURIComponent(state)}&code=${encodeURIComponent(codeValue)}`,
      ),
  },
  {
    method: 'POST',
    path: provider.map((p) => `/oauth/callback/${encodeURIComponent(p)}`),
    body: fc.record({ state: fc.string({ maxLength: 64 }), code: fc.string({ maxLength: 64 }) }),
  },
  {
    method: 'POST',
    path: fc.constant('/analytics_events'),
    body: fc.record(
      {
        event_name: fc.oneof(fc.constantFrom(...ANALYTICS_EVENTS), fc.string({ maxLength: 30 })),
        client_id: text(200),
        payload: fc.oneof(
          fc.dictionary(text(10), fc.oneof(text(50), fc.jsonValue())),
          fc.jsonValue(),
        ),
      },
      { requiredKeys: ['event_name', 'client_id'] },
    ),
  },
  ...SIWE_ROUTES,
  ...WALLET_ROUTES,
  ...ADMIN_ROUTES,
  {
    method: 'POST',
    path: fc
      .oneof(
        fc.constantFrom('1', '10', '137', '31337', '0', '-1', '0x1', '1e3', '01', ''),
        fc.integer().map(String),
        pathJunk.map(encodeURIComponent),
      )
      .map((chainId) => `/chains/${chainId}/rpc`),
    body: fc.record(
      {
        jsonrpc: fc.constantFrom('2.0', '1.0'),
        id: fc.oneof(fc.integer(), text(20), fc.constant(null)),
        method: fc.oneof(
          fc.constantFrom(...CHAIN_RPC_METHODS, 'eth_sendTransaction', 'anvil_mine', 'eth_getLogs'),
          text(70),
        ),
        params: fc.oneof(
          fc.array(
            fc.oneof(walletAddress, fc.constantFrom('latest', 'pending', '0x1'), fc.jsonValue()),
            {
              maxLength: 3,
            },
          ),
          fc.jsonValue(),
        ),
      },
      { requiredKeys: ['method'] },
    ),
  },
]

/** The route's path as generated, or bent: trailing junk, bad escapes, odd case, dot segments. */
const bentPath = (path: string) =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(path) },
    fc.constant(`${path}/`),
    pathJunk.map((j) => `${path}${j.startsWith('/') ? j : `/${j}`}`),
    fc
      .constantFrom('%ZZ', '%', '%00', '%C3%28', '%FF%FE', '/..%2F..%2Fetc%2Fpasswd', '//', ';a=b')
      .map((j) => `${path}${j}`),
    fc.constant(path.toUpperCase()),
    pathJunk.map((q) => `${path}${path.includes('?') ? '&' : '?'}${q}`),
    fc.constant(`${path}?${'a=1&'.repeat(2000)}`),
  )

const methods = fc.oneof(
  fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  fc.constantFrom('TRACE', 'PROPFIND', 'MKCOL', 'PURGE', 'SEARCH', 'QUERY', 'LINK'),
)

/** A value that may replace any JSON field: wrong types, huge strings, nesting, odd keys. */
const badValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constant(null),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.constant('x'.repeat(5_000)),
  fc.constantFrom(1e308, -0, 2 ** 53 + 1, true),
  fc.constant({ __proto__: { polluted: true } }),
  fc.constant([[[[[[[[[[[]]]]]]]]]]]),
)

/** Body bytes and the content type they go with. */
type Body = { bytes?: Buffer; contentType?: string; note: string }

function bodies(valid: fc.Arbitrary<unknown> | undefined): fc.Arbitrary<Body> {
  const object = valid ?? fc.constant({})
  const json = (v: unknown) => Buffer.from(JSON.stringify(v) ?? 'null', 'utf8')
  const mutated = fc
    .tuple(object, fc.string({ maxLength: 20 }), badValue, fc.boolean())
    .map(([o, key, value, replace]) => {
      const copy = { ...(o as Record<string, unknown>) }
      const keys = Object.keys(copy)
      const target = replace && keys.length > 0 ? (keys[key.length % keys.length] as string) : key
      copy[target] = value
      return copy
    })
  const depth = fc.integer({ min: 1_000, max: 30_000 })
  return fc.oneof(
    {
      weight: 5,
      arbitrary: object.map(
        (v): Body => ({ bytes: json(v), contentType: 'application/json', note: 'valid' }),
      ),
    },
    {
      weight: 5,
      arbitrary: mutated.map(
        (v): Body => ({ bytes: json(v), contentType: 'application/json', note: 'mutated' }),
      ),
    },
    fc
      .jsonValue()
      .map((v): Body => ({ bytes: json(v), contentType: 'application/json', note: 'any json' })),
    fc
      .string({ unit: 'grapheme', maxLength: 200 })
      .map((s): Body => ({ bytes: Buffer.from(s), contentType: 'application/json', note: 'text' })),
    fc
      .uint8Array({ maxLength: 300 })
      .map(
        (b): Body => ({ bytes: Buffer.from(b), contentType: 'application/json', note: 'bytes' }),
      ),
    object.map((v): Body => {
      // Invalid UTF-8 inside a JSON string.
      const text = JSON.stringify(v)
      const at = Math.max(1, text.indexOf('"', 1))
      const raw = Buffer.concat([
        Buffer.from(text.slice(0, at)),
        Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]),
        Buffer.from(text.slice(at)),
      ])
      return { bytes: raw, contentType: 'application/json; charset=utf-8', note: 'invalid utf-8' }
    }),
    object.map(
      (v): Body => ({
        bytes: Buffer.from(JSON.stringify(v), 'utf16le'),
        contentType: 'application/json; charset=utf-16',
        note: 'utf-16',
      }),
    ),
    object.map(
      (v): Body => ({
        bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json(v)]),
        contentType: 'application/json',
        note: 'bom',
      }),
    ),
    fc.tuple(object, fc.integer({ min: MAX_BODY_BYTES, max: MAX_BODY_BYTES * 3 })).map(
      ([v, size]): Body => ({
        bytes: json({ ...(v as object), pad: 'x'.repeat(size) }),
        contentType: 'application/json',
        note: 'oversized',
      }),
    ),
    depth.map(
      (n): Body => ({
        bytes: Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`),
        contentType: 'application/json',
        note: 'deep arrays',
      }),
    ),
    depth.map(
      (n): Body => ({
        bytes: Buffer.from(
          `${'{"a":'.repeat(Math.min(n, 12_000))}1${'}'.repeat(Math.min(n, 12_000))}`,
        ),
        contentType: 'application/json',
        note: 'deep objects',
      }),
    ),
    object.map(
      (v): Body => ({
        bytes: Buffer.from(
          new URLSearchParams(
            Object.entries(v as Record<string, unknown>).map(([k, x]) => [
              k,
              typeof x === 'string' ? x : (JSON.stringify(x) ?? ''),
            ]),
          ).toString(),
        ),
        contentType: 'application/x-www-form-urlencoded',
        note: 'form',
      }),
    ),
    fc
      .tuple(
        fc.string({ maxLength: 100 }),
        fc.constantFrom(
          'multipart/form-data; boundary=b',
          'multipart/form-data',
          'multipart/form-data; boundary=zz',
        ),
      )
      .map(
        ([s, type]): Body => ({
          bytes: Buffer.from(
            `--b\r\nContent-Disposition: form-data; name="state"\r\n\r\n${s}\r\n--b--`,
          ),
          contentType: type,
          note: 'multipart',
        }),
      ),
    fc.constant<Body>({ note: 'none' }),
    fc.constant<Body>({ bytes: Buffer.alloc(0), contentType: 'application/json', note: 'empty' }),
  )
}

const contentType = fc.oneof(
  fc.constantFrom(
    'text/plain',
    'application/json; charset=latin1',
    'application/octet-stream',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=',
    ';;;',
  ),
  headerValue(80),
)

function bearer(): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    fc.constant(undefined),
    fc.constant('').map(() => `Bearer ${ctx.token}`),
    fc.constant('').map(() => `Bearer ${ctx.otherToken}`),
    fc.constant('').map(() => `Bearer ${ctx.token.slice(0, -4)}AAAA`),
    fc.constant('').map(() => `bearer   ${ctx.token.split('.').slice(0, 2).join('.')}.`),
    fc.constant('Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'),
    fc.constant('').map(() => `Bearer ${ctx.appSecret}`),
    fc.constant('').map(() => `Bearer ${ctx.appSecret.slice(0, -3)}AAA`),
    fc.constant(`Bearer ${'a'.repeat(8_000)}`),
    headerValue(100).map((v) => `Bearer ${v}`),
    headerValue(100),
    fc.constant('Basic dXNlcjpwYXNz'),
  )
}

const appIdHeader = fc.oneof(
  { weight: 10, arbitrary: fc.constant('').map(() => ctx.appId) },
  fc.constant('').map(() => ctx.otherAppId),
  fc.constant(undefined),
  fc.constant("' OR 1=1 --"),
  headerValue(40),
  fc.constant('a'.repeat(8_000)),
)

const forwardedFor = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  headerValue(60),
  fc.constant(Array.from({ length: 500 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(', ')),
)

interface Case {
  route: number
  req: WireRequest
  note: string
}

/** Anything at all: every part of the request may be bent. */
const wild: fc.Arbitrary<Case> = fc.integer({ min: 0, max: ROUTES.length - 1 }).chain((index) => {
  const route = ROUTES[index] as Route
  return fc
    .record({
      path: route.path.chain(bentPath),
      method: fc.oneof({ weight: 6, arbitrary: fc.constant(route.method) }, methods),
      body: bodies(route.body),
      contentType: fc.option(contentType, { freq: 8 }),
      appId: appIdHeader,
      client: fc.oneof(
        { weight: 6, arbitrary: fc.constant(CLIENT_NAME) },
        fc.constant(undefined),
        headerValue(200),
      ),
      authorization: bearer(),
      forwardedFor: fc.option(forwardedFor, { freq: 6 }),
      origin: fc.option(fc.oneof(fc.constant(MODAL_ORIGIN), fc.webUrl(), headerValue(30)), {
        freq: 3,
      }),
      // The refresh cookie the session routes read: a live token, a spent one, or junk.
      refreshCookie: fc.option(
        fc.oneof(
          fc.constantFrom(...[0, 1, 2, 3, 4]).map((i) => ctx.refresh[i] ?? ''),
          fc.base64String({ maxLength: 64 }),
        ),
        { freq: 2 },
      ),
      extra: fc.option(
        fc.constantFrom<Record<string, string>>(
          { 'content-encoding': 'gzip' },
          { 'content-encoding': 'br, deflate' },
          { 'transfer-encoding': 'chunked' },
          { expect: '100-continue' },
          { 'access-control-request-method': 'POST' },
          { 'x-http-method-override': 'DELETE' },
          { host: 'evil.example' },
          { accept: 'text/html' },
          { cookie: `a=${'b'.repeat(4_000)}` },
        ),
        { freq: 5 },
      ),
    })
    .map((g): Case => {
      const headers: Record<string, string> = {}
      if (g.appId !== undefined) headers[APP_ID_HEADER] = g.appId
      if (g.client !== undefined) headers[CLIENT_HEADER] = g.client
      if (g.authorization !== undefined) headers.authorization = g.authorization
      if (g.forwardedFor !== null) headers['x-forwarded-for'] = g.forwardedFor
      if (g.origin !== null) headers.origin = g.origin
      if (g.refreshCookie !== null) {
        headers.cookie = `${refreshCookieName(ctx.appId)}=${g.refreshCookie}`
      }
      const type = g.contentType ?? g.body.contentType
      if (type !== undefined) headers['content-type'] = type
      Object.assign(headers, g.extra ?? {})
      // Chunked framing and a length do not go together; node:http sends the chunks.
      if (headers['transfer-encoding']) delete headers['content-length']
      const prefix = route.root ? '' : API_PREFIX
      const req: WireRequest = { method: g.method, path: `${prefix}${g.path}`, headers }
      if (g.body.bytes !== undefined) req.body = g.body.bytes
      return { route: index, req, note: g.body.note }
    })
})

// ---------------------------------------------------------------- checks

/**
 * Nearly valid: the route's own path, method and headers (a signed-in user's token half the
 * time), and a body of the right shape whose values are generated. These reach the services
 * and the database, where odd text (a NUL, half a surrogate pair) can still fail.
 */
const nearValid: fc.Arbitrary<Case> = fc
  .integer({ min: 0, max: ROUTES.length - 1 })
  .chain((index) => {
    const route = ROUTES[index] as Route
    return fc
      .record({
        path: route.path,
        body: route.body ?? fc.constant(undefined),
        signedIn: fc.boolean(),
        ip: fc.ipV4(),
      })
      .map((g): Case => {
        const headers: Record<string, string> = {
          [APP_ID_HEADER]: ctx.appId,
          [CLIENT_HEADER]: CLIENT_NAME,
          'x-forwarded-for': g.ip,
        }
        if (route.appSecret) headers.authorization = `Bearer ${ctx.appSecret}`
        else if (g.signedIn) headers.authorization = `Bearer ${ctx.token}`
        const prefix = route.root ? '' : API_PREFIX
        const req: WireRequest = { method: route.method, path: `${prefix}${g.path}`, headers }
        if (g.body !== undefined) {
          headers['content-type'] = 'application/json'
          req.body = Buffer.from(JSON.stringify(g.body))
        }
        return { route: index, req, note: 'near valid' }
      })
  })

const cases = fc.oneof({ weight: 3, arbitrary: wild }, { weight: 2, arbitrary: nearValid })

interface ErrorBody {
  error: { type: string; code: string; message: string }
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false
  const error = (value as { error?: unknown }).error
  if (typeof error !== 'object' || error === null) return false
  const { type, code, message } = error as Record<string, unknown>
  return typeof type === 'string' && typeof code === 'string' && typeof message === 'string'
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'))
  } catch {
    return undefined
  }
}

/** Why an outcome breaks the contract, or null when it keeps it. */
export function violation(req: WireRequest, outcome: WireOutcome): string | null {
  if (outcome.kind === 'dropped') return `connection dropped: ${outcome.error}`
  const { status, headers, body } = outcome.answer
  const frame = !req.path.startsWith(`${API_PREFIX}/`)
  // A server whose wallet frame is not built says so (a deployment state, not the input's).
  const notBuilt = frame && status === 503 && body.toString('utf8').includes('is not built')
  if (status >= 500 && !notBuilt)
    return `answered ${status}: ${body.toString('utf8').slice(0, 300)}`
  if (status < 200) return `answered ${status}`
  const head = req.method === 'HEAD'
  if (status >= 300 && status < 400) {
    // Only the OAuth callback redirects, back to the host page.
    if (!req.path.startsWith(`${API_PREFIX}/oauth/callback/`))
      return `redirect ${status} from ${req.path}`
    if (!headers.location) return `redirect ${status} without a location`
    return null
  }
  if (head || (req.method === 'OPTIONS' && status === 204)) return null
  const parsed = parseJson(body)
  if (status >= 400 && !notBuilt) {
    if (!isErrorBody(parsed))
      return `answered ${status} without the error body: ${body.toString('utf8').slice(0, 200)}`
    return null
  }
  // The user export streams JSON Lines: every line one JSON value.
  if (String(headers['content-type']).startsWith('application/x-ndjson')) {
    const lines = body.toString('utf8').split('\n').filter(Boolean)
    const bad = lines.find((line) => parseJson(Buffer.from(line)) === undefined)
    return bad === undefined ? null : `answered ${status} with a line that is not JSON: ${bad}`
  }
  // The wallet frame's page and assets are HTML, JavaScript and CSS.
  if (parsed === undefined && !frame) return `answered ${status} with a body that is not JSON`
  return null
}

/** A request in one short line for a failure message. */
function describe(req: WireRequest): string {
  const headers = Object.entries(req.headers)
    .map(([k, v]) => `${k}: ${v.length > 60 ? `${v.slice(0, 60)}…(${v.length})` : v}`)
    .join('; ')
  const body = req.body
    ? `${req.body.length} bytes ${JSON.stringify(req.body.subarray(0, 120).toString('latin1'))}`
    : 'no body'
  const path = req.path.length > 160 ? `${req.path.slice(0, 160)}…(${req.path.length})` : req.path
  return `${req.method} ${path} {${headers}} ${body}`
}

const figures = {
  requests: 0,
  byStatus: new Map<number, number>(),
  byNote: new Map<string, number>(),
  /** 2xx answers per route: how often a generated request got all the way through. */
  okByRoute: new Map<number, number>(),
}

test(`fuzz: ${RUNS} generated requests over every route never answer 5xx nor drop the connection (seed ${SEED})`, async () => {
  console.log(
    `[fuzz] seed ${SEED}, ${RUNS} runs, ${CONCURRENCY} at a time, on ${ON_POSTGRES ? 'PostgreSQL' : 'PGlite'} (LATCH_FUZZ_SEED=${SEED} replays this run)`,
  )
  const base = new URL(api.url)
  const failures: string[] = []
  const slowest: { ms: number; what: string }[] = []
  // The whole run is drawn from the seed up front, then sent CONCURRENCY at a time (parallel
  // requests find races a sequence cannot). No shrinking: the server's state moves on with
  // every request, so replaying the seed is the reproduction.
  const all = fc.sample(cases, { seed: SEED, numRuns: RUNS })
  let next = 0
  const worker = async () => {
    while (failures.length === 0 && next < all.length) {
      const index = next++
      const { route, req, note } = all[index] as Case
      const started = performance.now()
      const outcome = await send(base, req)
      slowest.push({
        ms: performance.now() - started,
        what: `${describe(req).slice(0, 200)} [${note}]`,
      })
      slowest.sort((a, b) => b.ms - a.ms).splice(3)
      figures.requests++
      figures.byNote.set(note, (figures.byNote.get(note) ?? 0) + 1)
      if (outcome.kind === 'answer') {
        const s = outcome.answer.status
        figures.byStatus.set(s, (figures.byStatus.get(s) ?? 0) + 1)
        if (s < 300) figures.okByRoute.set(route, (figures.okByRoute.get(route) ?? 0) + 1)
      }
      const why = violation(req, outcome)
      if (why !== null) failures.push(`case ${index}: ${describe(req)} [${note}]: ${why}`)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  if (failures.length > 0) throw new Error(`fuzz failed (seed ${SEED}): ${failures[0]}`)
  const statuses = [...figures.byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`)
  console.log(`[fuzz] ${figures.requests} requests; by status ${statuses.join(', ')}`)
  console.log(
    `[fuzz] 2xx by route ${[...figures.okByRoute]
      .sort(([x], [y]) => x - y)
      .map(([r, n]) => `${r}: ${n}`)
      .join(', ')}`,
  )
  console.log(`[fuzz] by body kind ${[...figures.byNote].map(([k, n]) => `${k}: ${n}`).join(', ')}`)
  console.log(
    `[fuzz] slowest: ${slowest.map((x) => `${Math.round(x.ms)} ms ${x.what}`).join('\n')}`,
  )
  expect(figures.requests).toBeGreaterThanOrEqual(Math.min(RUNS, 2_000))
  // Nothing reached the 500 handler, which logs every unexpected failure.
  expect(logs.filter((l) => l.includes(' failed: '))).toEqual([])
  // The server is alive and still serves a valid request.
  const alive = await fetch(`${api.url}${API_PREFIX}/apps/${ctx.appId}`)
  expect(alive.status).toBe(200)
}, 120_000)

/** The first answer in a raw byte stream: status and body (by Content-Length). */
function firstAnswer(text: string): { status: number; body: string } {
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0)
  const end = text.indexOf('\r\n\r\n')
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0)
  return { status, body: end < 0 ? '' : text.slice(end + 4, end + 4 + length) }
}

test('fuzz: broken HTTP framing on a raw socket answers 4xx with the error body and never fails the server', async () => {
  const base = new URL(api.url)
  const id = ctx.appId
  const h = `Host: 127.0.0.1\r\n${APP_ID_HEADER}: ${id}\r\n${CLIENT_HEADER}: ${CLIENT_NAME}\r\n`
  const json = 'Content-Type: application/json\r\n'
  const get = (rest: string) => `GET ${API_PREFIX}/apps/${id} HTTP/1.1\r\n${rest}`
  const post = (path: string, rest: string) => `POST ${API_PREFIX}${path} HTTP/1.1\r\n${h}${rest}`
  // [what, bytes, the first answer's status, whether the client ends its side after the bytes]
  const cases: [string, string, number, boolean?][] = [
    [
      'a Content-Length that is not a number',
      post('/sessions', 'Content-Length: abc\r\n\r\n{}'),
      400,
    ],
    ['a negative Content-Length', post('/sessions', 'Content-Length: -1\r\n\r\n{}'), 400],
    [
      'an overflowing Content-Length',
      post('/sessions', `Content-Length: ${'9'.repeat(20)}\r\n\r\n{}`),
      400,
    ],
    ['a declared body over the limit', post('/sessions', 'Content-Length: 1000000\r\n\r\n{}'), 413],
    // The body ends (the client half-closes) before its declared length: node aborts the request.
    [
      'a body shorter than its Content-Length',
      post('/sessions/fork/recover', `${json}Content-Length: 100\r\n\r\n{"refresh_token":"x"}`),
      400,
      true,
    ],
    [
      'a body longer than its Content-Length',
      post('/sessions/fork/recover', `${json}Content-Length: 5\r\n\r\n{"refresh_token":"x"}`),
      400,
    ],
    [
      'Content-Length and chunked together',
      post(
        '/sessions',
        'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      ),
      400,
    ],
    [
      'chunked garbage',
      post('/sessions', 'Transfer-Encoding: chunked\r\n\r\nZZZ\r\nhello\r\n0\r\n\r\n'),
      400,
    ],
    [
      'a truncated chunked body',
      post('/analytics_events', `${json}Transfer-Encoding: chunked\r\n\r\n40\r\n{"event_name":`),
      400,
      true,
    ],
    [
      'invalid UTF-8 in the body',
      post(
        '/sessions/fork/recover',
        `${json}Content-Length: 24\r\n\r\n{"refresh_token":"\xc3\x28\xff\xfe"}`,
      ),
      401,
    ],
    ['a NUL in a header', get('Host: x\r\nX-A: a\0b\r\n\r\n'), 400],
    ['an obsolete folded header', get('Host: x\r\nX-A: a\r\n b\r\n\r\n'), 400],
    ['bare LF line ends', `GET ${API_PREFIX}/apps/${id} HTTP/1.1\nHost: x\n\n`, 400],
    ['a garbage request line', 'GARBAGE\r\n\r\n', 400],
    ['an unknown method', `FOO ${API_PREFIX}/sessions HTTP/1.1\r\nHost: x\r\n\r\n`, 400],
    ['an unknown HTTP version', `GET ${API_PREFIX}/apps/${id} HTTP/9.9\r\nHost: x\r\n\r\n`, 400],
    ['an HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 400],
    ['an asterisk target', 'GET * HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    [
      'an absolute ftp: target',
      `GET ftp://evil.example${API_PREFIX}/apps/${id} HTTP/1.1\r\nHost: x\r\n\r\n`,
      400,
    ],
    ['a Host with spaces and dots', get('Host: a b/../\r\n\r\n'), 400],
    ['a backslash in the path', `GET ${API_PREFIX}/apps\\${id} HTTP/1.1\r\nHost: x\r\n\r\n`, 400],
    ['headers over 16 KB', get(`Host: x\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`), 431],
    [
      'a path over 16 KB',
      `GET ${API_PREFIX}/apps/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      431,
    ],
    [
      'an Expect other than 100-continue',
      post('/sessions', 'Expect: 200-ok\r\nContent-Length: 2\r\n\r\n{}'),
      417,
    ],
    [
      'garbage after pipelined requests',
      `${get('Host: x\r\n\r\n')}${get('Host: x\r\n\r\n')}\x01\x02garbage\r\n\r\n`,
      400,
    ],
    // Valid enough: HTTP/1.0 needs no Host, an absolute http: target names the path.
    ['HTTP/1.0 without Host', `GET ${API_PREFIX}/apps/${id} HTTP/1.0\r\n\r\n`, 200],
    [
      'an absolute http: target',
      `GET http://evil.example${API_PREFIX}/apps/${id} HTTP/1.1\r\nHost: x\r\n\r\n`,
      200,
    ],
    [
      'a WebSocket upgrade',
      get('Host: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'),
      200,
    ],
  ]
  const before = logs.length
  for (const [what, text, expected, halfClose] of cases) {
    const raw = await sendRaw(base, Buffer.from(text, 'latin1'), { halfClose: halfClose ?? false })
    expect(raw.error, what).toBeUndefined()
    const { status, body } = firstAnswer(raw.text)
    expect(status, `${what}: ${raw.text.slice(0, 200)}`).toBe(expected)
    for (const m of raw.text.matchAll(/HTTP\/1\.[01] (\d{3})/g))
      expect(Number(m[1]), what).toBeLessThan(500)
    if (status >= 400)
      expect(isErrorBody(parseJson(Buffer.from(body, 'latin1'))), `${what}: ${body}`).toBe(true)
  }
  // HEAD refused by the parser: the answer has no body, so the client reads no extra bytes.
  const head = await sendRaw(
    base,
    Buffer.from(
      `HEAD ${API_PREFIX}/apps/${id} HTTP/1.1\r\nHost: x\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`,
    ),
  )
  expect(head.status).toBe(431)
  expect(head.text.slice(head.text.indexOf('\r\n\r\n') + 4)).toBe('')
  // The handlers of the aborted requests did not fail (a 500 is logged with its stack).
  expect(logs.slice(before).filter((l) => l.includes(' failed: '))).toEqual([])
  expect((await fetch(`${api.url}${API_PREFIX}/apps/${ctx.appId}`)).status).toBe(200)
})

test('regression: text the database cannot store (a NUL, half a surrogate pair) is a 400, not a 500', async () => {
  // Found by the fuzz run above: each of these reached an insert and failed there.
  const post = (path: string, raw: string, type = 'application/json') =>
    send(new URL(api.url), {
      method: 'POST',
      path: `${API_PREFIX}${path}`,
      headers: {
        [APP_ID_HEADER]: ctx.appId,
        [CLIENT_HEADER]: CLIENT_NAME,
        'content-type': type,
        'x-forwarded-for': '198.51.100.7',
      },
      body: Buffer.from(raw),
    })
  const before = logs.length
  const cases: [string, string][] = [
    ['/analytics_events', '{"event_name":"modal_open","client_id":"a\\u0000b"}'],
    ['/analytics_events', '{"event_name":"modal_open","client_id":"c","payload":{"a":"x\\u0000"}}'],
    ['/analytics_events', '{"event_name":"modal_open","client_id":"c","payload":{"k\\u0000":1}}'],
    [
      '/analytics_events',
      '{"event_name":"modal_open","client_id":"c","payload":{"a":["\\udc00"]}}',
    ],
    ['/passwordless/init', '{"email":"a\\u0000@example.com"}'],
    ['/passwordless_sms/init', '{"phoneNumber":"+1415555\\u00000100"}'],
    ['/oauth/authenticate', '{"authorization_code":"x","state_code":"s\\u0000"}'],
  ]
  for (const [path, raw] of cases) {
    const outcome = await post(path, raw)
    expect(outcome.kind, `${path} ${raw}`).toBe('answer')
    if (outcome.kind !== 'answer') continue
    expect(outcome.answer.status, `${path} ${raw}`).toBe(400)
    const body = parseJson(outcome.answer.body)
    expect(isErrorBody(body) && body.error.code, `${path} ${raw}`).toBe('invalid_data')
  }
  // A pair that makes one character is text like any other.
  const paired = await post(
    '/analytics_events',
    '{"event_name":"modal_open","client_id":"c","payload":{"emoji":"\\ud83d\\ude00"}}',
  )
  expect(paired.kind === 'answer' && paired.answer.status).toBe(200)
  // The OAuth callback reads a form, not JSON: a NUL in its state is an unknown state.
  const callback = await post(
    '/oauth/callback/github',
    'state=a%00b&code=x',
    'application/x-www-form-urlencoded',
  )
  expect(callback.kind === 'answer' && callback.answer.status).toBe(400)
  expect(logs.slice(before).filter((l) => l.includes(' failed: '))).toEqual([])
})
